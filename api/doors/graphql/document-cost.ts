// What a GraphQL query will be charged (the guard's `requested`, request-guard.ts: its
// extensions.cost.requested), computed before anything of it runs: each top-level field
// planned and costed by the one cost model, as the guard plans and costs them. The x402 plan
// prices a keyless document so (api/services/x402/x402-pricing.ts; app.ts wires it). A document the
// guard would refuse (no operation, a mutation, variables that do not coerce, a field that
// cannot be planned) has no price here: the caller falls back to the base cost per field.
import type { FastifyRequest } from 'fastify';
import { getArgumentValues, getOperationAST, getVariableValues, parse, type GraphQLSchema } from 'graphql';
import { Budget } from '../../../core/budget.ts';
import { GRAPHQL_MAX_VARIABLE_ERRORS, GRAPHQL_SCAN_MAX_TOKENS } from '../../../core/limits/graphql.ts';
import { PLAN_QUERY_BUDGET } from '../../../core/plans.ts';
import type { Analytics } from '../../analytics/analytics.ts';
import { connectionSelection } from './connection-plans.ts';
import { CATALOG } from '../../catalog/catalog.ts';
import { declaredPlan } from './declared-fields.ts';
import { planField } from './field-plans.ts';
import { questionsOf } from './schema.ts';
import { topLevelFields } from './request-guard.ts';
import { readParams } from './request-params.ts';

/** The cost units of `req`'s query document for the x402 plan, or undefined when it has none. */
export async function documentCost(schema: GraphQLSchema, analytics: Analytics, req: FastifyRequest): Promise<number | undefined> {
  try {
    const params = readParams(req);
    const document = parse(params.query, { maxTokens: GRAPHQL_SCAN_MAX_TOKENS });
    const op = getOperationAST(document, params.operationName);
    if (op?.operation !== 'query') return undefined;
    const coerced = getVariableValues(schema, op.variableDefinitions ?? [], params.variables ?? {}, { maxErrors: GRAPHQL_MAX_VARIABLE_ERRORS });
    if (coerced.errors) return undefined;
    const variables = coerced.coerced;
    const rootFields = schema.getQueryType()?.getFields() ?? {};
    // Planned under a budget of the x402 plan's own (a listing reads its page window to be prepared).
    const under = analytics.under(new Budget('x402', 'graphql'));
    let units = 0;
    for (const [key, node] of topLevelFields(document, op, variables)) {
      const def = rootFields[node.name.value];
      if (def === undefined || node.name.value.startsWith('__')) continue;
      const fieldArgs = getArgumentValues(def, node, variables);
      const plan =
        (await planField(
          under,
          questionsOf(schema, analytics.measures),
          node.name.value,
          fieldArgs,
          PLAN_QUERY_BUDGET.x402,
          connectionSelection(document, op, key, variables),
        )) ?? (await declaredPlan(CATALOG, under, node.name.value, fieldArgs));
      if (plan === undefined) return undefined;
      units += (await under.cost(plan.question)).score;
    }
    return units;
  } catch {
    return undefined;
  }
}
