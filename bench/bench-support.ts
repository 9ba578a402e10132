// Shared bits of the benchmark scripts: flags, timing, machine description, the service's point read.
import { execSync } from 'node:child_process';
import os from 'node:os';
import { uint64List } from '../api/analytics/uint64-text.ts';
import { POINT_READ_COARSE_INDEX_GRANULARITY } from '../core/limits.ts';
import { migrationStatus } from '../warehouse/migrate.ts';
import { TABLES } from '../warehouse/tables.ts';
import type { Warehouse } from '../warehouse/warehouse.ts';

export function flag(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : def;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export async function timeMs(fn: () => Promise<unknown>): Promise<number> {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

export function machine(): string {
  const cpu = os.cpus()[0]?.model ?? 'unknown cpu';
  let disk = '';
  try {
    disk = execSync('df -h --output=size,avail / | tail -1', { encoding: 'utf8' }).trim();
  } catch {
    disk = 'n/a';
  }
  return `${os.cpus().length} cores (${cpu}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM, node ${process.version}, load avg ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}, disk size/avail ${disk}`;
}

/**
 * The service's point read of tx_by_signature_v3 (api/analytics/signature-lookup.ts, since
 * migration 090): the record column and the key, the keys written into the text as decimal
 * numbers (no bound parameter), and the settings it sends (`table`: a copy of that table's
 * layout). Benches that mirror the service read through these; keep them in step with signature-lookup.ts.
 */
export const pointReadSql = (keys: Iterable<bigint | string>, table: string = TABLES.txBySignature): string =>
  `SELECT record, toString(sig_key) AS sk FROM ${table} WHERE sig_key IN (${keyList(keys)})`;
/** Signature keys (decimal text or bigint) once each, as the point read's literal list. */
export const keyList = (keys: Iterable<bigint | string>): string => uint64List(new Set([...keys].map((k) => BigInt(k))));
export const POINT_READ_SETTINGS = {
  max_threads: 1, use_query_condition_cache: 0, optimize_move_to_prewhere: 0, allow_experimental_analyzer: 0,
  merge_tree_coarse_index_granularity: POINT_READ_COARSE_INDEX_GRANULARITY,
};

/** Refuse, in words, a store whose schema is not the code's (a store seeded before 090 has no tx_by_signature_v3). */
export async function requireCurrentSchema(wh: Warehouse, dir: string): Promise<void> {
  const { expected, applied } = await migrationStatus(wh);
  if (applied !== expected) {
    throw new Error(`${dir} is at migration ${applied}, the code at ${expected}: upgrade it first (npx tsx bench/point-store-upgrade.ts --dir ${dir})`);
  }
}
