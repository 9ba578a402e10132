// Known data sets for tests, and the one way tests store records: through the real ingest
// pipeline. One time window serves every test, so figures and dates mean the same
// everywhere: demo records spread evenly over it, the hand-made "hot" records start at it.
import type { Services } from '../../api/server/services.ts';
import { demoRecordsNdjson } from '../../ingest/demo-generator.ts';
import type { IngestReport } from '../../ingest/pipeline.ts';
import { PROTOCOL_PROFILES } from '../../ingest/protocol-profiles.ts';
import type { IngestRecord } from '../../ingest/record-schema.ts';

/** Three days ending on an hour (and day) boundary, so tests can reason about whole and partial hours. */
export const FIXTURE_END = 1_735_689_600; // 2025-01-01T00:00:00Z
export const FIXTURE_START = FIXTURE_END - 3 * 86_400; // 2024-12-29T00:00:00Z
/** The window's days as REST date parameters spell them (UTC). */
export const FIXTURE_DAYS = ['2024-12-29', '2024-12-30', '2024-12-31'] as const;
/** Start of the window's day `i` (0-based; 3 is FIXTURE_END). */
export const dayStart = (i: number): number => FIXTURE_START + i * 86_400;

/** `count` deterministic demo records (every registry protocol, active or not) over the window. */
export async function demoRecords(services: Pick<Services, 'wh'>, count: number, seed = 7): Promise<IngestRecord[]> {
  const text = await demoRecordsNdjson(services.wh, {
    seed,
    total: count,
    offset: 0,
    count,
    startTime: FIXTURE_START,
    endTime: FIXTURE_END,
  });
  return text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as IngestRecord);
}

/**
 * Ingest records (objects or NDJSON lines) through the real pipeline, positions `line 1..n`.
 * A rejection fails the test (a fixture the pipeline refuses is a broken fixture); tests of
 * the record check itself call `services.pipeline.ingest` and read the report.
 */
export async function ingest(services: Pick<Services, 'pipeline'>, records: readonly (object | string)[]): Promise<IngestReport> {
  const report = await services.pipeline.ingest(
    records.map((value, i) => ({ value, position: { line: i + 1 } })),
    'test',
  );
  if (report.rejected.length > 0) throw new Error(`fixture records rejected: ${JSON.stringify(report.rejected.slice(0, 3))}`);
  return report;
}

/** Generate and ingest `count` demo records over the window; returns them. */
export async function ingestDemo(services: Pick<Services, 'wh' | 'pipeline'>, count = 3000, seed = 7): Promise<IngestRecord[]> {
  const records = await demoRecords(services, count, seed);
  await ingest(services, records);
  return records;
}

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** A deterministic Base58 string of `len` characters from a label. */
export function b58(label: string, len: number): string {
  let h = 2166136261;
  let out = '';
  for (let i = 0; out.length < len; i++) {
    h ^= (label.charCodeAt(i % label.length) + i) & 0xff;
    h = Math.imul(h, 16777619) >>> 0;
    out += B58[h % 58];
  }
  return out;
}

/** The hand-made hot address: hundreds of records over several protocols, statuses and times. */
export const HOT = b58('hot-address', 44);
export const PROGRAM_OF: Record<string, string> = Object.fromEntries(PROTOCOL_PROFILES.map((p) => [p.protocol, p.programId]));
/** The protocols a fresh registry shows (the others are stored but hidden). */
export const ACTIVE_PROTOCOLS: readonly string[] = ['jupiter_v4', 'jupiter_v6', 'pump_amm', 'pump_fun', 'raydium_amm_v3', 'raydium_cp_swap', 'whirlpool'];

/**
 * 260 records touching HOT: five protocols (raydium_amm_v4 is inactive, so hidden),
 * one failure in seven, every tenth record at the same second as the one before (ties),
 * and every 25th signature with a second instruction.
 */
export function hotRecords(prefix = 'hot', count = 250, start = FIXTURE_START): IngestRecord[] {
  const protocols = ['jupiter_v6', 'pump_fun', 'whirlpool', 'raydium_amm_v4', 'pump_amm'];
  const out: IngestRecord[] = [];
  let t = start + 17;
  for (let i = 0; i < count; i++) {
    if (i % 10 !== 0) t += 600 + ((i * 7919) % 300);
    const protocol = protocols[i % protocols.length]!;
    const base: IngestRecord = {
      signature: b58(`${prefix}-${i}`, 88),
      instruction_index: 0,
      slot: 300_000_000 + i,
      block_time: t,
      program_id: PROGRAM_OF[protocol]!,
      protocol_name: protocol,
      instruction_type: i % 2 === 0 ? 'swap' : 'buy',
      fee: 5000 + i * 11,
      compute_units: 20_000 + i * 37,
      accounts: [HOT, b58(`acct-${i % 5}`, 44)],
      success: i % 7 !== 0,
      ...(i % 7 === 0 ? { error_message: `failure ${i}`, log_messages: [`log a ${i}`, `log b ${i}`], raw_data: b58(`raw-${i}`, 40) } : {}),
    };
    out.push(base);
    if (i % 25 === 0) out.push({ ...base, instruction_index: 1, instruction_type: 'claim', compute_units: base.compute_units + 1 });
  }
  return out;
}

/** Row counts of the base table and every table a view writes to. */
export const COUNTED_TABLES = [
  'transactions',
  'tx_rid_by_sig',
  'tx_by_rid',
  'tx_by_address_v2',
  'protocol_hourly',
  'instruction_hourly',
  'failure_hourly',
] as const;
export type CountedTable = (typeof COUNTED_TABLES)[number];

export async function tableCounts(services: Pick<Services, 'wh'>): Promise<Record<CountedTable, number>> {
  const out = {} as Record<CountedTable, number>;
  for (const t of COUNTED_TABLES) {
    // Aggregating tables may hold unmerged parts: count their totals, not their rows.
    const expr = t === 'failure_hourly' ? 'sum(failures)' : t.endsWith('_hourly') ? 'sum(tx_count)' : 'count()';
    const [r] = await services.wh.query<{ n: string }>(`SELECT ${expr} AS n FROM ${t}`);
    out[t] = Number(r?.n ?? 0);
  }
  return out;
}
