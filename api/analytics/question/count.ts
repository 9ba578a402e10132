// How many rows (groups) a question answers, whatever its page: GraphQL connections'
// totalCount over groups. The same reads as the question itself (its view rows and ragged
// edges), counted by the engine.
import { compile, type Question } from './compile.ts';
import { MEASURES, type Measures, type Statement } from './model.ts';

/** The statement counting the groups of `q` (its dimensions over its filters); undefined when nothing can match. */
export function compileCount(q: Question, catalog: Measures = MEASURES): Statement | undefined {
  // One measure is enough to form the groups; every group has records (compile's rule).
  const inner = compile(
    {
      measures: ['count'],
      ...(q.dimensions ? { dimensions: q.dimensions } : {}),
      ...(q.granularity ? { granularity: q.granularity } : {}),
      filters: q.filters,
    },
    catalog,
  );
  return inner === undefined ? undefined : { sql: `SELECT count() AS n FROM (${inner.sql})`, params: inner.params };
}
