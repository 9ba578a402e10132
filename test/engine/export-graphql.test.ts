// GraphQL's export fields over the real app: exportDataset(config) -> {id, status, progress},
// followed with exportJob(id) to COMPLETED with files and links; exportJobs newest first with
// cursors; cancelExportJob; bad configs are BAD_USER_INPUT naming config.<field> in GraphQL's
// words; another key's job is null (as an unknown id is); the export cap is RATE_LIMITED.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyHeaders, createKey } from '../support/api-key.ts';
import { demoRecords, ingest } from '../support/fixtures.ts';
import { graphqlClient } from '../support/graphql-client.ts';
import { startApp } from '../support/services.ts';

let t: Awaited<ReturnType<typeof startApp>>;
let headers: Record<string, string>;
let other: Record<string, string>;

beforeAll(async () => {
  t = await startApp({ EXPORT_FILE_MAX_ROWS: '300', EXPORT_MAX_JOBS_FREE: '1' });
  headers = await apiKeyHeaders(t.app, 'enterprise');
  other = { 'x-api-key': (await createKey(t.app, 'enterprise', 'other')).key };
  await ingest(t.services, await demoRecords(t.services, 1500));
});
afterAll(async () => t.cleanup());

const gql = graphqlClient(
  () => t.app,
  () => headers,
);
const JOB =
  'id status progress kind format rowsWritten rowsTotal error seeds { split sampling } files { name split rows bytes sha256 url path } manifest { url path }';

