// The `extensions` object of every GraphQL answer, built in one place so every answer
// carries the same entries: the cost and, on answers that reached the data, its freshness
// and its statistics (api/services/access/answer-stats.ts).
import type { AnswerStats } from '../../../core/budget.ts';
import type { FreshnessExtension } from '../../services/freshness.ts';

export interface AnswerFacts {
  /** The request's cost score (0 when it was refused before it was costed) and the plan's budget (0 without a key). */
  cost: { requested: number; budget: number };
  /** How fresh the data is (newest block_time and ingest time of the visible protocols). */
  freshness?: FreshnessExtension;
  /** The answer's statistics (elapsed, rows and bytes read, cost), as in its X-Stats-* headers. */
  stats?: AnswerStats;
}

export function buildExtensions(facts: AnswerFacts): Record<string, unknown> {
  return {
    cost: { requested: facts.cost.requested, budget: facts.cost.budget },
    ...(facts.freshness === undefined ? {} : { freshness: facts.freshness }),
    ...(facts.stats === undefined ? {} : { stats: facts.stats }),
  };
}
