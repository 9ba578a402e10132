// Calling the catalog's methods by name: params checked against the schema the catalog
// declares (param-checks.ts), the declared handler run, and what the analytics layer throws
// after validation worded with the method's own parameter names. Every door that offers
// the methods as such (JSON-RPC's method table, MCP's tools) calls them through here, so
// an answer and an error read the same on each.
import { worded, type Wording } from '../../core/errors.ts';
import type { Analytics } from '../analytics/analytics.ts';
import { CATALOG, rpcMethodsOf, type Operation, type RpcMethod } from './catalog.ts';
import type { ParamsCheck } from './declare.ts';
import { paramsChecks } from './param-checks.ts';

/**
 * How a method's callers see the analytics layer's logical parameters: each method's
 * options object names them (a list of protocols is `options.protocols` for a comparison
 * and `options.filters.protocols` for a listing); getProtocols lists the protocols.
 */
export function methodWording(method: string): Wording {
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

/** The catalog's methods, by name: look up, validate, run. */
export class CatalogMethods {
  private readonly methods: ReadonlyMap<string, { m: RpcMethod; check: ParamsCheck }>;

  constructor(catalog: readonly Operation[] = CATALOG) {
    const methods = rpcMethodsOf(catalog);
    const checks = paramsChecks(methods.values());
    this.methods = new Map([...methods].map(([name, m]) => [name, { m, check: checks.get(name)! }]));
  }

  has(name: string): boolean {
    return this.methods.has(name);
  }

  /** The declared methods, in the catalog's order. */
  list(): RpcMethod[] {
    return [...this.methods.values()].map((e) => e.m);
  }

  /** Run `name` with its positional `params` on `analytics` (the asking request's view, under its
   *  budget); throws the door-neutral AppError of a bad param or a failed read. */
  async call(analytics: Analytics, name: string, params: readonly unknown[]): Promise<unknown> {
    const entry = this.methods.get(name);
    if (!entry) throw new Error(`unknown method ${name}`);
    // Validation words its errors with the positions' names already; only what the
    // analytics layer throws after it (logical keys) is worded for this method.
    let validated = false;
    const door: ParamsCheck = entry.check;
    const check: ParamsCheck = (schema, p) => {
      door(schema, p);
      validated = true;
    };
    try {
      return await entry.m.call(analytics, params, check);
    } catch (err) {
      throw validated ? worded(err, methodWording(name)) : err;
    }
  }
}
