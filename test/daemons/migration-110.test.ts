// Migration 110 (record ids) on a store of 40,000 records in several parts: killed with
// SIGKILL in the middle of each of its long statements (the numbering, the mutation giving
// stored records their ids, the copies into tx_by_rid, tx_rid_by_sig and tx_by_address_v2)
// and started again, it reaches exactly the store an uninterrupted run reaches: the same id
// for every record, every record once in tx_by_rid and once in the signature index, one
// address row per distinct address of each record, and 090's records by signature gone. Each store is a child process
// (test/support/migration-110-child.ts): chDB opens one data directory per process.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const CHILD = 'test/support/migration-110-child.ts';
const root = mkdtempSync(path.join(tmpdir(), 'txa-mig110-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function run(mode: string, dir: string): string {
  const r = spawnSync(process.execPath, ['--import', 'tsx', CHILD, mode, dir], { encoding: 'utf8', timeout: 300_000 });
  if (r.status !== 0) throw new Error(`${mode} failed: ${r.stderr.slice(-2000)}`);
  return r.stdout;
}

/** Run the migration and SIGKILL it once it has started the statement beginning `at` (plus a short delay). */
function killAt(dir: string, at: string, delayMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, 'migrate', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes(`start ${at}`)) setTimeout(() => child.kill('SIGKILL'), delayMs);
    });
    child.on('error', reject);
    child.on('exit', () => resolve(out));
  });
}

describe('migration 110', () => {
  it('killed midway (SIGKILL) and started again, reaches the store an uninterrupted run reaches', async () => {
    const seed = path.join(root, 'seed');
    run('seed', seed);
    const reference = path.join(root, 'reference');
    cpSync(seed, reference, { recursive: true });
    const expected = JSON.parse(run('dump', reference)) as Record<string, string>;
    // The seed stopped before 110; those after it (ingest's, 120 on) run after it.
    expect((expected.applied as unknown as string[])[0]).toBe('110_record_id');
    const [n, distinct, zero] = JSON.parse(expected.unique!.replace(/\(/g, '[').replace(/\)/g, ']')) as number[];
    expect(n).toBe(40_005);
    expect(distinct).toBe(n);
    expect(zero).toBe(0);
    expect(expected.records!.startsWith(`(${n},`)).toBe(true);
    expect(expected.index!.startsWith(`(${n},`)).toBe(true);
    expect(expected.indexed).toBe(String(n));
    expect(expected.addresses!.startsWith(`(${expected.expectedAddresses},${expected.expectedAddresses},`)).toBe(true);
    expect(expected.leftovers).toBe('[]');

    // The kills land in the numbering, the mutation and the three copies.
    for (const [label, delayMs] of [
      ['INSERT INTO rid_assign_110', 30],
      ['ALTER TABLE transactions UPDATE', 20],
      ['INSERT INTO tx_by_rid', 10],
      ['INSERT INTO tx_rid_by_sig', 10],
      ['INSERT INTO tx_by_address_v2', 10],
    ] as const) {
      const dir = path.join(root, `killed-${delayMs}-${label.length}`);
      cpSync(seed, dir, { recursive: true });
      const out = await killAt(dir, label, delayMs);
      expect(out).toContain(`start ${label}`);
      expect(out).not.toContain('migrated');
      const resumed = JSON.parse(run('dump', dir)) as Record<string, string>;
      expect(resumed).toEqual(expected);
    }
  }, 900_000);
});
