// The guard graphql-helix calls as its `execute`: before anything runs, each top-level field
// is planned, counted against the rate limit, costed with the one cost model and sized in
// items; the request is refused over the plan's budget or the document's points
// (docs/graphql.md, "Limits"). While it runs, the meter counts the items fields answer
// where their number was not known before (time series grouped by instruction type).
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyRequest } from 'fastify';
import {
  execute,
  getArgumentValues,
  getDirectiveValues,
  getOperationAST,
  getVariableValues,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type FieldNode,
  type GraphQLError,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { HttpError } from 'graphql-helix';
import { AppError, Errors } from '../../../core/errors.ts';
import { GRAPHQL_MAX_ROOT_FIELDS, GRAPHQL_MAX_VARIABLE_ERRORS } from '../../../core/limits/graphql.ts';
import type { Analytics } from '../../analytics/analytics.ts';
import type { ExportService } from '../../services/exports/export-service.ts';
import { tooComplex } from './document-limits.ts';
import { connectionSelection } from './connection-plans.ts';
import { fieldError, graphqlError } from './errors.ts';
import { planExportField } from './export-plans.ts';
import type { Operation } from '../../catalog/declare.ts';
import { declaredPlan } from './declared-fields.ts';
import { planField, type FieldMeter, type FieldPlan } from './field-plans.ts';
import { questionsOf, type RequestContext } from './schema.ts';

/** What one request's guard learned, for its answer's extensions. */
export interface Ledger {
  requested: number;
  budget: number;
  /** Top-level fields, each one request against the rate limit (0 until the guard ran). */
  fields: number;
  /** The operation was a query whose answer may be reused: not a mutation, and no export job
   *  field (those answer per key, and change as jobs run, with no data version to tell). */
  query: boolean;
  /** Items the fields have answered so far (records, groups, points). */
  points: number;
}

export interface GuardOptions {
  schema: GraphQLSchema;
  analytics: Analytics;
  exports?: ExportService;
  /** The catalog whose declared operations are fields too (api/doors/graphql/declared-fields.ts). */
  catalog: readonly Operation[];
  timeoutMs: number;
  maxPoints: number;
}

/** Top-level fields of the operation by response key, after fragments and @skip/@include. */
export function topLevelFields(document: DocumentNode, op: OperationDefinitionNode, variables: Record<string, unknown>): Map<string, FieldNode> {
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
  const out = new Map<string, FieldNode>();
  const included = (node: Parameters<typeof getDirectiveValues>[1]): boolean =>
    getDirectiveValues(GraphQLSkipDirective, node, variables)?.if !== true && getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if !== false;
  const visit = (set: SelectionSetNode, seen: Set<string>): void => {
    for (const s of set.selections) {
      if (!included(s)) continue;
      if (s.kind === Kind.FIELD) {
        const key = s.alias?.value ?? s.name.value;
        if (!out.has(key)) out.set(key, s);
      } else if (s.kind === Kind.INLINE_FRAGMENT) visit(s.selectionSet, seen);
      else if (!seen.has(s.name.value)) {
        seen.add(s.name.value);
        const f = fragments.get(s.name.value);
        if (f) visit(f.selectionSet, seen);
      }
    }
  };
  visit(op.selectionSet, new Set());
  return out;
}

const askLess = 'ask for less: fewer fields or aliases, a smaller pagination.first, a shorter filters.dateRange, a coarser bucketBy or fewer metrics';

/** The meter of one request: QUERY_TOO_COMPLEX once its fields have answered more than `maxPoints` items. */
function meterOf(ledger: Ledger, maxPoints: number): FieldMeter {
  return {
    count(points) {
      ledger.points += points;
      if (ledger.points > maxPoints) {
        throw new AppError(
          Errors.queryTooComplex,
          `the request's fields answer more than ${maxPoints} items (records, groups, time-series points) together; at most ${maxPoints} are allowed per document; ${askLess}`,
        );
      }
    },
  };
}

/** The operation's top-level fields once admitted: an operation of the document, on a root type of
 *  the schema, its variables coerced, few enough fields, each past the first counted against the rate limit. */
interface Admitted {
  op: OperationDefinitionNode;
  root: GraphQLObjectType;
  variables: Record<string, unknown>;
  fields: [string, FieldNode][];
}

/** A refusal that stops the whole request (429: the rate limit, or a cap on running work), in GraphQL's
 *  shape too; a cap's error says when to retry (the rate limit's hooks set that header themselves). */
function rateLimited(err: AppError, retryAfter: boolean): HttpError {
  return new HttpError(err.kind?.http ?? Errors.rateLimited.http, err.message, {
    ...(retryAfter ? { headers: err.retryAfterSeconds === undefined ? [] : [{ name: 'Retry-After', value: String(err.retryAfterSeconds) }] } : {}),
    graphqlErrors: [graphqlError(err.kind ?? Errors.rateLimited, err.message)],
  });
}

async function admit(o: GuardOptions, req: FastifyRequest, ledger: Ledger, args: ExecutionArgs): Promise<Admitted | ExecutionResult> {
  const op = getOperationAST(args.document, args.operationName);
  if (!op) return { errors: [graphqlError(Errors.invalidParams, 'the document has no operation of that name')] };
  // graphql-js leaves a mutation against a schema without Mutation to execution; refuse it as a request error.
  const root = o.schema.getRootType(op.operation);
  if (!root) return { errors: [graphqlError(Errors.invalidParams, `this service has no ${op.operation} operations`)] };
  const coerced = getVariableValues(o.schema, op.variableDefinitions ?? [], (args.variableValues ?? {}) as Record<string, unknown>, {
    maxErrors: GRAPHQL_MAX_VARIABLE_ERRORS,
  });
  if (coerced.errors) return { errors: coerced.errors };
  const variables = coerced.coerced;
  const fields = [...topLevelFields(args.document, op, variables)].filter(([, f]) => !f.name.value.startsWith('__'));
  ledger.fields = fields.length;
  ledger.query = op.operation === 'query';
  if (fields.length > GRAPHQL_MAX_ROOT_FIELDS) {
    return { errors: [tooComplex(`the operation asks for ${fields.length} top-level fields; at most ${GRAPHQL_MAX_ROOT_FIELDS} are allowed`)] };
  }
  // Each top-level field is one request against the rate limit (the first was counted on arrival).
  if (fields.length > 1) {
    try {
      await req.consumeRateLimit(fields.length - 1);
    } catch (err) {
      throw rateLimited(err as AppError, false);
    }
  }
  return { op, root, variables, fields };
}

/** Each admitted field's plan by response key, and the errors of those that cannot be planned. */
async function planFields(o: GuardOptions, req: FastifyRequest, ledger: Ledger, args: ExecutionArgs, a: Admitted, analytics: Analytics) {
  const rootFields = a.root.getFields();
  const plans = new Map<string, FieldPlan>();
  const errors: GraphQLError[] = [];
  const creations = a.op.operation === 'mutation' ? a.fields.filter(([, f]) => f.name.value === 'exportDataset').length : 0;
  for (const [key, node] of a.fields) {
    try {
      const def = rootFields[node.name.value];
      if (!def) continue;
      const fieldArgs = getArgumentValues(def, node, a.variables);
      const owner = req.apiKey === null ? null : { id: req.apiKey.id, plan: req.apiKey.plan, budget: req.budget };
      const exportPlan = o.exports === undefined ? undefined : planExportField(o.exports, owner, node.name.value, fieldArgs, creations);
      if (exportPlan !== undefined) ledger.query = false;
      const plan =
        exportPlan ??
        (await planField(
          analytics,
          questionsOf(o.schema, analytics.measures),
          node.name.value,
          fieldArgs,
          ledger.budget,
          connectionSelection(args.document, a.op, key, a.variables),
        )) ??
        (await declaredPlan(o.catalog, analytics, node.name.value, fieldArgs));
      if (plan) plans.set(key, plan);
    } catch (err) {
      // A cap on work the caller already has running (export jobs) refuses the request as the rate limit does.
      if (err instanceof AppError && err.kind === Errors.rateLimited) throw rateLimited(err, true);
      errors.push(fieldError(err, [key]));
    }
  }
  return { plans, errors };
}

/** The plans' cost against the plan's budget (charged on the request's budget when within it), then their items against the document's. */
async function checkCost(
  o: GuardOptions,
  req: FastifyRequest,
  ledger: Ledger,
  plans: ReadonlyMap<string, FieldPlan>,
  analytics: Analytics,
  errors: GraphQLError[],
) {
  const scores = await Promise.all(
    [...plans].map(async ([key, plan]) => {
      try {
        return (await analytics.cost(plan.question)).score;
      } catch (err) {
        errors.push(fieldError(err, [key]));
        return 0;
      }
    }),
  );
  ledger.requested = scores.reduce((a, b) => a + b, 0);
  if (errors.length > 0) return;
  if (ledger.requested > ledger.budget) {
    errors.push(
      tooComplex(
        `the request would cost ${Math.round(ledger.requested)} (estimated rows read plus a base cost); ` +
          `the ${req.apiKey?.plan ?? 'current'} plan allows ${ledger.budget} per request. queryComplexity lists what would lower it`,
      ),
    );
    return;
  }
  // Spent on the request's one budget (core/budget.ts), which every door's work draws on.
  try {
    req.budget?.charge(ledger.requested, 'the request');
  } catch (err) {
    errors.push(tooComplex((err as Error).message));
    return;
  }
  // Aliases multiply an answer: their items are bounded together, before anything runs.
  const planned = [...plans.values()].reduce((sum, p) => sum + (p.points ?? 1), 0);
  if (planned > o.maxPoints) {
    errors.push(
      tooComplex(
        `the request asks for ${planned} items (records, groups, time-series points) over its top-level fields; ` +
          `at most ${o.maxPoints} are allowed per document; ${askLess}`,
      ),
    );
  }
}

const SECOND_MS = 1000;

/** The planned fields run, within the guard's time. */
async function executeInTime(o: GuardOptions, ledger: Ledger, args: ExecutionArgs, plans: ReadonlyMap<string, FieldPlan>): Promise<ExecutionResult> {
  let turns = Promise.resolve();
  const context: RequestContext = {
    plans,
    meter: meterOf(ledger, o.maxPoints),
    // Chained, so two fields never get the same turn (immediates queued together run together).
    nextTurn: () => (turns = turns.then(() => nextTurn())),
  };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<ExecutionResult>((resolve) => {
    timer = setTimeout(
      () =>
        resolve({
          data: null,
          errors: [tooComplex(`the request ran longer than ${o.timeoutMs / SECOND_MS} s and was abandoned; ask for less (a shorter dateRange, fewer fields)`)],
        }),
      o.timeoutMs,
    );
  });
  try {
    return await Promise.race([execute({ ...args, contextValue: context }) as Promise<ExecutionResult>, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export const guardedExecute =
  (o: GuardOptions, req: FastifyRequest, ledger: Ledger) =>
  async (args: ExecutionArgs): Promise<ExecutionResult> => {
    const admitted = await admit(o, req, ledger, args);
    if (!('fields' in admitted)) return admitted;
    // Every statement of this request's fields runs under its budget (none: refused).
    const analytics = o.analytics.under(req.budget);
    const { plans, errors } = await planFields(o, req, ledger, args, admitted, analytics);
    if (errors.length === 0) await checkCost(o, req, ledger, plans, analytics, errors);
    if (errors.length > 0) return { errors };
    return executeInTime(o, ledger, args, plans);
  };
