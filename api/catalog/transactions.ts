// The catalog's record-level operations: one transaction, listings, records of an address,
// failed transactions. Each is declared once; its doors are derived (api/catalog/catalog.ts).
import { Type, type TSchema } from '@sinclair/typebox';
import { request, type CheckedRequest } from '../../core/request-check.ts';
import { issued, sumAtMost } from '../../core/request-rules.ts';
import { declared } from './declared.ts';
import { LIST_LIMITS, REST_OFFSET_WINDOW } from '../../core/limits/questions.ts';
import { AddressTransaction, FailedTransaction, Transaction } from '../../core/vocabulary/answers.ts';
import { Int64, pathParam } from '../../core/vocabulary/primitives.ts';
import type { TransactionFilters } from '../analytics/types.ts';
import { optional, required, stringEnum, withDefault, type Operation } from './declare.ts';
import {
  Address,
  AddressFilters,
  blockTime,
  Filters,
  instructionTypesFilter,
  limit,
  listingFilters,
  listingOptions,
  options,
  ProtocolName,
  query,
  Signature,
  sortOrder,
  strict,
} from './params.ts';

const closed = { additionalProperties: false } as const;
/** A call priced as a listing window. */
const LISTING = { requests: 1, question: 'listing' } as const;
/** A page of a keyset listing: pass paginationToken back for the next page (null on the last). */
const page = <T extends TSchema>(item: T) => Type.Object({ data: Type.Array(item), paginationToken: Type.Union([Type.String(), Type.Null()]) }, closed);
/** transactionDetails "signatures": the signature-level fields, as getSignaturesForAddress gives, and the instruction's index. */
export const SignatureInfo = Type.Pick(AddressTransaction, ['signature', 'instructionIndex', 'slot', 'blockTime', 'success'], closed);

const TransactionsOptions = options({ ...listingOptions('desc'), filters: Type.Optional(Filters) }, 'getTransactions options');
const AddressOptions = options(
  {
    ...listingOptions('asc'),
    transactionDetails: withDefault(stringEnum(['full', 'signatures', 'none'], 'full, signatures or none (default full)', 'TransactionDetails'), 'full'),
    filters: Type.Optional(AddressFilters),
  },
  'getTransactionsForAddress options',
);
/** getFailedTransactions' request, door-neutral (declared.ts: `protocol` is protocolName, `range` blockTime). */
const FailedRequest = options(
  {
    protocol: Type.Optional(ProtocolName),
    programId: Type.Optional(Address),
    limit: limit(LIST_LIMITS.failedTransactions),
    range: blockTime,
  },
  'getFailedTransactions options',
);

export const transaction: Operation = declared({
  name: 'transaction',
  summary: 'One transaction by signature: the record of lowest instruction index, or null (REST: 404) when absent',
  preset: 'transaction',
  request: request(options({ signature: Signature }, 'getTransaction request'), 'narrow'),
  result: Type.Union([strict(Transaction), Type.Null()]),
  doors: { rpc: 'getTransaction', rest: '/transactions/:signature', graphqlPeer: 'signature' },
  rpcPositional: 'signature',
  rpcWords: 'Transaction signature, Base58',
  restWords: {
    summary: 'One transaction by signature',
    description: 'The record of lowest instruction index for the signature (JSON-RPC getTransaction). 404 when absent.',
    result: Transaction,
    resultWords: 'The transaction',
    fields: { signature: { name: 'signature', schema: pathParam(query.signature) } },
    notFound: (c) => `no transaction with signature "${c.signature}"`,
  },
  answer: (a, c) => a.transaction(c.signature),
});

