// The JSON-RPC method table: the catalog's methods (api/catalog/method-calls.ts checks
// their params against the declared schemas and runs their handlers), plus rpc.discover,
// which answers the OpenRPC document of the same catalog. No SQL here.
import { AppError, Errors } from '../../core/errors.ts';
import type { Budget } from '../../core/budget.ts';
import type { Analytics } from '../analytics/analytics.ts';
import { CATALOG, type Operation } from '../catalog/catalog.ts';
import { CatalogMethods } from '../catalog/method-calls.ts';
import type { MethodTable } from './json-rpc.ts';
import { openRpcDocument, RPC_DISCOVER, type OpenRpcDocument } from './openrpc.ts';

/** The methods as the envelope layer sees them: look up, validate, run. */
export class RpcMethods {
  private readonly methods: CatalogMethods;
  private readonly document: OpenRpcDocument;

  constructor(private readonly analytics: Analytics, catalog: readonly Operation[] = CATALOG) {
    this.methods = new CatalogMethods(catalog);
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
    return this.methods.call(analytics, name, params);
  }
}
