// REST routes written by hand, for the operations not declared by their request yet (their
// data in the catalog: api/catalog/protocols.ts, transactions.ts): the fee statistics, the
// global statistics and the transaction listing (its offset window and cursor, its total).
// Keyed by the catalog's name of the operation each serves.
import { Type } from '@sinclair/typebox';
import { issued, sumAtMost } from '../../core/request-check.ts';
import { REST_OFFSET_WINDOW } from '../../core/limits.ts';
import { GlobalStats, Transaction } from '../../core/vocabulary/answers.ts';
import type { TransactionFilters } from '../analytics/types.ts';
import { filled } from '../catalog/declare.ts';
import { dayRangeQuery, query } from '../catalog/params.ts';
import { dayRange, rangeMeta } from './rest-params.ts';
import { restGet, type RestRoute } from './rest-route.ts';
import { DAYS_IN_ORDER, envelope, errors, FeeAnswer, ok } from './rest-schemas.ts';

const feeStats = restGet({
  url: '/analytics/fees',
  schema: {
    summary: 'Fee statistics',
    description:
      'Total, average, minimum, maximum and p50/p95/p99 of fees in lamports, for one protocol or all ' +
      'protocols together, plus the same per protocol. Percentiles come from mergeable t-digest sketches (approximate).',
    querystring: Type.Object({ protocol_name: Type.Optional(query.protocol_name), ...dayRangeQuery }),
    response: { 200: envelope(FeeAnswer, 'Fee statistics'), ...errors(400, 401, 403, 429) },
  },
  rules: [DAYS_IN_ORDER],
  async run(a, req) {
    const days = dayRange(req.query);
    const { overall, protocols: per } = await a.feeStats(req.query.protocol_name, days.range);
    return ok({ ...overall, protocols: per }, { count: 1, protocolName: req.query.protocol_name ?? null, ...rangeMeta(days) });
  },
});

const globalStats = restGet({
  url: '/stats',
  schema: {
    summary: 'Global statistics',
    description:
      'Totals, success and failure, per-protocol counts, first and last block time, latest slot over the ' +
      'active protocols (from the hourly view), and storage size per table (system.parts). Never scans the base table.',
    response: { 200: envelope(GlobalStats, 'Global statistics'), ...errors(401, 403, 429) },
  },
  run: async (a) => ok(await a.globalStats(), { count: 1 }),
});

const ListQuery = Type.Object({
  protocol_name: Type.Optional(query.protocol_filter),
  program_id: Type.Optional(query.program_id),
  ...dayRangeQuery,
  signature: Type.Optional(query.signature),
  limit: query.limit,
  offset: query.offset,
  cursor: Type.Optional(query.cursor),
});

const transactions = restGet({
  url: '/transactions',
  schema: {
    summary: 'List transactions',
    description:
      'Instruction records, newest first (block time, then signature, then instruction index). ' +
      'Equals JSON-RPC getTransactions with sortOrder desc and the same filters. ' +
      `offset + limit may reach ${REST_OFFSET_WINDOW}; to walk further (any day, any size), pass meta.next back as cursor. ` +
      'The cursor is the JSON-RPC paginationToken of getTransactions (sortOrder desc, same filters): one signed codec for every door.',
    querystring: ListQuery,
    response: { 200: envelope(Type.Array(Transaction), 'A page of transactions'), ...errors(400, 401, 403, 429) },
  },
  rules: [
    DAYS_IN_ORDER,
    sumAtMost('offset', 'limit', REST_OFFSET_WINDOW, 'to page further, drop offset and pass the meta.next of each page as cursor (it reaches every record)'),
    // A cursor only the server mints (and never together with an offset).
    issued('cursor', 'meta.next', 'offset', 'the cursor already says where the page starts'),
  ],
  async run(a, req) {
    const q = filled(ListQuery, req.query);
    const days = dayRange(q);
    const filters: TransactionFilters = {};
    if (q.protocol_name !== undefined) filters.protocols = [q.protocol_name];
    if (q.program_id !== undefined) filters.programIds = [q.program_id];
    if (q.signature !== undefined) filters.signatures = [q.signature];
    if (days.range.gte !== undefined || days.range.lte !== undefined) filters.blockTime = days.range;
    // One keyset page as deep as offset + limit (a page equals the JSON-RPC answer's slice),
    // or the keyset page after the cursor. Either way the page's next cursor resumes after its last row.
    const p = await a.transactions({ filters, sortOrder: 'desc', limit: q.offset + q.limit, cursor: q.cursor });
    const data = p.data.slice(q.offset);
    // The total is cheap (hourly view plus ragged edges) unless a filter the view lacks is set.
    const cheap = q.program_id === undefined && q.signature === undefined;
    const total = cheap ? await a.transactionCount(filters.protocols, days.range) : undefined;
    const meta = { limit: q.limit, offset: q.offset, count: data.length, next: p.next, protocolName: q.protocol_name ?? null, ...rangeMeta(days) };
    return ok(data, total === undefined ? meta : { ...meta, total });
  },
});

/** The hand-written routes, by the catalog's name of their operation. */
export const HAND_ROUTES: Readonly<Record<string, RestRoute>> = Object.freeze({ feeStats, globalStats, transactions });
