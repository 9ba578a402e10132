// GET /v1/metrics: the protocols' activity in the Prometheus text format, for the users' own
// Prometheus (docs/user-metrics.md). An API-key route like every other (x-api-key, api-key, or
// Authorization: Bearer <key> as Prometheus' `authorization` block sends it), charged one
// request per scrape and run under the request's budget. Its parameters are allow-listed
// (protocol, instruction_type, each repeatable and bounded); anything else is a 400.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, Errors, worded, type Wording } from '../../../core/errors.ts';
import { USER_METRICS_INSTRUCTION_TYPE_MAX_CHARS, USER_METRICS_MAX_INSTRUCTION_TYPES, USER_METRICS_WINDOWS } from '../../../core/limits/mcp.ts';
import { FILTER_LIST_MAX } from '../../../core/limits/questions.ts';
import { ActiveProtocolName, PROTOCOL_NAME_PATTERN } from '../../../core/vocabulary/primitives.ts';
import type { Analytics } from '../../analytics/analytics.ts';
import type { FreshnessWatermark } from '../../services/freshness.ts';
import { EXPOSITION_CONTENT_TYPE, exposition } from './exposition.ts';
import { QUOTED_PARAM_MAX_CHARS, QUOTED_VALUE_MAX_CHARS } from '../../../core/limits/http.ts';
import { keyed } from '../../services/access/route-policy.ts';

const WORDING: Wording = {
  params: { protocol: 'protocol', protocols: 'protocol', range: 'window', cursor: 'cursor', order: 'order' },
  hints: { protocols: 'GET /api/v1/stats or JSON-RPC getProtocols lists the available ones', coarserBucket: 'a longer scrape interval' },
};

const ACCEPTED = ['protocol', 'instruction_type', 'api-key'];
const PROTOCOL = new RegExp(PROTOCOL_NAME_PATTERN);
/** Instruction types as programs' interface definitions name them: identifiers. An allow-list
 *  (a label value reaches the user's Prometheus), and it keeps the longest valid URI short. */
const TYPE_PATTERN = `^[A-Za-z_][A-Za-z0-9_]{0,${USER_METRICS_INSTRUCTION_TYPE_MAX_CHARS - 1}}$`;
const TYPE = new RegExp(TYPE_PATTERN);

const bad = (message: string, field: string): AppError => new AppError(Errors.invalidParams, message, { field });

/** A repeatable parameter's values (absent: undefined), each a string checked by `ok`, at most `max`. */
function listParam(query: Record<string, unknown>, name: string, max: number, rule: string, ok: (v: string) => boolean): string[] | undefined {
  const raw = query[name];
  if (raw === undefined) return undefined;
  const values = Array.isArray(raw) ? raw : [raw];
  if (values.length > max) throw bad(`${name} may be given at most ${max} times (got ${values.length})`, name);
  for (const v of values) {
    if (typeof v !== 'string' || !ok(v)) throw bad(`${name} must be ${rule} (got ${JSON.stringify(String(v)).slice(0, QUOTED_VALUE_MAX_CHARS)})`, name);
  }
  return [...new Set(values as string[])];
}

function readQuery(req: FastifyRequest): { protocols?: string[]; instructionTypes?: string[] } {
  const query = (req.query ?? {}) as Record<string, unknown>;
  const unknown = Object.keys(query).find((k) => !ACCEPTED.includes(k));
  if (unknown !== undefined)
    throw bad(`unknown query parameter "${unknown.slice(0, QUOTED_PARAM_MAX_CHARS)}"; accepted: protocol, instruction_type (each repeatable)`, unknown);
  const protocols = listParam(query, 'protocol', FILTER_LIST_MAX, 'a protocol identifier such as jupiter_v6', (v) => PROTOCOL.test(v));
  const instructionTypes = listParam(
    query,
    'instruction_type',
    USER_METRICS_MAX_INSTRUCTION_TYPES,
    `an instruction type: letters, digits and underscores, at most ${USER_METRICS_INSTRUCTION_TYPE_MAX_CHARS} characters`,
    (v) => TYPE.test(v),
  );
  return { ...(protocols === undefined ? {} : { protocols }), ...(instructionTypes === undefined ? {} : { instructionTypes }) };
}

