// GraphQL's side of the operations declared by their request (api/catalog/declared.ts):
// each becomes a Query field whose SDL is derived from the declaration (protocols and the
// range under `filters: TransactionFilters`, the other scalar fields as arguments, the
// result's types from its schema, the cross-field rules in the description), and whose plan
// maps the arguments onto the request's names for the one check (Analytics.prepare).
import type { TObject, TSchema } from '@sinclair/typebox';
import { invalidParams } from '../../../core/errors.ts';
import { QUOTED_PARAM_VALUE_MAX_CHARS } from '../../../core/limits/questions.ts';
import { INT64 } from '../../../core/vocabulary/primitives.ts';
import type { Analytics } from '../../analytics/analytics.ts';
import type { Transaction } from '../../analytics/types.ts';
import type { CheckedRequest, RequestInput } from '../../../core/request-check.ts';
import type { Operation } from '../../catalog/declare.ts';
import { scalarFields } from '../../catalog/declared.ts';
import { GRAPHQL_DAYS, graphqlName, takesOnly, type Args, type FiltersArg } from './question-args.ts';
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
  if (t === undefined)
    throw new Error(`no GraphQL type is derived for ${JSON.stringify(s).slice(0, QUOTED_PARAM_VALUE_MAX_CHARS)}: declare the field in the SDL`);
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

/** The SDL's own fields asked through a declared operation (by its catalog name): the field's
 *  arguments beyond `filters` that reach the request, how the answer is shown, and how many items it counts. */
interface SdlField {
  op: string;
  args?(args: Args): Record<string, unknown>;
  shape?(answer: unknown): unknown;
  /** Items its arguments ask for, before anything runs (GRAPHQL_MAX_DOCUMENT_POINTS). */
  points?(checked: CheckedRequest): number;
}

/** A record with its UTC day and hour, as the SDL's Transaction shows it. */
const transactionOut = (t: Transaction | null): Record<string, unknown> | null => {
  if (t === null) return null;
  const d = new Date(t.blockTime * 1000);
  return { ...t, date: d.toISOString().slice(0, 10), hour: d.getUTCHours() };
};

const SDL_FIELDS: Readonly<Record<string, SdlField>> = {
  signature: { op: 'transaction', args: (args) => ({ signature: args.signature }), shape: (t) => transactionOut(t as Transaction | null) },
  protocolStats: { op: 'protocolStatsList', points: (c) => c.protocolsAsked?.length ?? 1 },
  protocols: { op: 'protocols' },
};

/** The declared operation a Query field asks, and how: derived from its request, or the SDL's own field mapped onto it. */
function fieldOf(catalog: readonly Operation[], field: string): { op: Operation; sdl: SdlField } | undefined {
  const derived = declaredOps(catalog).find((o) => o.graphql!.field === field);
  if (derived !== undefined)
    return { op: derived, sdl: { op: derived.name, args: (args) => Object.fromEntries(scalarFields(derived.request!.schema).map(([k]) => [k, args[k]])) } };
  const sdl = SDL_FIELDS[field];
  const op = catalog.find((o) => o.name === sdl?.op && o.request !== undefined && o.respond !== undefined);
  return sdl === undefined || op === undefined ? undefined : { op, sdl };
}

/** A field's arguments as the request's input: `filters` onto protocols and the days (only the filters the request takes), the others as `sdl` maps them. */
function inputOf(schema: TObject, field: string, sdl: SdlField, args: Args): RequestInput {
  const f = args.filters as FiltersArg | null | undefined;
  takesOnly(f, field, filtersOf(schema));
  const values: Record<string, unknown> = sdl.args?.(args) ?? {};
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
  return { values, ...(d ? { days: { from: d.start, to: d.end, names: GRAPHQL_DAYS } } : {}) };
}

/**
 * The plan of a field asked through a declared request: its arguments mapped onto the request
 * and checked now, by the one check (a refusal comes before anything runs); an answer declared
 * as prepared statements is costed by them, and run when the field runs.
 */
export async function declaredPlan(catalog: readonly Operation[], a: Analytics, field: string, args: Args): Promise<FieldPlan | undefined> {
  const found = fieldOf(catalog, field);
  if (found === undefined) return undefined;
  const { op, sdl } = found;
  const input = inputOf(op.request!.schema, field, sdl, args);
  const shape = sdl.shape ?? ((v: unknown) => v);
  const checked = await a.check(op.request!, input, graphqlName);
  if (op.prepared === undefined) return { question: { kind: 'fixed' }, run: async () => shape(await op.respond!(a, checked)) };
  // Its statements built (nothing read yet): what the guard costs, then runs.
  const prepared = await op.prepared(a, checked);
  return {
    question: prepared,
    points: sdl.points?.(checked) ?? 1,
    async run(meter) {
      const answer = await prepared.answer();
      if (Array.isArray(answer)) meter.count(answer.length);
      return shape(answer);
    },
  };
}
