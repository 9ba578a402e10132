// (b2f)'s common path (bench/single-pass.ts, design 'fast'; bench/RESULTS.md, checks40): the
// shape test of a raw NDJSON line, the typed row of a line that passes it, and the row's
// columns as the base table holds them. A prototype, not wired into the pipeline.
/** A literal for view text (the registry's names are snake_case and its programs Base58; escaped anyway). */
export const lit = (s: string): string => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

// (b2f)'s common path (bench/RESULTS.md, checks40). A line that matches SHAPE is a flat JSON
// object of known fields, each value in a form its checks pass (no blanks, escapes or control
// characters; canonical unsigned integers; Base58 and name patterns; true/false), so its typed
// values are the values migration 121's text checks read. KEYS_DISTINCT: in such a line a key
// is the only '":', so the count of those against the known keys found proves none is unknown
// or repeated. fastTests: what the shape does not fix (bounds, required fields, the registry).
const B58 = '[1-9A-HJ-NP-Za-km-z]';
const TEXT = String.raw`"[^"\\\x00-\x1f]*"`;
const UINT = (digits: number): string => `(0|[1-9][0-9]{0,${digits - 1}})`;
const FAST_VALUE: Record<string, string> = {
  signature: `"${B58}{64,88}"`,
  instruction_index: UINT(4),
  transaction_index: UINT(5),
  slot: UINT(11),
  block_time: UINT(10),
  program_id: `"${B58}{32,44}"`,
  protocol_name: '"[a-z][a-z0-9_]{0,63}"',
  instruction_type: TEXT,
  fee: UINT(15),
  compute_units: UINT(10),
  accounts: String.raw`\[("${B58}{32,44}"(,"${B58}{32,44}")*)?\]`,
  accounts_count: UINT(5),
  success: '(true|false)',
  error_message: TEXT,
  log_messages: TEXT,
  raw_data: TEXT,
};
const PAIR = `(${Object.entries(FAST_VALUE)
  .map(([k, v]) => `"${k}":${v}`)
  .join('|')})`;
export const SHAPE = lit(String.raw`^\{${PAIR}(,${PAIR})*\}$`);
const has = (k: string): string => `position(line, '"${k}":') > 0`;
/** All of its tests, unlike AND evaluated whole (AND's short-circuit masks made the shape test
 *  2.3x the cost of its parts: bench/RESULTS.md, checks40). */
const all = (tests: string[]): string => `least(${tests.join(', ')})`;
const KEYS_DISTINCT = all([
  `countSubstrings(line, '":') = ${Object.keys(FAST_VALUE)
    .map((k) => `(${has(k)})`)
    .join(' + ')}`,
  ...['signature', 'slot', 'block_time', 'program_id', 'protocol_name', 'instruction_type', 'fee', 'compute_units', 'success', 'transaction_index'].map(has),
  `greatest(${has('accounts')}, ${has('accounts_count')})`,
]);
/** The shape test of a raw line (a line within the size limit, valid UTF-8, of the shape, its keys distinct). */
export const shapeTest = (maxBytes: number): string => all([`length(line) <= ${maxBytes}`, 'isValidUTF8(line)', `match(line, ${SHAPE})`, KEYS_DISTINCT]);
export const FAST_TYPE = `Tuple(${Object.keys(FAST_VALUE)
  .filter((k) => k !== 'success')
  .map((k) => `${k} ${k === 'accounts' ? 'Array(String)' : FAST_VALUE[k]!.startsWith('"') ? 'String' : 'UInt64'}`)
  .join(', ')})`;
export const fastTests = (names: string, programs: string): string =>
  all([
    't.instruction_index <= 8191',
    't.transaction_index <= 65535',
    't.block_time <= 4294967295',
    't.compute_units <= 4294967295',
    't.accounts_count <= 65535',
    't.slot <= 17179869182',
    'length(t.accounts) <= 1024',
    'lengthUTF8(t.instruction_type) BETWEEN 1 AND 128',
    `transform(t.program_id, ${programs}, ${names}, '') = t.protocol_name`,
  ]);
/** The base columns of a fast line's row where the typed value is not the column as it is. */
export const FAST_ROW: Record<string, string> = {
  instruction_index: 'toUInt16(t.instruction_index)',
  transaction_index: 'toUInt32(t.transaction_index)',
  block_time: 'toUInt32(t.block_time)',
  compute_units: 'toUInt32(t.compute_units)',
  accounts_count: `if(${has('accounts_count')}, toUInt16(t.accounts_count), toUInt16(length(t.accounts)))`,
  success: `position(line, '"success":true') > 0`,
};
