// The JSON-RPC method table, derived from the catalog (api/catalog/): each method's params
// are checked against the schema the catalog declares (param-validation.ts), then its
// declared handler runs one analytics call. rpc.discover answers the OpenRPC document of
// the same catalog. No SQL here.
import { AppError, Errors, worded, type Wording } from '../../core/errors.ts';
import type { Budget } from '../../core/budget.ts';
import type { Analytics } from '../analytics/analytics.ts';
import { CATALOG, rpcMethodsOf, type Operation, type RpcMethod } from '../catalog/catalog.ts';
import type { ParamsCheck } from '../catalog/declare.ts';
import type { MethodTable } from './json-rpc.ts';
import { openRpcDocument, RPC_DISCOVER, type OpenRpcDocument } from './openrpc.ts';
import { paramsChecks } from './param-validation.ts';

/**
 * How JSON-RPC words the analytics layer's logical parameters: each method's options
 * object names them (a list of protocols is `options.protocols` for a comparison and
 * `options.filters.protocols` for a listing).
 */
function wordingFor(method: string): Wording {
  const listing = method === 'getTransactions' || method === 'getTransactionsForAddress';
  return {
    params: {
      protocol: 'options.protocolName',
      protocols: listing ? 'options.filters.protocols' : 'options.protocols',
      range: 'blockTime',
      cursor: 'paginationToken',
      order: 'sortOrder',
    },
    hints: { protocols: 'getProtocols lists the available ones', coarserBucket: 'interval "day"' },
  };
}

/** The methods as the envelope layer sees them: look up, validate, run. */
export class RpcMethods {
  private readonly methods: ReadonlyMap<string, { m: RpcMethod; check: ParamsCheck }>;
  private readonly document: OpenRpcDocument;

  constructor(private readonly analytics: Analytics, catalog: readonly Operation[] = CATALOG) {
    const methods = rpcMethodsOf(catalog);
    const checks = paramsChecks(methods.values());
    this.methods = new Map([...methods].map(([name, m]) => [name, { m, check: checks.get(name)! }]));
    this.document = openRpcDocument(catalog);
  }

  /** The OpenRPC document of this method table's catalog. */
  get openRpc(): OpenRpcDocument {
    return this.document;
  }

  has(name: string): boolean {
    return name === RPC_DISCOVER || this.methods.has(name);
  }

  /** The table for one request: every method asks the analytics layer under `budget` (null: refused). */
  under(budget: Budget | null): MethodTable {
    const analytics = this.analytics.under(budget);
    return { has: (name) => this.has(name), call: (name, params) => this.call(name, params, analytics) };
  }

  private async call(name: string, params: readonly unknown[], analytics: Analytics): Promise<unknown> {
    if (name === RPC_DISCOVER) {
      if (params.length > 0) throw new AppError(Errors.invalidParams, `${RPC_DISCOVER} takes no parameters`, { field: 'params' });
      return this.document;
    }
    const entry = this.methods.get(name);
    if (!entry) throw new Error(`unknown method ${name}`);
    // Validation speaks JSON-RPC's names already; only what the analytics layer throws
    // after it (logical keys) is worded for this method.
    let validated = false;
    const door: ParamsCheck = entry.check;
    const check: ParamsCheck = (schema, p) => {
      door(schema, p);
      validated = true;
    };
    try {
      return await entry.m.call(analytics, params, check);
    } catch (err) {
      throw validated ? worded(err, wordingFor(name)) : err;
    }
  }
}
