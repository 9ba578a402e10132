// Calls every operation of the REST/SQL OpenAPI document through a TypeScript client generated
// from it by openapi-generator's typescript-fetch (test/daemons/openapi-ts-client.test.ts copies this file
// into the generated folder, type-checks both with tsc, strict, and runs it with tsx), as a user
// of that client would: each answer's status checked on the generated *Raw call, its body decoded
// through the generated models (value()), and checked against an independent reference: CSV
// against the JSON answer of the same query, downloads against the job's sha256 and row count,
// /v1/metrics' counter against the REST stats. Node's own fetch carries the requests.
//
// usage: tsx call_with_ts_client.ts <api key> <a day inside the data, YYYY-MM-DD>
// Prints one JSON object: {results: {<operationId>: {ok, detail}}, wire: ["GET /path", …]},
// wire being every request the client sent (its middleware's record), so the test can tell
// which operations were called from what went out, not from what this file says.
import { createHash } from 'node:crypto';
import {
  type ApiResponse,
  Configuration,
  ExportJobStatus,
  ExportsApi,
  type GetSqlExport200Response,
  Granularity,
  MetricsApi,
  type Middleware,
  ProtocolName,
  RESTApi,
  SQLApi,
  SQLExecutionsApi,
} from './index';

type Results = Record<string, { ok: boolean; detail: string }>;

const [KEY, DAY_ARG] = process.argv.slice(2) as [string, string];
const DAY = new Date(`${DAY_ARG}T00:00:00Z`);
const WEEK_AGO = new Date(DAY.getTime() - 6 * 86_400_000);
const BIG_SEED = 3_987_331_086; // past 2^31: the document's seeds are 0..2^32-1
const QUERY = 'SELECT protocol_name, count() AS n, sum(fee) AS fees FROM transactions GROUP BY protocol_name ORDER BY protocol_name';
const EXEC_QUERY = 'SELECT protocol_name, count() AS n FROM transactions GROUP BY protocol_name ORDER BY protocol_name';
const FINISHED: readonly string[] = [ExportJobStatus.Completed, ExportJobStatus.Failed, ExportJobStatus.Cancelled, ExportJobStatus.Expired];

const wire: string[] = [];
const recorder: Middleware = {
  async pre(ctx) {
    wire.push(`${ctx.init.method ?? 'GET'} ${new URL(ctx.url).pathname}`);
  },
};
// Its server: the document's (the service it was fetched from), the generated BASE_PATH.
const config = new Configuration({ apiKey: KEY, middleware: [recorder] });
const rest = new RESTApi(config);
const sql = new SQLApi(config);
const executions = new SQLExecutionsApi(config);
const exportsApi = new ExportsApi(config);
const metrics = new MetricsApi(config);
const keyless = new ExportsApi(new Configuration({ middleware: [recorder] })); // a signed link is its own credential

const results: Results = {};
const state: {
  signature?: string;
  rows?: Record<string, unknown>[];
  job?: string;
  sqlJob?: string;
  execution?: string;
  jobView?: GetSqlExport200Response;
  sqlJobView?: GetSqlExport200Response;
} = {};

function check(cond: unknown, what: string): asserts cond {
  if (!cond) throw new Error(what);
}

function need<T>(value: T | undefined, what: string): T {
  check(value !== undefined, `${what} is missing (an earlier call failed)`);
  return value;
}

/** The answer's status (exactly `status`, in its class) and its body decoded by the generated model. */
async function decoded<T>(call: Promise<ApiResponse<T>>, status = 200): Promise<T> {
  const res = await call;
  // The generated client throws on any status outside 2xx (a ResponseError, reported by run()).
  check(res.raw.status === status, `HTTP ${res.raw.status}, expected ${status}`);
  return res.value();
}

async function run(operationId: string, fn: () => Promise<unknown>): Promise<void> {
  try {
    results[operationId] = { ok: true, detail: JSON.stringify(await fn())?.slice(0, 300) ?? '' };
  } catch (err) {
    const body = (err as { response?: Response }).response;
    const detail = body === undefined ? '' : `: HTTP ${body.status} ${(await body.text()).slice(0, 500)}`;
    results[operationId] = { ok: false, detail: `${err instanceof Error ? (err.stack ?? err.message) : String(err)}${detail}`.slice(0, 1500) };
  }
}

