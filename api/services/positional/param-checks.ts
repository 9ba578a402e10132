// Validating params as the JSON-RPC door would, outside a call (tests of the catalog's
// schemas); the checks themselves are positional-calls.ts's, where a call runs them.
import { CATALOG, rpcMethodsOf } from '../../catalog/catalog.ts';
import type { ParamsCheck } from '../../catalog/declare.ts';
import { paramsChecks } from './positional-calls.ts';

/** The service catalog's methods and their checks, for validateParams. */
const CATALOG_METHODS = rpcMethodsOf(CATALOG);
const CATALOG_CHECKS = paramsChecks(CATALOG_METHODS.values());

/** Validate `params` for the catalog's method `method`; throws as the door would. */
export function validateParams(method: string, params: readonly unknown[]): void {
  const m = CATALOG_METHODS.get(method);
  const found = CATALOG_CHECKS.get(method);
  if (!m || !found) throw new Error(`no params schema for ${method}`);
  const check: ParamsCheck = found;
  check(m.schema, params);
}
