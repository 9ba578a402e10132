// JSON-RPC error objects, always derived from the one error catalog (core/errors.ts), so
// codes and messages match the other interfaces. `data` is always a string (SPEC).
import { AppError, Errors, type ErrorKind } from '../../../core/errors.ts';

export interface RpcErrorObject {
  code: number;
  message: string;
  data: string;
}

export const rpcError = (kind: ErrorKind, data: string): RpcErrorObject => ({ code: kind.rpc, message: kind.rpcMessage, data });

export const invalidRequest = (data: string): RpcErrorObject => rpcError(Errors.invalidRequest, data);
export const parseError = (data: string): RpcErrorObject => rpcError(Errors.parseError, data);
export const methodNotFound = (data: string): RpcErrorObject => rpcError(Errors.methodNotFound, data);

/**
 * The error object for anything a method threw. An AppError's message was written for
 * clients; anything else is an internal failure whose details stay in the server log,
 * and the client gets only a reference to find that log line.
 */
export function toRpcError(err: unknown, reference: string): { error: RpcErrorObject; internal: boolean } {
  if (err instanceof AppError && err.kind !== Errors.internal) return { error: rpcError(err.kind, err.message), internal: false };
  return {
    error: rpcError(Errors.internal, `the server could not complete this call; reference ${reference}`),
    internal: true,
  };
}
