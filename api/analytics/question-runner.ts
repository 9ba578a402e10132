// How the facade's questions are answered: each compiled once (a cached answer compiles
// nothing), costed and run as the same statement, its rows kept in the result cache under the
// statement itself. One per view of the facade (Analytics.under): its warehouse is the view's,
// bound to the request's budget; the cache and the memo of compiled questions are shared.
import type { Warehouse } from '../../warehouse/warehouse.ts';
import { costOf, type AnswerCost, type CostShape } from './cost/analytics-cost.ts';
import type { GroupReads } from './paging/group-connection.ts';
import { FIXED_SHAPE, type CostQuestion, type Prepared } from './prepared.ts';
import { compileCount } from './question/count.ts';
import { compile, costShapeOf, readRows, type AnswerRow, type CompiledStatement, type Question } from './question/compile.ts';
import type { Measures, Statement } from './question/model.ts';
import type { QuestionMemo, ResultCache } from './result-cache.ts';

/** A question compiled once: its statement, and the result cache's key of its rows. */
export interface Compiled {
  readonly statement: CompiledStatement | undefined;
  readonly key: string;
}

/** The result cache's key of a statement's rows: the statement itself. */
const rowsKey = (s: Statement): string => `q:${s.sql}:${JSON.stringify(s.params)}`;

export class QuestionRunner {
  constructor(
    private readonly wh: Warehouse,
    private readonly cache: ResultCache,
    /** Compiled questions: a cached answer compiles nothing. */
    private readonly memo: QuestionMemo<Compiled>,
    private readonly measures: Measures,
  ) {}

  /** The rows of a compiled question, from the result cache (keyed by the statement itself). */
  rows(q: Question, statement: CompiledStatement | undefined, key = statement === undefined ? '' : rowsKey(statement)): Promise<AnswerRow[]> {
    if (statement === undefined) return Promise.resolve([]);
    return (
      this.cache.hit<AnswerRow[]>(key) ??
      this.cache.get(key, async () => readRows(q, await this.wh.query<Record<string, unknown>>(statement.sql, { params: statement.params }), this.measures))
    );
  }

  /** `q` compiled, once per distinct question (compiling reads no data, so it never goes stale). */
  private compiled(q: Question): Compiled {
    const id = this.memo.idOf(q);
    const kept = this.memo.get(id);
    if (kept !== undefined) return kept;
    const statement = compile(q, this.measures);
    return this.memo.set(id, { statement, key: statement === undefined ? '' : rowsKey(statement) });
  }

  ask(q: Question): Promise<AnswerRow[]> {
    const { statement, key } = this.compiled(q);
    return this.rows(q, statement, key);
  }

  prepared<T>(q: Question, shape: (rows: AnswerRow[]) => T): Prepared<T> {
    const { statement, key } = this.compiled(q);
    return {
      kind: 'prepared',
      statements: statement === undefined ? [] : [statement],
      shape: statement?.costShape ?? costShapeOf(q, this.measures),
      answer: async () => shape(await this.rows(q, statement, key)),
    };
  }

  /** The cost of answering, estimated by the engine before anything runs. */
  async cost(q: CostQuestion): Promise<AnswerCost> {
    const [statements, shape] = q.kind === 'fixed' ? [[], FIXED_SHAPE] : [q.statements, q.shape];
    return this.cache.get(`cost:${JSON.stringify([statements, shape])}`, () => costOf(this.wh, statements, shape));
  }

  /** Whether statements of an answer of `shape` cost at most `budget` (always, without one), as the guard scores them. */
  async fits(statements: readonly Statement[], shape: CostShape, budget: number | undefined): Promise<boolean> {
    return budget === undefined || (await this.cost({ kind: 'prepared', statements, shape, answer: async () => undefined })).score <= budget;
  }

  /** How group connections compile and read: this runner's compiler, cache and cost model. */
  groupReads(budget: number | undefined): GroupReads {
    return {
      compile: (q) => compile(q, this.measures),
      compileCount: (q) => compileCount(q, this.measures),
      rows: (q, statement) => this.rows(q, statement),
      count: (c) =>
        this.cache.get(`n:${c.sql}:${JSON.stringify(c.params)}`, async () =>
          Number((await this.wh.query<{ n: string }>(c.sql, { params: c.params }))[0]?.n ?? 0),
        ),
      fits: (statements, shape) => this.fits(statements, shape, budget),
    };
  }
}
