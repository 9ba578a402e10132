// The executable schema: the SDL of every *.graphql file in schema/ (sorted by name and
// concatenated, so other modules add types and root fields by adding a file), with the
// resolvers of Query's and Mutation's fields. Such a resolver only runs the plan the request's guard
// already checked and costed (field-plans.ts); other types resolve by property.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { buildSchema, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import type { FieldMeter, FieldPlan } from './field-plans.ts';

const SCHEMA_DIR = path.join(import.meta.dirname, 'schema');

/** The SDL as served: every schema file, sorted by name. */
export function schemaSource(dir = SCHEMA_DIR): string {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.graphql'))
    .sort()
    .map((f) => readFileSync(path.join(dir, f), 'utf8'))
    .join('\n');
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

export function buildExecutableSchema(dir = SCHEMA_DIR): GraphQLSchema {
  const schema = buildSchema(schemaSource(dir));
  const query = schema.getQueryType();
  if (query === null || query === undefined) throw new Error('the GraphQL schema has no Query type');
  for (const field of Object.values(query.getFields())) field.resolve = runPlan;
  // Mutation fields (export jobs) are planned and run the same way.
  for (const field of Object.values(schema.getMutationType()?.getFields() ?? {})) field.resolve = runPlan;
  return schema;
}
