// The catalog: every SPEC operation the analytics layer answers, declared once
// (declare.ts says how). The doors are derived from it: JSON-RPC dispatch and params
// validation (api/doors/rpc/), the OpenRPC document (api/doors/rpc/openrpc.ts), REST routes (built from
// each operation's REST data by api/doors/rest/) and so the OpenAPI document, and the GraphQL field each maps to. A door takes the
// catalog as an argument, so a test can build every door from a catalog of its own.
import type { Operation, RpcMethod } from './declare.ts';
import {
  globalStats,
  feeStats,
  instructionTypes,
  protocolActivity,
  protocolComparison,
  protocolPerformance,
  protocols,
  protocolStats,
  protocolStatsList,
  queryComplexity,
  topProtocols,
} from './protocols.ts';
import { addressTransactions, failedTransactions, transaction, transactions } from './transactions.ts';

export type { Operation, RestDoor, RpcMethod } from './declare.ts';

/** In SPEC's order of the JSON-RPC method table, then the REST-only and GraphQL-only ones. */
/** The service-discovery method of OpenRPC, answered by the JSON-RPC door beside the catalog's methods. */
export const RPC_DISCOVER = 'rpc.discover';

export const CATALOG: readonly Operation[] = Object.freeze([
  transaction,
  transactions,
  addressTransactions,
  protocolStats,
  protocolStatsList,
  protocolComparison,
  protocolPerformance,
  topProtocols,
  protocolActivity,
  instructionTypes,
  failedTransactions,
  protocols,
  feeStats,
  globalStats,
  queryComplexity,
]);

/** The JSON-RPC methods of a catalog, by method name. */
export function rpcMethodsOf(catalog: readonly Operation[]): ReadonlyMap<string, RpcMethod> {
  return new Map(catalog.flatMap((op) => (op.rpc ? [[op.rpc.method, op.rpc] as const] : [])));
}

/**
 * The OpenAPI operationId of an operation's REST route: its JSON-RPC method's name when it has
 * one (the same question has the same name on both doors: getTransactions, getProtocolStats),
 * else `get` and the catalog's name (getFeeStats, getGlobalStats). Stable: it changes only
 * when the catalog renames the operation, and generated clients name their calls by it.
 */
export const operationIdOf = (op: Operation): string => op.rpc?.method ?? `get${op.name[0]!.toUpperCase()}${op.name.slice(1)}`;

/** The JSON-RPC method names of the service's catalog (usage labels, the method table). */
export const RPC_METHOD_NAMES: readonly string[] = Object.freeze([...rpcMethodsOf(CATALOG).keys()]);