const strings = (rows: Record<string, unknown>[]) => rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, String(v)])));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** RFC 4180 records (quoted fields may hold commas, quotes and line breaks). */
function csvRecords(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  const endField = () => {
    record.push(field);
    field = '';
  };
  const endRecord = () => {
    endField();
    records.push(record);
    record = [];
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted && c === '"' && text[i + 1] === '"') {
      field += '"';
      i++;
    } else if (c === '"') quoted = !quoted;
    else if (quoted) field += c;
    else if (c === ',') endField();
    else if (c === '\n') endRecord();
    else if (c !== '\r') field += c;
  }
  if (field !== '' || record.length > 0) endRecord();
  return records;
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const bytesOf = async (blob: Blob) => new Uint8Array(await blob.arrayBuffer());

async function restCalls(): Promise<void> {
  await run('getTransactions', async () => {
    const page = await decoded(rest.getTransactionsRaw({ limit: 5, dateFrom: WEEK_AGO, dateTo: DAY }));
    check(page.success && page.data.length === 5, `${page.data.length} records, expected 5`);
    state.signature = page.data[0]!.signature;
    return state.signature;
  });
  await run('getTransaction', async () => {
    const signature = need(state.signature, 'a signature');
    const one = await decoded(rest.getTransactionRaw({ signature }));
    check(one.data.signature === signature, `another record: ${one.data.signature}`);
    return one.data.protocolName;
  });
  await run('getProtocolStats', async () => {
    const stats = await decoded(rest.getProtocolStatsRaw({ protocolName: ProtocolName.JupiterV6, dateFrom: WEEK_AGO, dateTo: DAY }));
    check(stats.data.totalTransactions > 0, 'no transactions in the week');
    return stats.data.totalTransactions;
  });
  await run('getProtocolActivity', async () => {
    const series = await decoded(rest.getProtocolActivityRaw({ dateFrom: WEEK_AGO, dateTo: DAY, granularity: Granularity.GRANULARITY_DAY }));
    check(series.data.length === 7, `${series.data.length} day buckets, expected 7`);
    check(series.data.reduce((s, b) => s + b.count, 0) > 0, 'an empty week');
    return series.data.length;
  });
  await run('getFeeStats', async () => {
    const fees = await decoded(rest.getFeeStatsRaw({ dateFrom: WEEK_AGO, dateTo: DAY }));
    check(fees.data.protocols.length > 0 && fees.data.totalFees > 0, 'no fees in the week');
    return fees.data.totalFees;
  });
  await run('getGlobalStats', async () => {
    const stats = await decoded(rest.getGlobalStatsRaw());
    check(stats.data.totalTransactions > 0 && stats.data.protocols.length > 0, 'an empty store');
    return stats.data.protocols.map((p) => p.protocolName);
  });
}