/** A repeatable parameter (`?protocol=a&protocol=b`; once is a list of one), each value as `item`
 *  says: an array, sent form-style exploded (the querystring's style below), which every generator
 *  writes as the repeated parameter. The document names the active protocols and the instruction
 *  types' bound, so what it calls valid is answered. */
const repeatable = (item: object, max: number, description: string) => ({ type: 'array', items: item, minItems: 1, maxItems: max, description });

const schema = {
  tags: ['Metrics'],
  operationId: 'getMetrics',
  summary: 'Protocol activity in the Prometheus text format',
  description:
    'For your own Prometheus: per visible protocol (per instruction type too when instruction_type is given) the counters ' +
    'txa_protocol_transactions_total, txa_protocol_failed_transactions_total, txa_protocol_fees_lamports_total, txa_protocol_compute_units_total ' +
    '(all time), the gauges txa_protocol_window_transactions, txa_protocol_window_failed_transactions, txa_protocol_success_ratio (0-1) ' +
    'for window="5m" and window="1h" ending now, the summaries txa_protocol_fee_lamports and txa_protocol_compute_units (quantile 0.5, 0.95, ' +
    '0.99 in each window; _sum and _count all time), and ' +
    'txa_protocol_newest_block_time_seconds, txa_protocol_ingested_at_seconds, txa_protocol_data_age_seconds. Read from the hourly views ' +
    '(the ragged edges of a window from the records). The key may also be sent as Authorization: Bearer <key>. Each scrape counts as one request.',
  querystring: {
    type: 'object',
    // OpenAPI's serialization of these arrays (its default, stated): protocol=a&protocol=b.
    style: 'form',
    explode: true,
    properties: {
      protocol: repeatable(
        { ...ActiveProtocolName },
        FILTER_LIST_MAX,
        `Only these protocols (repeatable, at most ${FILTER_LIST_MAX}); unknown or inactive: 400`,
      ),
      instruction_type: repeatable(
        { type: 'string', pattern: TYPE_PATTERN },
        USER_METRICS_MAX_INSTRUCTION_TYPES,
        `Per instruction type, only these (repeatable, at most ${USER_METRICS_MAX_INSTRUCTION_TYPES})`,
      ),
    },
  },
  response: {
    200: { description: 'Prometheus text format 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } },
    400: { description: 'An unknown parameter, a malformed value, or an unknown or inactive protocol', $ref: 'ErrorBody#' },
    401: { description: 'API key missing', $ref: 'ErrorBody#' },
    403: { description: 'API key invalid, inactive or revoked', $ref: 'ErrorBody#' },
    429: { description: 'Rate limit exceeded', $ref: 'ErrorBody#' },
  },
};

export async function userMetricsRoutes(app: FastifyInstance, opts: { analytics: Analytics; freshness: FreshnessWatermark }): Promise<void> {
  app.get(
    '/v1/metrics',
    {
      config: keyed('other', 'rest'),
      schema,
      // The handler checks the parameters, with messages that name them; the schema documents them.
      validatorCompiler: () => () => true,
      // The exposition is text already; error bodies are {error, message} as everywhere.
      serializerCompiler: () => (data) => (typeof data === 'string' ? data : JSON.stringify(data)),
    },
    async (req, reply) => {
      const asked = readQuery(req);
      const now = Math.floor(Date.now() / 1000);
      let series: Awaited<ReturnType<Analytics['protocolMetrics']>>;
      try {
        series = await opts.analytics
          .under(req.budget)
          .protocolMetrics(asked.protocols, { instructionTypes: asked.instructionTypes, windows: USER_METRICS_WINDOWS, now });
      } catch (err) {
        throw worded(err, WORDING);
      }
      return reply.type(EXPOSITION_CONTENT_TYPE).send(exposition(series, (p) => opts.freshness.current([p]), now));
    },
  );
}
