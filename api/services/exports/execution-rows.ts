// The row number an execution's results file carries (docs/rest-and-sql.md, "SQL executions"):
// each row written with its place in the result (0, 1, …) in a column of its own, so a results
// page is a range of that column. The engine's Parquet reader skips the pages and row groups
// outside the range by their statistics, so a page reads its own rows only: read by offset
// (LIMIT … OFFSET …) every page read the whole file, and paging a result cost the square of its size.
import type { JobRecord } from './job-store.ts';

/** An engine identifier in backquotes (names come from the engine's DESCRIBE of the client's query). */
export const quotedName = (name: string): string => `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;

const ROW_COLUMN = '_row';

/** The row number's column name: `_row`, or `_row_2`, `_row_3`… when the result has a column of that name. */
export function rowColumnFor(columns: readonly { name: string }[] | null): string {
  const taken = new Set((columns ?? []).map((c) => c.name));
  let name = ROW_COLUMN;
  for (let i = 2; taken.has(name); i++) name = `${ROW_COLUMN}_${i}`;
  return name;
}

/**
 * `select`'s rows, each with its place in the result in `column`. Numbered after the
 * statement's own ORDER BY and LIMIT (one ordered stream by then), so the numbers follow the
 * rows' order in the file.
 */
export const numberedRows = (select: string, column: string): string => `SELECT *, rowNumberInAllBlocks() AS ${quotedName(column)} FROM (\n${select}\n)`;

/** The row-number column of an execution's file, or undefined (not an execution, or one written before files were numbered). */
export const rowColumnOf = (job: JobRecord): string | undefined => job.execution?.rowColumn;

/** The columns the job's files hold: its schema, and an execution's row numbers after them (for the manifest and card). */
export function fileSchema(job: JobRecord): JobRecord['schema'] {
  const rowColumn = rowColumnOf(job);
  return rowColumn === undefined || job.schema === null ? job.schema : [...job.schema, { name: rowColumn, type: 'UInt64' }];
}
