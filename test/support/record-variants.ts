// Variants of one valid ingest record: each field absent, and each field set to each of a
// set of hostile values (wrong JSON types, bounds and one past them, lengths, patterns, array
// items), each with a signature of its own. For tests that compare two checks line by line.
const ADDRESS = 'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4';
const VALUES: unknown[] = [
  null,
  true,
  false,
  'x',
  '',
  -1,
  -0.5,
  1.5,
  1e300,
  -1e300,
  1e3,
  0,
  1,
  65535,
  65536,
  4294967295,
  4294967296,
  9007199254740991,
  9007199254740992,
  [],
  {},
  { a: 1 },
  ['x'],
  [1],
  [ADDRESS],
  [ADDRESS, 'bad'],
  [ADDRESS, 7],
  '007',
  '-1',
  '123',
  '0',
  '99999999999999999999',
  '18446744073709551615',
  '18446744073709551616',
  'a'.repeat(128),
  'é'.repeat(128),
  'é'.repeat(129),
  'a'.repeat(129),
  ADDRESS,
  'H'.repeat(88),
  'H'.repeat(63),
  'jupiter_v6',
  'raydium_amm_v3',
  'Jupiter',
  'uniswap_v3',
  ['a', 'b'],
  ['a', 1],
  Array.from({ length: 1025 }, () => ADDRESS),
  Array.from({ length: 1024 }, () => ADDRESS),
  'tab\there',
  'nl\nx',
  'quote"x',
  '\u0000nul',
  '😀',
  'back\\slash',
];
const FIELDS = [
  'signature',
  'instruction_index',
  'slot',
  'block_time',
  'program_id',
  'protocol_name',
  'instruction_type',
  'fee',
  'compute_units',
  'accounts',
  'accounts_count',
  'success',
  'error_message',
  'log_messages',
  'raw_data',
];

/** NDJSON lines: `base` (a valid record) with each field absent or replaced; signatures from `prefix`. */
export function recordVariants(base: Record<string, unknown>, prefix: string): string[] {
  let k = 0;
  const sig = (): string => `${prefix}${[...String(k++)].map((d) => 'ABCDEFGHJK'[Number(d)]).join('')}`.padEnd(86, 'z');
  const lines: string[] = [];
  for (const f of FIELDS) {
    const without: Record<string, unknown> = { ...base, signature: sig() };
    delete without[f];
    lines.push(JSON.stringify(without));
    for (const v of VALUES) lines.push(JSON.stringify({ ...base, signature: f === 'signature' ? v : sig(), [f]: v }));
  }
  // Two fields wrong at once (the first in the schema's order is named), numbers written as doubles.
  lines.push(JSON.stringify({ ...base, signature: sig(), fee: 'x', slot: -1 }));
  lines.push(JSON.stringify({ ...base, signature: sig(), success: 'x', block_time: 1.5 }));
  lines.push(
    `{"signature":"${sig()}","slot":1e3,"block_time":1.7e9,"program_id":"${ADDRESS}","protocol_name":"jupiter_v6","instruction_type":"swap","fee":5e3,"compute_units":1.0,"success":true,"accounts_count":2}`,
  );
  return lines;
}
