// GET /api/v1/analytics/*: protocol aggregates, time series and fee statistics, answered
// by the same analytics functions as JSON-RPC (a day range becomes the blockTime range
// [date_from 00:00:00, date_to 23:59:59] UTC).
import type { FastifyInstance } from 'fastify';
import { MAX_ACTIVITY_BUCKETS } from '../../core/limits.ts';
import type { Analytics } from '../analytics/analytics.ts';
import { dayRange, rangeMeta } from './params.ts';
import { activityBucket, envelope, errors, feeAnswer, protocolStats, queryParams } from './schemas.ts';

interface RangeQuery {
  protocol_name?: string;
  date_from?: string;
  date_to?: string;
}

export async function analyticsRoutes(app: FastifyInstance, opts: { analytics: Analytics }): Promise<void> {
  const { analytics } = opts;

  app.get<{ Querystring: RangeQuery & { protocol_name: string } }>('/analytics/protocols', {
    schema: {
      tags: ['REST'],
      summary: 'Aggregates for one protocol',
      description: 'Equals JSON-RPC getProtocolStats {protocolName, blockTime} over the day range. Unknown or inactive protocols: 400.',
      querystring: {
        type: 'object',
        required: ['protocol_name'],
        properties: { protocol_name: queryParams.protocol_name, date_from: queryParams.date_from, date_to: queryParams.date_to },
      },
      response: { 200: envelope(protocolStats, 'Protocol statistics'), ...errors(400, 401, 403, 429) },
    },
  }, async (req) => {
    const days = dayRange(req.query);
    const name = await analytics.requireProtocol(req.query.protocol_name);
    const data = await analytics.protocolStats(name, days.range);
    return { success: true, data, meta: { count: 1, protocolName: name, ...rangeMeta(days) } };
  });

  app.get<{ Querystring: RangeQuery & { granularity: 'hour' | 'day' } }>('/analytics/time-series', {
    schema: {
      tags: ['REST'],
      summary: 'Transactions over time',
      description: 'Hourly or daily buckets over the whole day range, empty buckets included as zeros ' +
        '(JSON-RPC getProtocolActivity; day buckets have no hour field). Without protocol_name, all protocols together. ' +
        `At most ${MAX_ACTIVITY_BUCKETS} buckets.`,
      querystring: {
        type: 'object',
        required: ['date_from', 'date_to'],
        properties: {
          protocol_name: queryParams.protocol_name,
          date_from: queryParams.date_from,
          date_to: queryParams.date_to,
          granularity: queryParams.granularity,
        },
      },
      response: { 200: envelope({ type: 'array', items: activityBucket }, 'Buckets in time order'), ...errors(400, 401, 403, 429) },
    },
  }, async (req) => {
    const q = req.query;
    const days = dayRange(q, true);
    const { gte, lte } = days.range as Required<typeof days.range>;
    // The analytics layer checks the protocol and the bucket count (words at the edge: REST_WORDING).
    const data = await analytics.activity(q.protocol_name, { gte, lte }, q.granularity);
    return { success: true, data, meta: { count: data.length, granularity: q.granularity, protocolName: q.protocol_name ?? null, ...rangeMeta(days) } };
  });

  app.get<{ Querystring: RangeQuery }>('/analytics/fees', {
    schema: {
      tags: ['REST'],
      summary: 'Fee statistics',
      description: 'Total, average, minimum, maximum and p50/p95/p99 of fees in lamports, for one protocol or all ' +
        'protocols together, plus the same per protocol. Percentiles come from mergeable t-digest sketches (approximate).',
      querystring: {
        type: 'object',
        properties: { protocol_name: queryParams.protocol_name, date_from: queryParams.date_from, date_to: queryParams.date_to },
      },
      response: { 200: envelope(feeAnswer, 'Fee statistics'), ...errors(400, 401, 403, 429) },
    },
  }, async (req) => {
    const days = dayRange(req.query);
    const { overall, protocols } = await analytics.feeStats(req.query.protocol_name, days.range);
    return { success: true, data: { ...overall, protocols }, meta: { count: 1, protocolName: req.query.protocol_name ?? null, ...rangeMeta(days) } };
  });
}
