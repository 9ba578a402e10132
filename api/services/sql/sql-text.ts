// The SQL text field of the SQL interface's bodies (POST /v1/query, POST /v1/query/exports)
// as the OpenAPI document states it: what JSON Schema can say (a non-blank string within
// the length limit), and, for what it cannot (the SELECT language the sandbox accepts), a
// rule naming the language with queries that are valid in it (x-cross-field-rules).
import { SQL_MAX_LENGTH } from '../../../core/limits/sql.ts';
import { TABLES } from '../../../warehouse/tables.ts';

const T = TABLES.transactions;

/** Valid queries over the published tables: the documented examples, and the ones the
 *  contract fuzzer sends where its generator would draw arbitrary text. */
export const SQL_EXAMPLES = [
  `SELECT protocol_name, count() AS n FROM ${T} GROUP BY protocol_name ORDER BY n DESC`,
  `SELECT signature, protocol_name, fee FROM ${T} WHERE success = 0 ORDER BY fee DESC LIMIT 10`,
  `SELECT date, count() AS n, avg(compute_units) AS cu FROM ${T} GROUP BY date ORDER BY date LIMIT 31`,
  `WITH p AS (SELECT protocol_name, avg(fee) AS avg_fee FROM ${T} GROUP BY protocol_name) SELECT protocol_name, avg_fee FROM p ORDER BY avg_fee DESC`,
  `SELECT instruction_type, count() AS n FROM ${T} GROUP BY instruction_type HAVING n > 1 ORDER BY n DESC LIMIT 20`,
] as const;

/** Valid export queries: sampling and splits are drawn by transaction, so an export's
 *  result needs a `signature` column (a String). */
export const SQL_EXPORT_EXAMPLES = [
  `SELECT signature, protocol_name, fee FROM ${T} WHERE success = 0 ORDER BY fee DESC LIMIT 100`,
  `SELECT signature, instruction_type, compute_units FROM ${T} WHERE protocol_name = 'jupiter_v6' LIMIT 500`,
  `SELECT signature, date, hour, fee, success FROM ${T} ORDER BY fee DESC LIMIT 1000`,
] as const;

export const sqlText = {
  type: 'string',
  minLength: 1,
  maxLength: SQL_MAX_LENGTH,
  // Not blank: at least one character that is not white space.
  pattern: '\\S',
  examples: [...SQL_EXAMPLES],
} as const;

/** The SQL text is a language, not a shape: a string the schema admits may still be
 *  refused (400 Invalid query). `valid`: queries in it. */
const languageRule = (valid: readonly string[], language: string) => ({ rule: 'language', property: 'query', language, valid: [...valid] }) as const;
export const SQL_LANGUAGE_RULE = languageRule(SQL_EXAMPLES, 'read-only ClickHouse SELECT (docs/rest-and-sql.md)');
export const SQL_EXPORT_LANGUAGE_RULE = languageRule(
  SQL_EXPORT_EXAMPLES,
  'read-only ClickHouse SELECT with a signature column when sampling or splitting (docs/exports.md)',
);
