// The export CLI (scripts/export-cli.ts) as a child process against a listening app: it
// creates a job, shows progress, waits and downloads files that match the manifest; and a
// download interrupted part-way is resumed with Range + If-Range from its .part file.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { downloadFile } from '../../scripts/export-cli.ts';
import { loadClientConfig } from '../../core/config/load-config.ts';
import { apiKeyHeaders } from '../support/api-key.ts';
import { demoRecords, ingest } from '../support/fixtures.ts';
import { startApp } from '../support/services.ts';

let t: Awaited<ReturnType<typeof startApp>>;
let url: string;
let key: string;
const out = mkdtempSync(path.join(tmpdir(), 'txa-export-cli-'));
const ranges: (string | undefined)[] = [];

beforeAll(async () => {
  t = await startApp();
  t.app.addHook('onRequest', async (req) => {
    if (req.url.includes('/files/')) ranges.push(req.headers.range as string | undefined);
  });
  key = (await apiKeyHeaders(t.app, 'enterprise'))['x-api-key']!;
  await ingest(t.services, await demoRecords(t.services, 2000));
  url = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t.cleanup();
  rmSync(out, { recursive: true, force: true });
});

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/export-cli.ts', ...args], {
    env: { ...process.env, TXA_URL: url, TXA_API_KEY: key, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

const sha = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');

it('creates a SQL export, shows progress, waits and downloads files matching the manifest', async () => {
  const dir = path.join(out, 'sql');
  const r = await cli(['sql', 'SELECT signature, fee, success FROM transactions', '--format', 'parquet', '--splits', '0.5,0.5,0', '--seed', '4', '--out', dir]);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toMatch(/\[#{30}\] 100% {2}COMPLETED/);
  const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { files: { name: string; sha256: string }[] };
  expect(manifest.files.map((f) => f.name)).toEqual(['train-00000.parquet', 'test-00000.parquet']);
  for (const f of manifest.files) expect(sha(path.join(dir, f.name))).toBe(f.sha256);
  expect(existsSync(path.join(dir, 'README.md'))).toBe(true);
}, 120_000);

it('resumes an interrupted download from its .part with Range and If-Range', async () => {
  const created = await cli(['filters', '--format', 'csv', '--columns', 'signature,log_messages', '--no-wait']);
  expect(created.code, created.stderr).toBe(0);
  const id = (JSON.parse(created.stdout) as { id: string }).id;
  type Job = { status: string; files: { name: string; path: string; sha256: string; bytes: number }[] };
  let job: Job | undefined;
  for (let i = 0; i < 500; i++) {
    job = (await t.app.inject({ method: 'GET', url: `/v1/exports/${id}`, headers: { 'x-api-key': key } })).json<Job>();
    if (job.status !== 'QUEUED' && job.status !== 'RUNNING') break;
    await new Promise((res) => setTimeout(res, 20));
  }
  expect(job!.status).toBe('COMPLETED');
  const r = await cli(['download', id, '--out', path.join(out, 'first')]);
  expect(r.code, r.stderr).toBe(0);
  const f = job!.files[0]!;
  const whole = readFileSync(path.join(out, 'first', f.name));
  // The first third arrived before the connection dropped.
  const dest = path.join(out, 'resumed', f.name);
  rmSync(path.dirname(dest), { recursive: true, force: true });
  (await import('node:fs')).mkdirSync(path.dirname(dest), { recursive: true });
  const cut = Math.floor(whole.length / 3);
  writeFileSync(`${dest}.part`, whole.subarray(0, cut));
  ranges.length = 0;
  await downloadFile(loadClientConfig({ url, key }, {}), f.path, dest, f.sha256);
  expect(ranges).toEqual([`bytes=${cut}-`]);
  expect(sha(dest)).toBe(f.sha256);
  expect(existsSync(`${dest}.part`)).toBe(false);
}, 120_000);

it('passes the ML options: --stratify-by with --sample, --normalize, --normalize-method, --one-hot', async () => {
  const dir = path.join(out, 'ml');
  const r = await cli([
    'filters',
    '--format',
    'jsonl',
    '--columns',
    'signature,protocol_name,fee',
    '--sample',
    '0.5',
    '--sample-seed',
    '3',
    '--stratify-by',
    'protocol_name',
    '--normalize',
    'fee',
    '--normalize-method',
    'min_max',
    '--one-hot',
    'protocol_name',
    '--out',
    dir,
  ]);
  expect(r.code, r.stderr).toBe(0);
  const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  expect(manifest.config.sampling).toMatchObject({ strategy: 'STRATIFIED', rate: 0.5, seed: 3, stratifyBy: 'protocol_name' });
  expect(manifest.config.preprocessing).toEqual({ normalize: ['fee'], normalizeMethod: 'MIN_MAX', oneHotEncode: ['protocol_name'] });
  expect(manifest.sampling.column).toBe('protocol_name');
  const refused = await cli(['filters', '--stratify-by', 'protocol_name']);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toMatch(/--stratify-by needs --sample RATE/);
}, 120_000);

it('says a missing key is missing (not that the service cannot be reached), and a refused key is refused', async () => {
  const missing = await cli(['sql', 'SELECT 1'], { TXA_API_KEY: '' });
  expect(missing.code).toBe(2);
  expect(missing.stderr).toMatch(/no API key: pass --key or set TXA_API_KEY/);
  expect(missing.stderr).not.toMatch(/cannot reach/);
  const wrong = await cli(['sql', 'SELECT 1'], { TXA_API_KEY: 'txa_not_a_real_key_0000000000000000' });
  expect(wrong.code).toBe(1);
  expect(wrong.stderr).toMatch(/failed: 40[13] .*check the key given with --key or TXA_API_KEY/);
}, 60_000);
