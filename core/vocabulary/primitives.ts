// The primitives every interface and the ingest record share, defined once as JSON Schema
// (TypeBox) so the validation rule, the TypeScript type and the OpenAPI text cannot drift.
// `description` doubles as the human rule in error messages ("must be <description>").
import { Type, type IntegerOptions, type NumberOptions, type Static } from '@sinclair/typebox';
import { invalidParams } from '../errors.ts';
import { calendarDayPattern } from './calendar.ts';
import { HTTP_MAX_PATH_PARAM_CHARS } from '../limits/http.ts';
import {
  FILTER_LIST_MAX,
  INSTRUCTION_TYPE_MAX_CHARS,
  MAX_BLOCK_DATE,
  MAX_BLOCK_TIME,
  MIN_BLOCK_DATE,
  MIN_BLOCK_TIME,
  SIGNATURE_LIST_MAX,
} from '../limits/questions.ts';

/** Base58 (Bitcoin alphabet): no 0, O, I or l. */
const BASE58 = '[1-9A-HJ-NP-Za-km-z]';
export const BASE58_SIGNATURE = `^${BASE58}{64,88}$`;
export const BASE58_ADDRESS = `^${BASE58}{32,44}$`;
/** Lowercase snake_case, as the registry names protocols (DESIGN section 5). */
export const PROTOCOL_NAME_PATTERN = '^[a-z][a-z0-9_]{0,63}$';
export const DAY_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$';

export const Signature = Type.String({ pattern: BASE58_SIGNATURE, description: 'a Base58 signature of 64-88 characters' });
export const Address = Type.String({ pattern: BASE58_ADDRESS, description: 'a Base58 address of 32-44 characters' });
export const ProtocolName = Type.String({
  pattern: PROTOCOL_NAME_PATTERN,
  description: 'a lowercase snake_case protocol name of 1-64 characters, e.g. jupiter_v6',
});
/** The `$comment` of a protocol name checked against the registry's active names (an
 *  unknown or inactive one is refused), so a document can list those names as its enum. */
export const ACTIVE_PROTOCOL_COMMENT = 'one of the active protocol names (the registry)';
export const ActiveProtocolName = Type.String({ ...ProtocolName, $comment: ACTIVE_PROTOCOL_COMMENT });
/** The format name of Int64 (and of UnixSeconds, a number that is a whole number). */
export const INT64 = 'int64';
/**
 * A whole number that may pass 2^31: counts and totals of records, lamports and compute units
 * and their sums, rows and bytes, costs, seeds (0..2^32-1), Unix seconds (past 2038). Every
 * document says `format: int64`, so a generated client reads it into a 64-bit integer (a bare
 * `integer` is 32-bit to openapi-generator and its like). Exact as a JSON number below 2^53; a
 * slot, which can pass that, is a decimal string instead.
 */
export const Int64 = (options: IntegerOptions = {}) => Type.Integer({ ...options, format: INT64 });
export const DOUBLE = 'double';
/** A number that need not be whole (an average, a rate, a percentile, a fraction): `format:
 *  double` in every document, so a generated client reads it as 64-bit, not as a 32-bit float. */
export const Float64 = (options: NumberOptions = {}) => Type.Number({ ...options, format: DOUBLE });
/** The formats the schemas above name, for a validator (ajv) that compiles them: a number
 *  format is a type for generated clients; to a validator int64 is a whole number, double any. */
export const NUMBER_FORMATS: Readonly<Record<string, { type: 'number'; validate: (n: number) => boolean }>> = {
  [INT64]: { type: 'number', validate: (n) => Number.isInteger(n) },
  [DOUBLE]: { type: 'number', validate: () => true },
};
/** Unsigned column types by the largest whole number each holds: the formats of whole numbers
 *  written as canonical decimal text (GraphQL's BigInt scalar hands bounds so: slots and fees
 *  pass 2^53), which a validator compares exactly, as BigInt. */
const UNSIGNED = { uint16: 2n ** 16n - 1n, uint32: 2n ** 32n - 1n, uint64: 2n ** 64n - 1n } as const;
const WHOLE_TEXT = '^(0|[1-9][0-9]*)$';
const WHOLE_TEXT_RE = new RegExp(WHOLE_TEXT);
export const DECIMAL_FORMATS: Readonly<Record<string, { type: 'string'; validate: (s: string) => boolean }>> = Object.fromEntries(
  Object.entries(UNSIGNED).map(([name, max]) => [name, { type: 'string', validate: (s: string) => WHOLE_TEXT_RE.test(s) && BigInt(s) <= max }]),
);
/** A whole number from 0 to `max` (an unsigned column's largest) as canonical decimal text. */
export function WholeText(max: bigint, description: string) {
  const format = Object.entries(UNSIGNED).find(([, m]) => m === max)?.[0];
  if (format === undefined) throw new Error(`no unsigned column type holds at most ${max}`);
  return Type.String({ pattern: WHOLE_TEXT, format, description, 'x-refusal': `must be a whole number from 0 to ${max} (got {number})` });
}
/** Largest value of a UInt16 column (instruction_index, accounts_count): such a field fits 32 bits. */
export const UINT16_MAX = 2 ** 16 - 1;
export const UINT32_MAX = 2 ** 32 - 1;

export const InstructionType = Type.String({
  minLength: 1,
  maxLength: INSTRUCTION_TYPE_MAX_CHARS,
  description: `an instruction type of 1-${INSTRUCTION_TYPE_MAX_CHARS} characters`,
});
/** Whole Unix seconds the store can hold (block_time is DateTime, UInt32). A number that is
 *  a multiple of 1 rather than an integer type, so 1.5 reads as "not a whole number" (a bad
 *  value), not as a wrong JSON type (an unparsable filter, in JSON-RPC's classification). */
