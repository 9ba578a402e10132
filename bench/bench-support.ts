// Shared bits of the benchmark scripts: flags, timing, machine description.
import { execSync } from 'node:child_process';
import os from 'node:os';

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