async function sqlCalls(): Promise<void> {
  await run('runQuery', async () => {
    const answer = await decoded(sql.runQueryRaw({ runQueryRequest: { query: QUERY } }));
    const rows = need(answer.data, 'data');
    check(rows.length > 0 && answer.count === rows.length, `count ${answer.count} for ${rows.length} rows`);
    state.rows = rows;
    return rows.slice(0, 2);
  });
  await run('runRestQuery', async () => {
    const answer = await decoded(sql.runRestQueryRaw({ runQueryRequest: { query: QUERY } }));
    check(JSON.stringify(answer.data) === JSON.stringify(need(state.rows, 'the /v1/query answer')), 'rows differ from /v1/query');
    return answer.count;
  });
  await run('runCsvQuery', async () => {
    const text = await decoded(sql.runCsvQueryRaw({ runCsvQueryRequest: { query: QUERY } }));
    const [header, ...records] = csvRecords(text);
    const rows = records.map((r) => Object.fromEntries(header!.map((h, i) => [h, r[i]])));
    const want = strings(need(state.rows, 'the JSON answer'));
    check(JSON.stringify(rows) === JSON.stringify(want), `CSV ${JSON.stringify(rows.slice(0, 2))} vs JSON ${JSON.stringify(want.slice(0, 2))}`);
    return `${rows.length} rows, equal to the JSON answer`;
  });
  await run('getMetrics', async () => {
    const text = await decoded(metrics.getMetricsRaw({ protocol: [ProtocolName.JupiterV6, ProtocolName.PumpFun] }));
    const counters = text.split('\n').filter((l) => l.startsWith('txa_protocol_transactions_total{'));
    const seen = counters.map((l) => /protocol="([^"]+)"/.exec(l)?.[1]).sort();
    check(JSON.stringify(seen) === '["jupiter_v6","pump_fun"]', `protocols ${seen}`);
    const jupiter = Number(
      counters
        .find((l) => l.includes('"jupiter_v6"'))!
        .split(' ')
        .pop(),
    );
    const stats = await decoded(rest.getProtocolStatsRaw({ protocolName: ProtocolName.JupiterV6 }));
    check(jupiter === stats.data.totalTransactions, `counter ${jupiter}, REST stats ${stats.data.totalTransactions}`);
    return `txa_protocol_transactions_total{protocol="jupiter_v6"} ${jupiter}`;
  });
}

async function startJobs(): Promise<void> {
  await run('createExport', async () => {
    const job = await decoded(
      exportsApi.createExportRaw({
        createExportRequest: {
          format: 'PARQUET',
          seed: BIG_SEED,
          filters: { protocols: [ProtocolName.JupiterV6] },
          columns: new Set(['signature', 'block_time', 'fee', 'success'] as const),
        },
      }),
      202,
    );
    state.job = job.id;
    return job.id;
  });
  await run('createSqlExport', async () => {
    const query = 'SELECT signature, protocol_name, fee FROM transactions WHERE NOT success';
    const job = await decoded(exportsApi.createSqlExportRaw({ createSqlExportRequest: { query, format: 'CSV' } }), 202);
    state.sqlJob = job.id;
    return job.id;
  });
  await run('createQueryExecution', async () => {
    const started = await decoded(executions.createQueryExecutionRaw({ createQueryExecutionRequest: { query: EXEC_QUERY, format: 'json' } }), 202);
    state.execution = need(started.id, 'id');
    return started.id;
  });
}

async function finished(read: () => Promise<GetSqlExport200Response>): Promise<GetSqlExport200Response> {
  for (let i = 0; i < 240; i++) {
    const job = await read();
    if (FINISHED.includes(job.status)) {
      check(job.status === ExportJobStatus.Completed, `job ${job.id} ended ${job.status}: ${job.error}`);
      return job;
    }
    await sleep(500);
  }
  throw new Error('the job did not finish');
}

async function filterExportCalls(): Promise<void> {
  await run('getExport', async () => {
    const id = need(state.job, 'the export job');
    const job = await finished(() => decoded(exportsApi.getExportRaw({ id })));
    check(job.seeds.split === BIG_SEED, `split seed ${job.seeds.split}`);
    state.jobView = job;
    return job.files.map((f) => [f.name, f.rows]);
  });
  await run('listExports', async () => {
    const ids = need((await decoded(exportsApi.listExportsRaw({ first: 100 }))).jobs, 'jobs').map((j) => j.id);
    check(ids.includes(need(state.job, 'the export job')), `${state.job} not listed`);
    return ids.length;
  });
  await run('downloadExportFile', async () => {
    const job = need(state.jobView, 'the finished export');
    const file = job.files[0]!;
    const bytes = await bytesOf(await decoded(exportsApi.downloadExportFileRaw({ id: job.id, name: file.name })));
    check(sha256(bytes) === file.sha256, "sha256 differs from the job's");
    const magic = (at: number) => new TextDecoder().decode(bytes.subarray(at, at + 4));
    check(magic(0) === 'PAR1' && magic(bytes.length - 4) === 'PAR1', 'not a Parquet file');
    return `${file.name}: ${bytes.length} bytes`;
  });
  await run('downloadExportLink', async () => {
    const job = need(state.jobView, 'the finished export');
    const file = job.files[0]!;
    const q = new URL(file.url, 'http://link').searchParams;
    const link = { id: job.id, name: file.name, key: q.get('key')!, expires: q.get('expires')!, sig: q.get('sig')! };
    const bytes = await bytesOf(await decoded(keyless.downloadExportLinkRaw(link)));
    check(sha256(bytes) === file.sha256, "sha256 differs from the job's");
    return `${bytes.length} bytes without the key`;
  });
  await run('cancelExport', async () => {
    const job = await decoded(exportsApi.cancelExportRaw({ id: need(state.job, 'the export job') }));
    check(job.status === ExportJobStatus.Completed, `a finished job became ${job.status}`);
    return job.status;
  });
}