export const UnixSeconds = Type.Number({ multipleOf: 1, minimum: MIN_BLOCK_TIME, maximum: MAX_BLOCK_TIME, format: INT64 });
/** The range filter {gte, lte}, both inclusive Unix seconds. */
export const BlockTimeRange = Type.Object({ gte: Type.Optional(UnixSeconds), lte: Type.Optional(UnixSeconds) }, { additionalProperties: false });
/** A calendar day, UTC. */
export const Day = Type.String({ pattern: DAY_PATTERN, description: 'a date written YYYY-MM-DD' });
/** A real calendar day the store can hold (MIN_BLOCK_DATE..MAX_BLOCK_DATE): the rule of
 *  dayStart() as a pattern, so a schema (the OpenAPI document's) states it in full. */
export const CALENDAR_DAY_PATTERN = calendarDayPattern(MIN_BLOCK_DATE, MAX_BLOCK_DATE);
export const CalendarDay = Type.String({
  format: 'date',
  pattern: CALENDAR_DAY_PATTERN,
  description: `a calendar date written YYYY-MM-DD, ${MIN_BLOCK_DATE} to ${MAX_BLOCK_DATE}`,
});
/** Marks a day a request's one check converts (core/request-check.ts daySpan, before its
 *  schema, in its own words: which part of the day is wrong); a door's documents state
 *  CalendarDay's rule in its place. */
export const CHECKED_DAY_COMMENT = 'a calendar day the one check converts (daySpan)';
/** A day as a door hands it to the one check: text, whose rule (CalendarDay's) the check states. */
export const CheckedDay = Type.String({ description: CalendarDay.description, $comment: CHECKED_DAY_COMMENT });

/** A path parameter of any route: at most HTTP_MAX_PATH_PARAM_CHARS characters (longer is
 *  414, before any route sees it), stated as its maxLength so the documents carry the limit.
 *  A tighter rule of its own (a signature's pattern) still applies within it. */
export const pathParam = <T extends object>(schema: T): T & { maxLength: number } => ({ ...schema, maxLength: HTTP_MAX_PATH_PARAM_CHARS });

/** The list filters every interface takes (JSON-RPC's options.filters.*, GraphQL's
 *  filters.*): each item's primitive and the most items one list may hold. */
export const FILTER_LISTS = {
  protocols: { item: ProtocolName, max: FILTER_LIST_MAX },
  instructionTypes: { item: InstructionType, max: FILTER_LIST_MAX },
  programIds: { item: Address, max: FILTER_LIST_MAX },
  signatures: { item: Signature, max: SIGNATURE_LIST_MAX },
} as const;

export const TX_STATUSES = ['succeeded', 'failed', 'all'] as const;
export const TxStatus = Type.Union(TX_STATUSES.map((s) => Type.Literal(s)));
export const SORT_ORDERS = ['asc', 'desc'] as const;
export const SortOrder = Type.Union(SORT_ORDERS.map((s) => Type.Literal(s)));

export type TxStatus = (typeof TX_STATUSES)[number];
export type SortOrder = (typeof SORT_ORDERS)[number];
export type Signature = Static<typeof Signature>;

const RULES: ReadonlyMap<string, string> = new Map(
  [Signature, Address, ProtocolName, Day, CalendarDay].map((s) => [s.pattern as string, s.description as string]),
);

/** The human rule of a primitive's pattern ("a Base58 signature of 64-88 characters"), for
 *  validators that report only the pattern a value failed. */
export function ruleOfPattern(pattern: unknown): string | undefined {
  return typeof pattern === 'string' ? RULES.get(pattern) : undefined;
}

/** The rule of a primitive stated by its lengths alone (no pattern: an instruction type), from its schema. */
export function ruleOfLengths(schema: { description?: unknown } | undefined): string | undefined {
  return schema?.description === InstructionType.description ? InstructionType.description : undefined;
}

/** How a door words a day it refuses: not a calendar day written YYYY-MM-DD, or outside the
 *  days the store can hold. `field` names the parameter as the caller gave it. */
export interface DayWords {
  notADay(field: string, value: string): string;
  outOfRange(field: string, value: string): string;
}

/** The vocabulary's words for a refused day (JSON-RPC, REST and GraphQL use them). */
export const DAY_WORDS: DayWords = {
  notADay: (field, value) => `${field} must be a calendar date written YYYY-MM-DD, got "${value}"`,
  outOfRange: (field, value) => `${field} must be between ${MIN_BLOCK_DATE} and ${MAX_BLOCK_DATE} (the days block times can be stored for), got "${value}"`,
};

/** Unix seconds of 00:00:00 UTC of a YYYY-MM-DD day (a real calendar day the store can
 *  hold), or invalid params naming `field` in the caller's words (`error`: the field the
 *  error carries, `field` unless given). */
export function dayStart(value: string, field: string, words: DayWords = DAY_WORDS, error = field): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const ms = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : NaN;
  // Date.UTC rolls 2025-02-30 over to March: a round trip catches impossible days.
  if (!m || Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value) throw invalidParams(words.notADay(field, value), error);
  // Block times are UInt32 seconds: a day outside them cannot match anything, and its
  // seconds would wrap around (2162-12-29 read as 2026) or be refused by the engine.
  if (value < MIN_BLOCK_DATE || value > MAX_BLOCK_DATE) throw invalidParams(words.outOfRange(field, value), error);
  return ms / 1000;
}