/** A listing's request: its filters at the top (listingFilters), then its page and order. */
const TransactionsRequest = options(
  {
    ...listingFilters,
    instructionTypes: instructionTypesFilter,
    sortOrder: sortOrder('desc'),
    limit: limit(LIST_LIMITS.transactions),
    // REST pages by offset within a window, or by the cursor; JSON-RPC by the cursor alone.
    offset: query.offset,
    cursor: Type.Optional(query.cursor),
  },
  'getTransactions request',
);
const AddressRequest = options(
  {
    address: Address,
    ...listingFilters,
    transactionDetails: AddressOptions.properties.transactionDetails,
    sortOrder: sortOrder('asc'),
    limit: limit(LIST_LIMITS.transactions),
    cursor: Type.Optional(query.cursor),
  },
  'getTransactionsForAddress request',
);

/** The request fields JSON-RPC's listing options hold in their `filters` object (`range` as blockTime). */
const FILTERED = ['protocols', 'programIds', 'signatures', 'status', 'instructionTypes'] as const;

/** JSON-RPC's listing options (SPEC: `{sortOrder, limit, paginationToken, filters}`) as the request's fields. */
function listingValues(o: unknown): Record<string, unknown> {
  const opts = (o ?? {}) as { filters?: Record<string, unknown> | null; sortOrder?: string; limit?: number; paginationToken?: string };
  const f = opts.filters ?? {};
  return {
    ...Object.fromEntries(FILTERED.map((k) => [k, f[k]])),
    range: f.blockTime,
    sortOrder: opts.sortOrder,
    limit: opts.limit,
    cursor: opts.paginationToken,
  };
}

/** A request path as JSON-RPC's listing options name it (`range` is options.filters.blockTime). */
function listingName(path: string): string {
  const [head = '', ...rest] = path.split('.');
  const top: Record<string, string> = { range: 'filters.blockTime', cursor: 'paginationToken', sortOrder: 'sortOrder', limit: 'limit', address: 'address' };
  const name = top[head] ?? `filters.${head}`;
  return [head === 'address' ? name : `options.${name}`, ...rest].join('.');
}

/** The listing's filters from a checked request: the protocols as asked (a cursor is bound to them), the range in seconds. */
function filtersOf(c: CheckedRequest<typeof TransactionsRequest> | CheckedRequest<typeof AddressRequest>): TransactionFilters {
  const given = <K extends string, V>(k: K, v: V | undefined) => (v === undefined ? {} : ({ [k]: v } as Record<K, V>));
  const range = c.range.gte !== undefined || c.range.lte !== undefined ? c.range : undefined;
  return {
    ...given('range', range),
    ...given('status', c.status),
    ...given('protocols', c.protocolsAsked === undefined ? undefined : [...c.protocolsAsked]),
    ...given('programIds', c.programIds),
    ...given('signatures', c.signatures),
    ...given('instructionTypes', 'instructionTypes' in c ? c.instructionTypes : undefined),
  };
}

export const transactions: Operation = declared({
  name: 'transactions',
  summary: 'List transactions with filters, in block-time order',
  preset: 'transactions',
  cost: LISTING,
  // 'known': each protocol of the filter must be active, on every door (REST's protocol_name too).
  request: request(TransactionsRequest, 'known', [
    sumAtMost('offset', 'limit', REST_OFFSET_WINDOW, 'to page further, drop offset and pass the meta.next of each page as cursor (it reaches every record)'),
    // A cursor only the server mints (and never together with an offset).
    issued('cursor', 'meta.next', 'offset', 'the cursor already says where the page starts'),
  ]),
  result: page(strict(Transaction)),
  doors: { rpc: 'getTransactions', rest: '/transactions', graphqlPeer: 'transactions' },
  rpcShape: {
    params: [optional('options', TransactionsOptions, 'Listing options: sortOrder, limit, paginationToken, filters')],
    values: ([o]) => listingValues(o),
    nameOf: listingName,
  },
  restWords: {
    summary: 'List transactions',
    description:
      'Instruction records, newest first (block time, then signature, then instruction index). ' +
      'Equals JSON-RPC getTransactions with sortOrder desc and the same filters. ' +
      `offset + limit may reach ${REST_OFFSET_WINDOW}; to walk further (any day, any size), pass meta.next back as cursor. ` +
      'The cursor is the JSON-RPC paginationToken of getTransactions (sortOrder desc, same filters): one signed codec for every door.',
    result: Type.Array(Transaction),
    resultWords: 'A page of transactions',
    fields: {
      protocols: { name: 'protocol_name', schema: query.protocol_name },
      programIds: { name: 'program_id', schema: query.program_id },
      signatures: { name: 'signature', schema: query.signature },
      limit: { name: 'limit', schema: query.limit },
    },
    omit: ['status', 'instructionTypes', 'sortOrder'],
    // The envelope holds the page's records, meta.next its token and meta.total every match's count (api/doors/rest/declared-routes.ts).
    page: true,
    meta: ['limit', 'offset', 'protocols', 'range'],
  },
  async answer(a, c) {
    // One keyset page as deep as offset + limit (a REST page equals the JSON-RPC answer's slice),
    // or the keyset page after the cursor. Either way the next cursor resumes after its last row.
    const offset = c.offset ?? 0;
    const p = await a.transactions({
      filters: filtersOf(c),
      sortOrder: c.sortOrder ?? 'desc',
      limit: offset + (c.limit ?? LIST_LIMITS.transactions.default),
      cursor: c.cursor,
    });
    return { data: p.data.slice(offset), paginationToken: p.next };
  },
});