async function sqlExportCalls(): Promise<void> {
  await run('getSqlExport', async () => {
    const id = need(state.sqlJob, 'the SQL export job');
    state.sqlJobView = await finished(() => decoded(exportsApi.getSqlExportRaw({ id })));
    return state.sqlJobView.files.map((f) => [f.name, f.rows]);
  });
  await run('listSqlExports', async () => {
    const ids = need((await decoded(exportsApi.listSqlExportsRaw({ first: 100 }))).jobs, 'jobs').map((j) => j.id);
    check(ids.includes(need(state.sqlJob, 'the SQL export job')), `${state.sqlJob} not listed`);
    return ids.length;
  });
  await run('downloadSqlExportFile', async () => {
    const job = need(state.sqlJobView, 'the finished SQL export');
    const file = job.files[0]!;
    const bytes = await bytesOf(await decoded(exportsApi.downloadSqlExportFileRaw({ id: job.id, name: file.name })));
    check(sha256(bytes) === file.sha256, "sha256 differs from the job's");
    const records = csvRecords(new TextDecoder().decode(bytes));
    check(records.length - 1 === file.rows, `${records.length - 1} CSV rows, the job says ${file.rows}`);
    return `${file.name}: ${file.rows} rows`;
  });
  await run('cancelSqlExport', async () => {
    const job = await decoded(exportsApi.cancelSqlExportRaw({ id: need(state.sqlJob, 'the SQL export job') }));
    check(job.status === ExportJobStatus.Completed, `a finished job became ${job.status}`);
    return job.status;
  });
}

async function executionCalls(): Promise<void> {
  await run('getQueryExecution', async () => {
    const id = need(state.execution, 'the execution');
    for (let i = 0; i < 240; i++) {
      const view = await decoded(executions.getQueryExecutionRaw({ id }));
      if (FINISHED.includes(view.state ?? '')) {
        check(view.state === ExportJobStatus.Completed, `ended ${view.state}: ${view.error}`);
        return view.totalRows;
      }
      await sleep(500);
    }
    throw new Error('the execution did not finish');
  });
  await run('getQueryExecutionResults', async () => {
    const page = await decoded(executions.getQueryExecutionResultsRaw({ id: need(state.execution, 'the execution') }));
    const direct = await decoded(sql.runQueryRaw({ runQueryRequest: { query: EXEC_QUERY } }));
    const got = strings(need(page.data, 'data'));
    check(JSON.stringify(got) === JSON.stringify(strings(need(direct.data, 'data'))), "rows differ from /v1/query's");
    check(page.totalRows === got.length && page.nextCursor == null, `totalRows ${page.totalRows}, nextCursor ${page.nextCursor}`);
    return `${got.length} rows, as /v1/query answers them`;
  });
  await run('cancelQueryExecution', async () => {
    const view = await decoded(executions.cancelQueryExecutionRaw({ id: need(state.execution, 'the execution') }));
    check(view.state === ExportJobStatus.Completed, `a finished execution became ${view.state}`);
    return view.state;
  });
}

async function main(): Promise<void> {
  await startJobs();
  await restCalls();
  await sqlCalls();
  await filterExportCalls();
  await sqlExportCalls();
  await executionCalls();
  process.stdout.write(`${JSON.stringify({ results, wire })}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
