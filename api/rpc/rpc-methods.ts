// The JSON-RPC method table: the catalog's methods (api/catalog/method-calls.ts checks
// their params against the declared schemas and runs their handlers), plus rpc.discover,
// which answers the OpenRPC document of the same catalog. No SQL here.
import { AppError, Errors } from '../../core/errors.ts';
import type { Analytics } from '../analytics/analytics.ts';
import { CATALOG, type Operation } from '../catalog/catalog.ts';
import { CatalogMethods } from '../catalog/method-calls.ts';
import { openRpcDocument, RPC_DISCOVER, type OpenRpcDocument } from './openrpc.ts';

/** The methods as the envelope layer sees them: look up, validate, run. */
export class RpcMethods {
  private readonly methods: CatalogMethods;
  private readonly document: OpenRpcDocument;

  constructor(analytics: Analytics, catalog: readonly Operation[] = CATALOG) {
    this.methods = new CatalogMethods(analytics, catalog);
    this.document = openRpcDocument(catalog);
  }

  /** The OpenRPC document of this method table's catalog. */
  get openRpc(): OpenRpcDocument {
    return this.document;
  }

  has(name: string): boolean {
    return name === RPC_DISCOVER || this.methods.has(name);
  }

  async call(name: string, params: readonly unknown[]): Promise<unknown> {
    if (name === RPC_DISCOVER) {
      if (params.length > 0) throw new AppError(Errors.invalidParams, `${RPC_DISCOVER} takes no parameters`, { field: 'params' });
      return this.document;
    }
    return this.methods.call(name, params);
  }
}
