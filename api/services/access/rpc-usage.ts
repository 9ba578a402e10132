// What a JSON-RPC body counts for before its calls run: its usage labels (each call's method,
// from the method table's bounded vocabulary) and the requests it counts against the rate limit.
import { RPC_MAX_BATCH } from '../../../core/limits/batches.ts';
import { RPC_DISCOVER, RPC_METHOD_NAMES as CATALOG_RPC_METHODS } from '../../catalog/catalog.ts';

/** The usage label of every JSON-RPC call that names no method of the method table. */
export const UNKNOWN_RPC_METHOD = '(unknown)';

const RPC_METHOD_NAMES: ReadonlySet<string> = new Set([...CATALOG_RPC_METHODS, RPC_DISCOVER]);

/** The usage label of a call's method: the method's name when it is one of the method
 *  table's, else UNKNOWN_RPC_METHOD, so invented names cannot fill the usage table. */
export const rpcUsageMethod = (method: unknown): string => (typeof method === 'string' && RPC_METHOD_NAMES.has(method) ? method : UNKNOWN_RPC_METHOD);

/** Usage labels of a parsed JSON-RPC body that was refused before any call ran (a batch
 *  over the rate limit): one per call that would have been answered (notifications, calls
 *  without an id, never are), or one for a batch refused whole (see rpcCallCount). */
export function rpcUsageMethods(body: unknown): string[] {
  if (!Array.isArray(body) || body.length === 0 || body.length > RPC_MAX_BATCH) {
    return [rpcUsageMethod(Array.isArray(body) ? undefined : (body as { method?: unknown } | null)?.method)];
  }
  return body
    .filter((c) => !(typeof c === 'object' && c !== null && !Array.isArray(c) && !Object.hasOwn(c, 'id')))
    .map((c) => rpcUsageMethod(typeof c === 'object' && c !== null ? (c as { method?: unknown }).method : undefined));
}

/**
 * How many requests a parsed JSON-RPC body counts for against the rate limit: each call of
 * a batch counts, but a batch refused as a whole (empty, or more than RPC_MAX_BATCH calls)
 * runs no call and counts once, like any other refused request.
 */
export function rpcCallCount(body: unknown): number {
  if (!Array.isArray(body)) return 1;
  return body.length === 0 || body.length > RPC_MAX_BATCH ? 1 : body.length;
}
