// Shared bits of the benchmark scripts: flags, timing, machine description, the service's point read.
import { execSync } from 'node:child_process';
import os from 'node:os';
import { POINT_READ_SETTINGS, pointReadStatement } from '../api/analytics/records/signature-lookup.ts';
import { uint64List } from '../api/analytics/records/uint64-text.ts';
import { migrationStatus } from '../warehouse/migrate.ts';
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
  // The read-ahead of the disk under /: past memory a point read that misses the page cache
  // brings in a window that grows with it, and so evicts more (bench/RESULTS.md, "Past memory
  // in steady state": 8 MiB here against Linux's usual 128 KiB changed the capped figures).
  let readAhead = 'n/a';
  try {
    readAhead = `${execSync('lsblk -dno RA "$(findmnt -no SOURCE /)"', { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()} KiB`;
  } catch {
    // no lsblk or findmnt: leave it unknown
  }
  return `${os.cpus().length} cores (${cpu}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM, node ${process.version}, load avg ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}, disk size/avail ${disk}, read-ahead ${readAhead}`;
}

/** Signature keys (decimal text or bigint) once each, as a set for the service's point read. */
const keySet = (keys: Iterable<bigint | string>): Set<bigint> => new Set([...keys].map((k) => BigInt(k)));
/**
 * The service's point read (api/analytics/records/signature-lookup.ts: through tx_rid_by_sig since
 * migration 110), its statement and settings themselves (`table`: a table keyed by sig_key
 * with 090's record column, read directly).
 */
export const pointReadSql = (keys: Iterable<bigint | string>, table?: string): string => pointReadStatement(keySet(keys), table);

/**
 * 090's records by signature, which migration 110 drops (tx_rid_by_sig and tx_by_rid took its
 * place): the benches of the point-read designs before 110 read it, on stores seeded before 110.
 */
export const V3_TABLE = 'tx_by_signature_v3';
/** Signature keys (decimal text or bigint) once each, as the point read's literal list. */
export const keyList = (keys: Iterable<bigint | string>): string => uint64List(keySet(keys));
export { POINT_READ_SETTINGS };

/** Refuse, in words, a store whose schema is not the code's (a store seeded before 090 has no tx_by_signature_v3). */
export async function requireCurrentSchema(wh: Warehouse, dir: string): Promise<void> {
  const { expected, applied } = await migrationStatus(wh);
  if (applied !== expected) {
    throw new Error(`${dir} is at migration ${applied}, the code at ${expected}: upgrade it first (npx tsx bench/point-store-upgrade.ts --dir ${dir})`);
  }
}
