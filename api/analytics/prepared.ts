// An answer prepared for one request: its statements built once, then costed against the
// request's budget and run as the same objects (the question model's promise: a statement is
// never built twice). The analytics facade prepares them; GraphQL's field plans hold them.
import type { CostShape } from './cost/analytics-cost.ts';
import type { Statement } from './question/model.ts';

/**
 * An answer prepared for one request: its statements built once, costed (cost) and run
 * (answer) as the same objects. GraphQL's field plans hold one per field.
 */
export interface Prepared<T> {
  kind: 'prepared';
  statements: readonly Statement[];
  shape: CostShape;
  answer(): Promise<T>;
}

/** What a request's cost is asked of: a prepared answer, or an answer of fixed cost (a point read, a list of names). */
export type CostQuestion = { kind: 'fixed' } | Prepared<unknown>;

export const FIXED_SHAPE: CostShape = { range: { gte: 0, lte: 0 }, protocolsGiven: true };
