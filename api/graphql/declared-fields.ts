// GraphQL's side of the operations declared by their request (api/catalog/declared.ts):
// each becomes a Query field whose SDL is derived from the declaration (protocols and the
// range under `filters: TransactionFilters`, the other scalar fields as arguments, the
// result's types from its schema, the cross-field rules in the description), and whose plan
// maps the arguments onto the request's names for the one check (Analytics.prepare).
import type { TObject, TSchema } from '@sinclair/typebox';
import { invalidParams } from '../../core/errors.ts';
import { INT64 } from '../../core/vocabulary/primitives.ts';
import type { Analytics } from '../analytics/analytics.ts';
import type { Operation } from '../catalog/declare.ts';
import { scalarFields } from '../catalog/declared.ts';
import { GRAPHQL_DAYS, takesOnly, type Args, type FiltersArg } from './question-args.ts';
import type { FieldPlan } from './field-plans.ts';

const upper = (s: string): string => `${s[0]!.toUpperCase()}${s.slice(1)}`;

/** The SDL type of a schema; object types are written to `types` under `name`. */
function sdlOf(s: TSchema, name: string, types: string[]): string {
  if (s.type === 'array') return `[${sdlOf(s.items as TSchema, `${name}Item`, types)}!]`;
  if (s.type === 'object') {
    const required = new Set<string>((s.required as string[] | undefined) ?? []);
    const fields = Object.entries(s.properties as Record<string, TSchema>).map(
      ([k, p]) => `  ${k}: ${sdlOf(p, `${name}${upper(k)}`, types)}${required.has(k) ? '!' : ''}`,
    );
    types.push(`type ${name} {\n${fields.join('\n')}\n}`);
    return name;
  }
  if (s.type === 'integer') return s.format === INT64 ? 'BigInt' : 'Int';
  const scalar: Record<string, string> = { string: 'String', number: 'Float', boolean: 'Boolean' };
  const t = scalar[String(s.type)];
  if (t === undefined) throw new Error(`no GraphQL type is derived for ${JSON.stringify(s).slice(0, 80)}: declare the field in the SDL`);
  return t;
}

/** The filters a declared request takes on GraphQL. */
function filtersOf(schema: TObject): string[] {
  return [
    ...('protocol' in schema.properties || 'protocols' in schema.properties ? ['protocols'] : []),
    ...('range' in schema.properties ? ['dateRange'] : []),
  ];
}

const declaredOps = (catalog: readonly Operation[]) =>
  catalog.filter((op) => op.request !== undefined && op.result !== undefined && op.graphql?.derived === true && op.respond !== undefined);

/** The SDL of the catalog's declared operations: their Query fields and result types. */
export function declaredSdl(catalog: readonly Operation[]): string {
  const types: string[] = [];
  const fields = declaredOps(catalog).map((op) => {
    const schema = op.request!.schema;
    const args = [
      ...(filtersOf(schema).length > 0 ? ['filters: TransactionFilters'] : []),
      ...scalarFields(schema).map(([k, s]) => `${k}: ${sdlOf(s, k, types)}`),
    ];
    const result = sdlOf(op.result!, `${upper(op.graphql!.field)}Result`, types);
    const rules = op.request!.rules.map((r) => JSON.stringify(r.doc)).join('; ');
    const description = `${op.summary}.${filtersOf(schema).length > 0 ? ` Filters: ${filtersOf(schema).join(', ')}.` : ''}${rules ? ` Rules: ${rules}.` : ''}`;
    return `  ${JSON.stringify(description)}\n  ${op.graphql!.field}${args.length > 0 ? `(${args.join(', ')})` : ''}: ${result}!`;
  });
  return fields.length === 0 ? '' : `${types.join('\n\n')}\n\nextend type Query {\n${fields.join('\n')}\n}`;
}

/** GraphQL's name of a request field's path. */
const graphqlName = (path: string): string => ({ protocol: 'filters.protocols', protocols: 'filters.protocols', range: 'filters.dateRange' })[path] ?? path;

/** The plan of a declared field: its arguments mapped onto the request, checked now (before anything runs), answered when run. */
export async function declaredPlan(catalog: readonly Operation[], a: Analytics, field: string, args: Args): Promise<FieldPlan | undefined> {
  const op = declaredOps(catalog).find((o) => o.graphql!.field === field);
  if (op === undefined) return undefined;
  const schema = op.request!.schema;
  const f = args.filters as FiltersArg | null | undefined;
  takesOnly(f, field, filtersOf(schema));
  const values: Record<string, unknown> = Object.fromEntries(scalarFields(schema).map(([k]) => [k, args[k]]));
  if ('protocols' in schema.properties) values.protocols = f?.protocols;
  if ('protocol' in schema.properties) {
    // One protocol, or the list left out for all of them: an empty list is neither (it read as "all").
    const asked = f?.protocols ?? undefined;
    if (asked !== undefined && asked.length !== 1) {
      throw invalidParams(
        `filters.protocols: ${field} answers for one protocol (got ${asked.length}); leave filters.protocols out for all of them`,
        'protocols',
      );
    }
    values.protocol = asked?.[0];
  }
  const d = f?.dateRange;
  const input = { values, ...(d ? { days: { from: d.start, to: d.end, names: GRAPHQL_DAYS } } : {}) };
  // Checked while planning, so a refusal comes before anything runs, as for the other fields.
  const prepared = await a.prepare({ request: op.request!, respond: op.respond! }, input, graphqlName);
  return { question: { kind: 'fixed' }, run: () => prepared.answer() };
}
