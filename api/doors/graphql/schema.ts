// The executable schema: the SDL of every *.graphql file in schema/ (sorted by name and
// concatenated, so other modules add types and root fields by adding a file), with the
// resolvers of Query's and Mutation's fields. Such a resolver only runs the plan the request's guard
// already checked and costed (field-plans.ts); other types resolve by property.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { buildSchema, GraphQLSchema, type GraphQLFieldResolver } from 'graphql';
import { MEASURES, type Measures } from '../../analytics/question/model.ts';
import { KEY_SORTS, openQuestionDoor, questionVocabulary, RECORD_SORTS, type OpenQuestionDoor } from './question-vocabulary.ts';
import { rulesLine } from './question-args.ts';
import { CATALOG, type Operation } from '../../catalog/catalog.ts';
import { installBigInt } from './bigint-scalar.ts';
import { declaredSdl } from './declared-fields.ts';
import { exportInputSdl } from './export-plans.ts';
import { subscriptionFieldsSdl } from './subscriptions/schema.ts';
import type { FieldMeter, FieldPlan } from './field-plans.ts';

const SCHEMA_DIR = path.join(import.meta.dirname, 'schema');

const described = (text: string, line: string): string => `  ${JSON.stringify(text)}\n  ${line}`;
/** A line with its deprecation, when it has one. */
const maybeDeprecated = (line: string, reason: string | undefined): string =>
  reason === undefined ? line : `${line} @deprecated(reason: ${JSON.stringify(reason)})`;

/**
 * The enums and node fields of open questions, from the catalog's vocabulary: GroupBy,
 * Metric, SortField and TransactionNode's group keys and metric fields. A renamed metric's
 * older name (value and field) is there too, marked @deprecated with its reason.
 */
export function vocabularySource(measures: Measures = MEASURES): string {
  const v = questionVocabulary(measures);
  const metrics = v.metrics.map((m) => described(m.description, maybeDeprecated(m.value, m.deprecated)));
  const keyFields = v.groupKeys.filter((k) => k.type !== undefined).map((k) => described(`Group key (groupBy ${k.value})`, `${k.field}: ${k.type}`));
  const metricFields = v.metrics.map((m) => described(`Metric ${m.value}`, maybeDeprecated(`${m.field}: Float`, m.deprecated)));
  return [
    `"What groups are keyed by; any two (or more) may be combined. Weeks start on Monday 00:00 UTC."\nenum GroupBy {\n${v.groupKeys.map((k) => described(k.description, k.value)).join('\n')}\n}`,
    `"Aggregates over the records of a group. Percentiles are approximate (mergeable t-digest sketches)."\nenum Metric {\n${metrics.join('\n')}\n}`,
    `"What a sort orders by: a metric, a group key, or (records) a column."\nenum SortField {\n${[
      ...metrics,
      ...Object.entries(KEY_SORTS).map(([value, s]) => described(s.description, value)),
      ...Object.entries(RECORD_SORTS).map(([value, r]) => described(r.description, value)),
    ].join('\n')}\n}`,
    `extend type TransactionNode {\n${[...keyFields, ...metricFields].join('\n')}\n}`,
  ].join('\n\n');
}

/** The SDL as served: every schema file, sorted by name, then the vocabulary of open questions and the catalog's declared operations. */
export function schemaSource(dir = SCHEMA_DIR, measures: Measures = MEASURES, catalog: readonly Operation[] = CATALOG): string {
  return [
    ...readdirSync(dir)
      .filter((f) => f.endsWith('.graphql'))
      .sort()
      .map((f) => readFileSync(path.join(dir, f), 'utf8')),
    vocabularySource(measures),
    declaredSdl(catalog),
    exportInputSdl(),
    subscriptionFieldsSdl(),
  ].join('\n');
}

/** What a request's resolvers see: the plans of its top-level fields by response key. */
export interface RequestContext {
  plans: ReadonlyMap<string, FieldPlan>;
  /** Where running fields count their items. */
  meter: FieldMeter;
  /** Resolves in a turn of the event loop after the previous caller's (one queue per request). */
  nextTurn(): Promise<void>;
}

const runPlan: GraphQLFieldResolver<unknown, RequestContext> = async (_source, _args, ctx, info) => {
  const plan = ctx.plans.get(String(info.path.key));
  // Every Query field is planned before execution; a missing plan is a bug, not bad input.
  if (plan === undefined) throw new Error(`no plan for Query.${info.fieldName}`);
  // Aliases of one question answer from one cached read at the same moment, and graphql-js
  // completes each answer's list in one go: ten such fields held the event loop ~150 ms.
  // Each field is started and completed in a turn of its own instead.
  await ctx.nextTurn();
  const value = await plan.run(ctx.meter);
  await ctx.nextTurn();
  return value;
};

/** The open questions' fields by the request each is checked by (queryComplexity asks what transactions would). */
const QUESTION_FIELDS = {
  transactions: 'transactions',
  timeSeries: 'timeSeries',
  failedTransactions: 'failedTransactions',
  queryComplexity: 'transactions',
} as const;

/**
 * The schema of `dir`'s files, its open questions over `measures` (the model's by default).
 * It carries those questions' requests, declared in the same words as its enums and built
 * once with it (`questionsOf`); each open field's description shows its request's rules.
 */
export function buildExecutableSchema(dir = SCHEMA_DIR, measures: Measures = MEASURES, catalog: readonly Operation[] = CATALOG): GraphQLSchema {
  const questions = openQuestionDoor(measures);
  const built = buildSchema(schemaSource(dir, measures, catalog));
  const schema = new GraphQLSchema({ ...built.toConfig(), extensions: { ...built.extensions, questions } });
  installBigInt(schema);
  const query = schema.getQueryType();
  if (query === null || query === undefined) throw new Error('the GraphQL schema has no Query type');
  for (const field of Object.values(query.getFields())) field.resolve = runPlan;
  for (const [name, of] of Object.entries(QUESTION_FIELDS)) {
    const field = query.getFields()[name];
    if (field !== undefined) field.description = `${field.description ?? ''}\n${rulesLine(questions.requests[of].rules)}`;
  }
  // Mutation fields (export jobs) are planned and run the same way.
  for (const field of Object.values(schema.getMutationType()?.getFields() ?? {})) field.resolve = runPlan;
  return schema;
}

/** The open questions' requests a schema was built with (built again, once per call, for a schema built elsewhere). */
export const questionsOf = (schema: GraphQLSchema, measures: Measures = MEASURES): OpenQuestionDoor =>
  (schema.extensions as { questions?: OpenQuestionDoor }).questions ?? openQuestionDoor(measures);
