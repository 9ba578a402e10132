// The result of each JSON-RPC method as JSON Schema, built from the vocabulary's answer
// shapes: the fuzzer checks every result against it, and docs/json-rpc.md describes the same.
import { Type, type TSchema } from '@sinclair/typebox';
import {
  ActivityBucket,
  FailedTransaction,
  InstructionTypeStats,
  ProtocolComparisonItem,
  ProtocolPerformance,
  ProtocolStats,
  TopProtocol,
  Transaction,
} from '../../core/vocabulary/answers.ts';
import type { MethodName } from './param-schemas.ts';

const closed = { additionalProperties: false } as const;
/** A page of a keyset listing: pass paginationToken back for the next page (null on the last). */
const page = (item: TSchema) => Type.Object({ data: Type.Array(item), paginationToken: Type.Union([Type.String(), Type.Null()]) }, closed);
/** transactionDetails "signatures": the signature-level fields, as getSignaturesForAddress gives. */
export const SignatureInfo = Type.Pick(Transaction, ['signature', 'slot', 'blockTime', 'success'], closed);
const strict = <T extends TSchema>(s: T): T => ({ ...s, additionalProperties: false });

export const RESULT_SCHEMAS: Readonly<Record<MethodName, TSchema>> = {
  getTransaction: Type.Union([strict(Transaction), Type.Null()]),
  getTransactions: page(strict(Transaction)),
  getTransactionsForAddress: Type.Union([
    page(strict(Transaction)),
    page(SignatureInfo),
    // transactionDetails "none": only how many records match.
    Type.Object({ data: Type.Array(Type.Never(), { maxItems: 0 }), paginationToken: Type.Null(), count: Type.Integer({ minimum: 0 }) }, closed),
  ]),
  getProtocolStats: strict(ProtocolStats),
  getProtocolComparison: Type.Array(strict(ProtocolComparisonItem)),
  getProtocolPerformance: strict(ProtocolPerformance),
  getTopProtocols: Type.Array(strict(TopProtocol)),
  getProtocolActivity: Type.Array(strict(ActivityBucket)),
  getInstructionTypes: Type.Array(strict(InstructionTypeStats)),
  getFailedTransactions: Type.Object({ data: Type.Array(strict(FailedTransaction)) }, closed),
  getProtocols: Type.Array(Type.String()),
};
