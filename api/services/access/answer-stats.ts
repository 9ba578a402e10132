// The cost of every answer (issue 26): each authenticated answer, whatever its door, carries
// its statistics in headers: elapsed time, rows and bytes its statements read (as the engine
// reported them), and its cost in the plan's units. They come from one place, the request's
// budget (core/budget.ts), whose ledger the budgeted warehouse fills statement by statement
// (warehouse/budgeted-warehouse.ts); doors with a body of their own add the same figures to it
// (GraphQL `extensions.stats`, REST `meta.stats`) from `Budget.stats()`, taken once, so body
// and headers agree. Names in docs/access.md, "The cost of every answer".
import type { FastifyReply } from 'fastify';
import type { EdgeStep } from '../answers/answer-edge.ts';
import type { AnswerStats, Budget } from '../../../core/budget.ts';

/** Header per figure, one family (`X-Stats-*`), beside X-RateLimit-* and X-Data-*. */
export const ANSWER_STATS_HEADERS = Object.freeze({
  elapsedMs: 'x-stats-elapsed-ms',
  rowsRead: 'x-stats-rows-read',
  bytesRead: 'x-stats-bytes-read',
  cost: 'x-stats-cost',
} as const satisfies Record<keyof AnswerStats, string>);

/** Names a browser client may read once CORS allows the origin (Access-Control-Expose-Headers). */
export const EXPOSED_STATS_HEADERS: readonly string[] = Object.values(ANSWER_STATS_HEADERS);

/** The statistics of the request's answer, or undefined where nothing is metered (open routes, the operator). */
export function answerStatsOf(budget: Budget | null | undefined): AnswerStats | undefined {
  if (budget === null || budget === undefined || budget.door === 'operator') return undefined;
  return budget.stats();
}

/** Set the X-Stats-* headers of `stats` on a reply (also for answers that skip onSend: the event streams). */
export function setAnswerStatsHeaders(reply: FastifyReply, stats: AnswerStats): void {
  reply.header(ANSWER_STATS_HEADERS.elapsedMs, String(stats.elapsedMs));
  reply.header(ANSWER_STATS_HEADERS.rowsRead, String(stats.rowsRead));
  reply.header(ANSWER_STATS_HEADERS.bytesRead, String(stats.bytesRead));
  reply.header(ANSWER_STATS_HEADERS.cost, String(stats.cost));
  // Only where CORS admitted the request's origin (api/services/access/cors.ts set the list): a request
  // without an admitted Origin is no browser's cross-origin call, and the list would be ~100
  // bytes on every answer for nobody (a tenth of a small answer's headers).
  const exposed = reply.getHeader('access-control-expose-headers');
  if (exposed === undefined) return;
  const list = String(exposed)
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h.length > 0);
  for (const name of EXPOSED_STATS_HEADERS) if (!list.includes(name)) list.push(name);
  reply.header('access-control-expose-headers', list.join(', '));
}

/** The answer edge's step (answer-edge.ts): every metered answer gets its statistics headers,
 *  errors included (what was read before the error). */
export const answerStatsStep: EdgeStep = (req, reply, payload) => {
  const stats = answerStatsOf(req.budget);
  if (stats !== undefined) setAnswerStatsHeaders(reply, stats);
  return payload;
};
