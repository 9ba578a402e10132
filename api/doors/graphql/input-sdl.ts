// GraphQL's input side of a request declared once (core/request-check.ts `request`): the
// arguments of a field and the input types they take, derived from the declaration's TypeBox
// schema, so that the SDL never states a field the check does not (nor misses one). A name
// list of SCREAMING_CASE values is an enum named by its `title` (`x-enum` when read in any
// case); other names (columns, protocols) stay strings, whose refusals the check words. A
// whole number GraphQL's 32-bit Int cannot hold is a Float (exact to 2^53).
import type { TObject, TSchema } from '@sinclair/typebox';
import { GRAPHQL_INT_MAX } from '../../../core/limits/graphql.ts';
import { QUOTED_PARAM_VALUE_MAX_CHARS } from '../../../core/limits/questions.ts';

/** The SDL of the types an input refers to, by name (each written once however often used). */
export type InputTypes = Map<string, string>;

const described = (s: TSchema, indent: string): string => (typeof s.description === 'string' ? `${indent}${JSON.stringify(s.description)}\n` : '');

/** The enum values of a name list, when GraphQL shows it as an enum. */
function enumValues(s: TSchema): string[] | undefined {
  const values = (s['x-enum'] ?? s.enum) as string[] | undefined;
  return values !== undefined && typeof s.title === 'string' && values.every((v) => /^[A-Z][A-Z_]*$/.test(v)) ? values : undefined;
}

/** The GraphQL input type of `s`; object and enum types are written to `types`. `shared` names
 *  fields whose type the SDL already holds (an export's filters are TransactionFilters). */
export function inputType(s: TSchema, types: InputTypes, shared: Readonly<Record<string, string>> = {}): string {
  const values = enumValues(s);
  if (values !== undefined) {
    types.set(s.title as string, `${described(s, '')}enum ${s.title} {\n${values.map((v) => `  ${v}`).join('\n')}\n}`);
    return s.title as string;
  }
  if (s.type === 'array') return `[${inputType(s.items as TSchema, types, shared)}!]`;
  if (s.type === 'object') {
    if (typeof s.title !== 'string') throw new Error('an input object needs a title: its GraphQL name');
    types.set(s.title, `${described(s, '')}input ${s.title} {\n${inputFields(s as TObject, types, shared).join('\n')}\n}`);
    return s.title;
  }
  if (s.type === 'integer') return typeof s.maximum === 'number' && s.maximum <= GRAPHQL_INT_MAX ? 'Int' : 'Float';
  const scalar: Record<string, string> = { string: 'String', number: 'Float', boolean: 'Boolean' };
  const t = scalar[String(s.type)];
  if (t === undefined) throw new Error(`no GraphQL input type is derived for ${JSON.stringify(s).slice(0, QUOTED_PARAM_VALUE_MAX_CHARS)}`);
  return t;
}

/** The fields of an object as GraphQL arguments or input fields: description, name, type, default. */
export function inputFields(schema: TObject, types: InputTypes, shared: Readonly<Record<string, string>> = {}, indent = '  '): string[] {
  const required = new Set<string>(schema.required ?? []);
  return Object.entries(schema.properties).map(([k, p]) => {
    const type = shared[k] ?? inputType(p, types, shared);
    const dflt = p.default !== undefined && enumValues(p) !== undefined ? ` = ${String(p.default)}` : '';
    return `${described(p, indent)}${indent}${k}: ${type}${required.has(k) ? '!' : ''}${dflt}`;
  });
}