export const addressTransactions: Operation = declared({
  name: 'addressTransactions',
  summary: 'Transactions touching an address (one of its accounts, or its program id)',
  preset: 'addressTransactions',
  cost: LISTING,
  request: request(AddressRequest, 'known'),
  result: Type.Union([
    page(strict(AddressTransaction)),
    page(SignatureInfo),
    // transactionDetails "none": only how many records match.
    Type.Object({ data: Type.Array(Type.Never(), { maxItems: 0 }), paginationToken: Type.Null(), count: Int64({ minimum: 0 }) }, closed),
  ]),
  doors: { rpc: 'getTransactionsForAddress' },
  rpcShape: {
    params: [
      required('address', Address, 'Account or program address, Base58'),
      optional('options', AddressOptions, 'Listing options: transactionDetails, sortOrder, limit, paginationToken, filters'),
    ],
    values: ([address, o]) => ({
      address,
      ...listingValues(o),
      transactionDetails: (o as { transactionDetails?: string } | null | undefined)?.transactionDetails,
    }),
    nameOf: listingName,
  },
  async answer(a, c) {
    const req = { address: c.address, filters: filtersOf(c), sortOrder: c.sortOrder ?? 'asc', limit: c.limit ?? LIST_LIMITS.transactions.default };
    if (c.transactionDetails === 'none') {
      // No per-record details: only how many records match (limit and paging do not apply,
      // but a token sent along must still be one this listing issued).
      if (c.cursor !== undefined) a.checkAddressToken({ ...req, limit: 1, cursor: c.cursor });
      return { data: [], paginationToken: null, count: await a.addressTransactionCount(c.address, req.filters) };
    }
    const p = await a.addressTransactions({ ...req, cursor: c.cursor });
    if (c.transactionDetails === 'signatures') {
      return {
        data: p.data.map(({ signature, instructionIndex, slot, blockTime, success }) => ({ signature, instructionIndex, slot, blockTime, success })),
        paginationToken: p.next,
      };
    }
    return { data: p.data, paginationToken: p.next };
  },
});

export const failedTransactions: Operation = declared({
  name: 'failedTransactions',
  summary: 'Failed transactions with their error message, logs and raw data, newest first',
  preset: 'failedTransactions',
  cost: LISTING,
  request: request(FailedRequest, 'one'),
  result: Type.Object({ data: Type.Array(strict(FailedTransaction)) }, closed),
  doors: { rpc: 'getFailedTransactions', graphqlPeer: 'failedTransactions' },
  rpcWords: 'protocolName, programId, limit, blockTime',
  answer: async (a, c) => ({
    data: await a.failedTransactions({
      protocolName: c.protocol,
      programId: c.programId,
      range: c.range,
      limit: c.limit ?? LIST_LIMITS.failedTransactions.default,
    }),
  }),
});
