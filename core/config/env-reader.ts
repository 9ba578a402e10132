// Reading an environment against a schema of variables (env-schema.ts): each variable is
// converted to its declared type and checked against its bounds; a wrong one is recorded as
// a problem and replaced by its default, so that every problem of a deployment is reported
// at once. The sections then check what spans variables (config-sections.ts).
import type { Static, TObject, TSchema } from '@sinclair/typebox';

export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** The options a variable's schema may carry beyond JSON Schema's (env-schema.ts). */
interface VarSchema extends TSchema {
  type?: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  pattern?: string;
  patternWords?: string;
  format?: string;
  protocols?: readonly string[];
  raw?: boolean;
  lowerCase?: boolean;
  commaList?: string;
  anyOf?: { const: string }[];
  items?: VarSchema;
}

export class Problems {
  readonly list: string[] = [];
  add(message: string): void {
    this.list.push(message);
  }
}

/** Every variable of `schema` read from `env`, in the schema's order, problems into `problems`. */
export function readEnv<T extends TObject>(schema: T, env: Env, problems: Problems): Static<T> {
  const out: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(schema.properties as Record<string, VarSchema>)) {
    const given = s.raw ? env[name] : env[name]?.trim();
    out[name] = given === undefined || given === '' ? (s.raw ? (given ?? s.default) : s.default) : convert(name, given, s, problems);
  }
  return out as Static<T>;
}

function convert(name: string, given: string, s: VarSchema, problems: Problems): unknown {
  if (s.type === 'integer') return integer(name, given, s, problems);
  if (s.type === 'boolean') return boolean(name, given, s, problems);
  if (s.anyOf !== undefined) return oneOf(name, given, s, problems);
  if (s.type === 'array') return commaList(name, given, s, problems);
  if (s.format === 'url') return url(name, given, s.protocols ?? [], problems);
  if (s.minLength !== undefined && given.length < s.minLength) problems.add(`${name} must be at least ${s.minLength} characters`);
  if (s.pattern !== undefined && !new RegExp(s.pattern).test(given)) problems.add(`${name} must be ${s.patternWords}, got "${given}"`);
  return given;
}

function integer(name: string, given: string, s: VarSchema, problems: Problems): number | undefined {
  if (!/^-?\d+$/.test(given)) {
    problems.add(`${name} must be an integer, got "${given}"`);
    return s.default as number | undefined;
  }
  const n = Number(given);
  if (n < (s.minimum ?? -Infinity) || n > (s.maximum ?? Infinity)) problems.add(`${name} must be between ${s.minimum} and ${s.maximum}, got ${n}`);
  return n;
}

function boolean(name: string, given: string, s: VarSchema, problems: Problems): boolean {
  const v = given.toLowerCase();
  if (['1', 'true', 'yes'].includes(v)) return true;
  if (['0', 'false', 'no'].includes(v)) return false;
  problems.add(`${name} must be true or false, got "${v}"`);
  return s.default as boolean;
}

function oneOf(name: string, given: string, s: VarSchema, problems: Problems): string {
  const v = s.lowerCase ? given.toLowerCase() : given;
  const values = s.anyOf!.map((a) => a.const);
  if (values.includes(v)) return v;
  problems.add(`${name} must be ${values.length === 2 ? values.join(' or ') : `one of ${values.join(', ')}`}, got "${v}"`);
  return s.default as string;
}

/** A comma-separated list, each entry checked against the items' pattern. */
function commaList(name: string, given: string, s: VarSchema, problems: Problems): string[] {
  const items = given
    .split(',')
    .map((b) => b.trim())
    .filter(Boolean);
  for (const b of items) if (!new RegExp(s.items!.pattern!).test(b)) problems.add(`${name} entry "${b}" must be ${s.items!.patternWords}`);
  if (items.length === 0) problems.add(`${name} is set but lists no ${s.commaList}`);
  return items;
}

function url(name: string, given: string, protocols: readonly string[], problems: Problems): string {
  try {
    const u = new URL(given);
    if (!protocols.includes(u.protocol)) problems.add(`${name} must use ${protocols.join(' or ')}, got "${u.protocol}"`);
  } catch {
    problems.add(`${name} is not a valid URL: "${given}"`);
  }
  return given;
}
