// The `extensions` object of every GraphQL answer, built in one place so that other parts
// (freshness, for one) add their entry here and every answer carries it.

export interface AnswerFacts {
  /** The request's cost score (0 when it was refused before it was costed) and the plan's budget (0 without a key). */
  cost: { requested: number; budget: number };
}

export function buildExtensions(facts: AnswerFacts): Record<string, unknown> {
  return { cost: { requested: facts.cost.requested, budget: facts.cost.budget } };
}
