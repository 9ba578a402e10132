// GET /api/v1/transactions and /api/v1/transactions/:signature: the same listing and point
// lookup as JSON-RPC getTransactions / getTransaction (newest first).
import type { FastifyInstance } from 'fastify';
import { invalidParams, notFound } from '../../core/errors.ts';
// The listing is keyset-based underneath, so offset paging stops at this depth.
import { REST_OFFSET_WINDOW } from '../../core/limits.ts';
import type { Analytics } from '../analytics/analytics.ts';
import type { TransactionFilters } from '../analytics/types.ts';
import { dayRange, rangeMeta } from './params.ts';
import { envelope, errors, queryParams, transaction } from './schemas.ts';


interface ListQuery {
  protocol_name?: string;
  program_id?: string;
  date_from?: string;
  date_to?: string;
  signature?: string;
  limit: number;
  offset: number;
}

export async function transactionsRoutes(app: FastifyInstance, opts: { analytics: Analytics }): Promise<void> {
  const { analytics } = opts;

  app.get<{ Querystring: ListQuery }>('/transactions', {
    schema: {
      tags: ['REST'],
      summary: 'List transactions',
      description: 'Instruction records, newest first (block time, then signature, then instruction index). ' +
        'Equals JSON-RPC getTransactions with sortOrder desc and the same filters. ' +
        `offset + limit may reach ${REST_OFFSET_WINDOW}; go further back with date_to.`,
      querystring: {
        type: 'object',
        properties: {
          protocol_name: queryParams.protocol_name,
          program_id: queryParams.program_id,
          date_from: queryParams.date_from,
          date_to: queryParams.date_to,
          signature: queryParams.signature,
          limit: queryParams.limit,
          offset: queryParams.offset,
        },
      },
      response: { 200: envelope({ type: 'array', items: transaction }, 'A page of transactions'), ...errors(400, 401, 403, 429) },
    },
  }, async (req) => {
    const q = req.query;
    const days = dayRange(q);
    if (q.offset + q.limit > REST_OFFSET_WINDOW) {
      throw invalidParams(`offset + limit must be at most ${REST_OFFSET_WINDOW} (got ${q.offset + q.limit}); narrow the range with date_to instead`, 'offset');
    }
    const filters: TransactionFilters = {};
    if (q.protocol_name !== undefined) filters.protocols = [q.protocol_name];
    if (q.program_id !== undefined) filters.programIds = [q.program_id];
    if (q.signature !== undefined) filters.signatures = [q.signature];
    if (days.range.gte !== undefined || days.range.lte !== undefined) filters.blockTime = days.range;
    // One keyset page as deep as offset + limit, so a page equals the JSON-RPC answer's slice.
    const page = await analytics.transactions({ filters, sortOrder: 'desc', limit: q.offset + q.limit });
    const data = page.data.slice(q.offset);
    // The total is cheap (hourly view plus ragged edges) unless a filter the view lacks is set.
    const cheap = q.program_id === undefined && q.signature === undefined;
    const total = cheap ? await analytics.transactionCount(filters.protocols, days.range) : undefined;
    return {
      success: true,
      data,
      meta: {
        limit: q.limit,
        offset: q.offset,
        count: data.length,
        ...(total === undefined ? {} : { total }),
        protocolName: q.protocol_name ?? null,
        ...rangeMeta(days),
      },
    };
  });

  app.get<{ Params: { signature: string } }>('/transactions/:signature', {
    schema: {
      tags: ['REST'],
      summary: 'One transaction by signature',
      description: 'The record of lowest instruction index for the signature (JSON-RPC getTransaction). 404 when absent.',
      params: { type: 'object', required: ['signature'], properties: { signature: queryParams.signature } },
      response: { 200: envelope(transaction, 'The transaction'), ...errors(400, 401, 403, 404, 429) },
    },
  }, async (req) => {
    const tx = await analytics.transaction(req.params.signature);
    if (!tx) throw notFound(`no transaction with signature "${req.params.signature}"`);
    return { success: true, data: tx, meta: { count: 1 } };
  });
}
