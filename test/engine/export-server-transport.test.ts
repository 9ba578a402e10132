// Export jobs over the server transport (@clickhouse/client over HTTP): the engine cannot
// write our files there, so rows are streamed to this process in the file's format, one
// statement per split. Against the HTTP shim backed by the embedded engine (no ClickHouse
// server binary can be installed here), or a real server when CLICKHOUSE_URL is set. The
// files must hold exactly the rows an independent count gives, per split, with the
// manifest's sha256, in every format.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyHeaders } from '../support/api-key.ts';
import { startClickHouseShim, type Shim } from '../support/clickhouse-http-shim.ts';
import { ingestDemo } from '../support/fixtures.ts';
import { startApp } from '../support/services.ts';

let shim: Shim | undefined;
const scratch = mkdtempSync(path.join(tmpdir(), 'txa-export-server-'));
let t: Awaited<ReturnType<typeof startApp>>;
let headers: Record<string, string>;
let protocols: string[];
const HASH = 2 ** 32;

beforeAll(async () => {
  let url = process.env.CLICKHOUSE_URL;
  if (url === undefined) {
    shim = await startClickHouseShim(path.join(scratch, 'shim'));
    url = shim.url;
  }
  t = await startApp({ CLICKHOUSE_URL: url, EXPORT_FILE_MAX_ROWS: '500' });
  expect(t.services.wh.transport).toBe('server');
  headers = await apiKeyHeaders(t.app, 'enterprise');
  await ingestDemo(t.services, 2000);
  protocols = (await t.services.analytics.protocols()).slice(0, 3);
});
afterAll(async () => {
  await t?.cleanup();
  await shim?.close();
  rmSync(scratch, { recursive: true, force: true });
});

type Job = {
  id: string;
  status: string;
  error: string | null;
  rowsWritten: number;
  files: { name: string; split: string; rows: number; sha256: string; bytes: number }[];
};

async function runJob(url: string, config: unknown): Promise<Job> {
  const r = await t.app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(config) });
  expect(r.statusCode, r.body).toBe(202);
  const id = r.json<{ id: string }>().id;
  for (let i = 0; i < 1200; i++) {
    const job = (await t.app.inject({ method: 'GET', url: `${url}/${id}`, headers })).json<Job>();
    if (!['QUEUED', 'RUNNING'].includes(job.status)) return job;
    await new Promise((res) => setTimeout(res, 25));
  }
  throw new Error(`job ${id} did not finish`);
}

const ENGINE_FORMAT = { PARQUET: 'Parquet', CSV: 'CSVWithNames', JSONL: 'JSONEachRow' } as const;

describe('exports over the server transport', () => {
  for (const format of ['PARQUET', 'CSV', 'JSONL'] as const) {
    it(`a filter export in ${format}: rows per split as counted independently, files as the manifest says`, async () => {
      const job = await runJob('/v1/exports', {
        format,
        filters: { protocols },
        columns: ['signature', 'instruction_index', 'fee', 'success', 'error_message'],
        splits: { train: 0.6, test: 0.3, val: 0.1 },
        seed: 3,
      });
      expect(job.status, job.error ?? '').toBe('COMPLETED');
      const h = `cityHash64(signature, toUInt64(3)) % ${HASH}`;
      const expected = Object.fromEntries(
        (
          await t.services.wh.query<{ split: string; n: string }>(
            `SELECT multiIf(${h} < ${Math.round(0.6 * HASH)}, 'train', ${h} < ${Math.round(0.9 * HASH)}, 'test', 'val') AS split, count() AS n
         FROM transactions WHERE protocol_name IN {p:Array(String)} GROUP BY split`,
            { params: { p: protocols } },
          )
        ).map((r) => [r.split, Number(r.n)]),
      );
      const got: Record<string, number> = {};
      for (const f of job.files) got[f.split] = (got[f.split] ?? 0) + f.rows;
      expect(got).toEqual(expected);
      expect(job.files.length).toBeGreaterThan(3); // several chunks
      for (const f of job.files) {
        const body = (await t.app.inject({ method: 'GET', url: `/v1/exports/${job.id}/files/${f.name}`, headers })).rawPayload;
        expect(createHash('sha256').update(body).digest('hex')).toBe(f.sha256);
        // Read back by the engine (the shim's, on this machine): the manifest's row count is the file's.
        const file = path.join(scratch, `${job.id}-${f.name}`);
        writeFileSync(file, body);
        const [n] = await t.services.wh.query<{ n: string }>(`SELECT count() AS n FROM file('${file}', '${ENGINE_FORMAT[format]}')`);
        expect(Number(n!.n)).toBe(f.rows);
      }
    });
  }

  it('a SQL export streams every row, split by signature', async () => {
    const job = await runJob('/v1/query/exports', {
      query: 'SELECT signature, fee FROM transactions WHERE fee > 0',
      format: 'CSV',
      splits: { train: 0.5, test: 0.5, val: 0 },
      seed: 1,
    });
    expect(job.status, job.error ?? '').toBe('COMPLETED');
    const [n] = await t.services.wh.query<{ n: string }>('SELECT count() AS n FROM transactions WHERE fee > 0 AND protocol_name IN {p:Array(String)}', {
      params: { p: await t.services.analytics.protocols() },
    });
    expect(job.rowsWritten).toBe(Number(n!.n));
    expect(job.files.map((f) => f.name)).toEqual(['train-00000.csv', 'test-00000.csv']);
  });
});
