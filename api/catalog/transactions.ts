// The catalog's record-level operations: one transaction, listings, records of an address,
// failed transactions. Each is declared once; its doors are derived (api/catalog/catalog.ts).
import { Type, type TSchema } from '@sinclair/typebox';
import { request } from '../../core/request-check.ts';
import { declared } from './declared.ts';
import { LIST_LIMITS } from '../../core/limits.ts';
import { AddressTransaction, FailedTransaction, Transaction } from '../../core/vocabulary/answers.ts';
import { Int64, pathParam } from '../../core/vocabulary/primitives.ts';
import { operation, optional, required, rpcMethod, stringEnum, withDefault, type Operation } from './declare.ts';
import { Address, AddressFilters, blockTime, Filters, limit, listingOptions, options, ProtocolName, query, Signature, strict } from './params.ts';

const closed = { additionalProperties: false } as const;
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

export const transactions: Operation = {
  ...operation('transactions', 'listing', 'List transactions with filters, in block-time order', { graphql: 'transactions' }),
  rpc: rpcMethod({
    method: 'getTransactions',
    params: [optional('options', TransactionsOptions, 'Listing options: sortOrder, limit, paginationToken, filters')],
    result: page(strict(Transaction)),
    async run(a, [o]) {
      // 'known': each protocol of the filter must be active (resolved once, by the facade).
      const p = await a.transactions({ filters: o.filters ?? {}, sortOrder: o.sortOrder, limit: o.limit, cursor: o.paginationToken }, 'known');
      return { data: p.data, paginationToken: p.next };
    },
  }),
  // The route and its handler: api/rest/hand-routes.ts.
  rest: { url: '/transactions' },
};

export const addressTransactions: Operation = {
  ...operation('addressTransactions', 'listing', 'Transactions touching an address (one of its accounts, or its program id)'),
  rpc: rpcMethod({
    method: 'getTransactionsForAddress',
    params: [
      required('address', Address, 'Account or program address, Base58'),
      optional('options', AddressOptions, 'Listing options: transactionDetails, sortOrder, limit, paginationToken, filters'),
    ],
    result: Type.Union([
      page(strict(AddressTransaction)),
      page(SignatureInfo),
      // transactionDetails "none": only how many records match.
      Type.Object({ data: Type.Array(Type.Never(), { maxItems: 0 }), paginationToken: Type.Null(), count: Int64({ minimum: 0 }) }, closed),
    ]),
    async run(a, [address, o]) {
      const filters = o.filters ?? {};
      if (o.transactionDetails === 'none') {
        // No per-record details: only how many records match (limit and paging do not apply,
        // but a token sent along must still be one this listing issued).
        if (o.paginationToken !== undefined) a.checkAddressToken({ address, filters, sortOrder: o.sortOrder, limit: 1, cursor: o.paginationToken });
        return { data: [], paginationToken: null, count: await a.addressTransactionCount(address, filters, 'known') };
      }
      const p = await a.addressTransactions({ address, filters, sortOrder: o.sortOrder, limit: o.limit, cursor: o.paginationToken }, 'known');
      if (o.transactionDetails === 'full') return { data: p.data, paginationToken: p.next };
      return {
        data: p.data.map(({ signature, instructionIndex, slot, blockTime, success }) => ({ signature, instructionIndex, slot, blockTime, success })),
        paginationToken: p.next,
      };
    },
  }),
};

export const failedTransactions: Operation = declared({
  name: 'failedTransactions',
  summary: 'Failed transactions with their error message, logs and raw data, newest first',
  preset: 'failedTransactions',
  cost: { requests: 1, question: 'listing' },
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