async function waitJob(id: string): Promise<Record<string, any>> {
  for (let i = 0; i < 500; i++) {
    const r = await gql(`query($id: ID!) { exportJob(id: $id) { ${JOB} } }`, { id });
    const job = r.body.data!.exportJob;
    if (job.status !== 'QUEUED' && job.status !== 'RUNNING') return job;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error('job did not finish');
}

describe('GraphQL exports', () => {
  it('exportDataset starts a job; exportJob follows it to COMPLETED with files, rows and links', async () => {
    const r = await gql(`mutation($c: ExportConfig!) { exportDataset(config: $c) { id status progress } }`, {
      c: {
        format: 'PARQUET',
        filters: { protocols: ['jupiter_v6', 'pump_fun'], dateRange: { start: '2024-12-29', end: '2024-12-31' } },
        columns: ['signature', 'fee', 'success'],
        sampling: { strategy: 'RANDOM', rate: 0.5, seed: 3 },
        splits: { train: 0.8, test: 0.1, val: 0.1 },
        seed: 4294967295,
      },
    });
    expect(r.status).toBe(200);
    expect(r.body.errors).toBeUndefined();
    const started = r.body.data!.exportDataset;
    expect(started.status).toMatch(/^(QUEUED|RUNNING)$/);
    expect(started.progress).toBe(0);
    const job = await waitJob(started.id);
    expect(job.status, job.error).toBe('COMPLETED');
    expect(job.progress).toBe(100);
    expect(job.seeds).toEqual({ split: 4294967295, sampling: 3 });
    expect(job.rowsWritten).toBe(job.files.reduce((a: number, f: { rows: number }) => a + f.rows, 0));
    const viaLink = await t.app.inject({ method: 'GET', url: job.files[0].url });
    expect(viaLink.statusCode).toBe(200);
    expect(viaLink.headers.etag).toBe(`"${job.files[0].sha256}"`);
  });

  it("lists this key's jobs newest first with cursors; another key sees none of them", async () => {
    const first = await gql('{ exportJobs(pagination: { first: 1 }) { edges { node { id } cursor } pageInfo { hasNextPage endCursor } } }');
    const page = first.body.data!.exportJobs;
    expect(page.edges).toHaveLength(1);
    expect(page.pageInfo.endCursor).toBe(page.edges[0].cursor);
    const mine = page.edges[0].node.id;
    const theirs = await gql(`query($id: ID!) { exportJob(id: $id) { id } exportJobs { edges { node { id } } } }`, { id: mine }, other);
    // Another key's job does not exist for this key: null, exactly as for an unknown id.
    expect(theirs.body.errors).toBeUndefined();
    expect(theirs.body.data).toEqual({ exportJob: null, exportJobs: { edges: [] } });
    const cancel = await gql(`mutation($id: ID!) { cancelExportJob(id: $id) { id status } }`, { id: mine }, other);
    expect(cancel.body.data).toEqual({ cancelExportJob: null });
    expect((await gql(`query($id: ID!) { exportJob(id: $id) { status } }`, { id: mine })).body.data!.exportJob.status).toBe('COMPLETED');
    const bad = await gql('{ exportJobs(pagination: { after: "Zm9v" }) { edges { cursor } } }');
    expect(bad.body.errors?.[0]?.message).toMatch(/^pagination\.after is not a cursor/);
    // Cursors are signed and bound to the key's own listing: another key cannot page with
    // one, and a cursor edited or written by hand (here: the same position without its MAC,
    // the old unsigned form) is refused.
    const cursor = page.edges[0].cursor as string;
    const page2 = (c: string, h?: typeof other) => gql('query($c: String) { exportJobs(pagination: { first: 1, after: $c }) { edges { cursor } } }', { c }, h);
    expect((await page2(cursor)).body.errors).toBeUndefined();
    expect((await page2(cursor, other)).body.errors?.[0]?.message).toMatch(/^pagination\.after is not a cursor/);
    const parts = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    const unsigned = Buffer.from(JSON.stringify(parts.slice(0, -1))).toString('base64url');
    expect((await page2(unsigned)).body.errors?.[0]?.message).toMatch(/^pagination\.after is not a cursor/);
    // Arguments are named as written: the page size is pagination.first, not a bare first.
    for (const first of [0, 101]) {
      const big = await gql(`{ exportJobs(pagination: { first: ${first} }) { edges { cursor } } }`);
      expect(big.body.errors?.[0]?.message).toMatch(/^pagination\.first must be a whole number from 1 to 100$/);
      expect(big.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    }
  });

  it('answers export fields fresh on every request, per key (never from the answer cache of identical queries)', async () => {
    const doc = '{ exportJobs(pagination: { first: 100 }) { edges { node { id status progress } } } }';
    const mine = (await gql(doc)).body.data!.exportJobs.edges;
    expect(mine.length).toBeGreaterThan(0);
    // The identical document from another key of the same plan: that key's own (empty) list.
    expect((await gql(doc, undefined, other)).body.data!.exportJobs.edges).toEqual([]);
    // A job started between two identical polls shows up at once.
    const started = await gql('mutation { exportDataset(config: { format: CSV, columns: ["fee"] }) { id } }');
    const again = (await gql(doc)).body.data!.exportJobs.edges;
    expect(again[0].node.id).toBe(started.body.data!.exportDataset.id);
    await waitJob(again[0].node.id);
  });

  it('cancelExportJob cancels a running job', async () => {
    const cfg = t.services.config.exports;
    const saved = cfg.fileMaxRows;
    cfg.fileMaxRows = 10;
    try {
      const r = await gql('mutation { exportDataset(config: { format: CSV }) { id } }');
      const id = r.body.data!.exportDataset.id;
      const c = await gql(`mutation($id: ID!) { cancelExportJob(id: $id) { id status } }`, { id });
      expect(c.body.data!.cancelExportJob).toEqual({ id, status: 'CANCELLED' });
      for (let i = 0; i < 500 && t.services.exports.stats().running > 0; i++) await new Promise((res) => setTimeout(res, 10));
    } finally {
      cfg.fileMaxRows = saved;
    }
  });

  const refused: [string, string, RegExp][] = [
    ['unknown column', '{ columns: ["signature", "secret"] }', /^config\.columns\[1\] "secret" is not an exportable column/],
    ['splits not summing to 1', '{ splits: { train: 0.5, test: 0.2 } }', /^config\.splits must sum to 1/],
    ['rate above 1', '{ sampling: { rate: 1.5 } }', /^config\.sampling\.rate must be a number from 0 to 1/],
    ['empty protocol list', '{ filters: { protocols: [] } }', /^config\.filters\.protocols is empty/],
    ['unknown protocol', '{ filters: { protocols: ["nope_v1"] } }', /^config\.filters\.protocols\[0\]: unknown protocol "nope_v1"/],
    ['a filter exports do not take', '{ filters: { errorPattern: "x" } }', /^config\.filters has no field "errorPattern"/],
    ['seed past 32 bits', '{ seed: 4294967296 }', /^config\.seed must be a whole number from 0 to 4294967295/],
  ];
  for (const [name, config, message] of refused) {
    it(`refuses ${name}: BAD_USER_INPUT naming the field`, async () => {
      const r = await gql(`mutation { exportDataset(config: ${config}) { id } }`);
      expect(r.status).toBe(200);
      expect(r.body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      expect(r.body.errors?.[0]?.message).toMatch(message);
      expect(r.body.data).toEqual({ exportDataset: null });
    });
  }

  it('refuses an unknown format as a GraphQL validation error (the enum)', async () => {
    const r = await gql('mutation { exportDataset(config: { format: XLSX }) { id } }');
    expect(r.body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(r.body.errors?.[0]?.message).toMatch(/XLSX/);
  });

  it("answers 429 RATE_LIMITED with Retry-After past the plan's cap of queued and running jobs", async () => {
    const free = await apiKeyHeaders(t.app, 'free');
    const cfg = t.services.config.exports;
    const saved = cfg.fileMaxRows;
    cfg.fileMaxRows = 10;
    try {
      const one = await gql('mutation { exportDataset(config: { format: CSV, columns: ["fee"] }) { id } }', undefined, free);
      expect(one.body.errors).toBeUndefined();
      const two = await gql('mutation { exportDataset(config: { format: CSV, columns: ["fee"] }) { id } }', undefined, free);
      expect(two.status).toBe(429);
      expect(two.headers['retry-after']).toBe('30');
      expect(two.body.errors?.[0]?.extensions.code).toBe('RATE_LIMITED');
      expect(two.body.errors?.[0]?.message).toMatch(/plan free allows 1 queued or running/);
      await gql(`mutation($id: ID!) { cancelExportJob(id: $id) { id } }`, { id: one.body.data!.exportDataset.id }, free);
      for (let i = 0; i < 500 && t.services.exports.stats().running > 0; i++) await new Promise((res) => setTimeout(res, 10));
    } finally {
      cfg.fileMaxRows = saved;
    }
  });
});
