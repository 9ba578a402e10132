// Dataset export CLI: a client of a running service's export routes (docs/exports.md). It
// creates a job, shows its progress, waits, and downloads every file with resume: a file
// interrupted part-way is continued with Range + If-Range from its `.part`, and each file
// is checked against the manifest's sha256 before it takes its name.
//
//   npm run export -- sql "SELECT signature, fee FROM transactions WHERE date >= '2025-01-01'" --format csv
//   npm run export -- filters --protocols jupiter_v6,pump_fun --from 2025-01-01 --to 2025-01-31 \
//        --columns signature,fee,success --splits 0.8,0.1,0.1 --seed 42 --sample 0.1 --sample-seed 7
//   npm run export -- status <id> | list | cancel <id> | download <id> [--out DIR]
//
// Service URL: --url or TXA_URL (default http://127.0.0.1:8080); API key: --key or TXA_API_KEY.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { ConfigError, loadClientConfig, type ClientConfig } from '../core/config/load-config.ts';

const USAGE = `usage: npm run export -- <command> [options]

commands:
  sql "<SELECT …>"      export the rows of a SQL SELECT (the SQL sandbox's rules; no row LIMIT needed)
  filters               export transactions by --protocols, --from/--to, --columns
  status <id>           show a job
  list                  your jobs, newest first
  cancel <id>           cancel a job
  download <id>         download a completed job's files (resumes partial files)

options (sql, filters):
  --format parquet|csv|jsonl     default parquet
  --splits TRAIN,TEST,VAL        fractions summing to 1 (default 1,0,0)
  --seed N                       split seed (drawn and reported when absent)
  --sample RATE --sample-seed N  keep a share of transactions (0-1)
  --no-wait                      print the job and return
  --out DIR                      where files go (default ./export-<id>)
options (filters): --protocols a,b  --from YYYY-MM-DD  --to YYYY-MM-DD  --columns a,b
  --stratify-by COLUMN           with --sample: STRATIFIED by this column (protocol_name, instruction_type, …)
  --normalize a,b [--normalize-method z_score|min_max]   rescale numeric columns (fitted on the train split)
  --one-hot a,b                  one 0/1 column per value (protocol_name, instruction_type, program_id)
  --url <url>   service base URL (env TXA_URL)       --key <key>  API key (env TXA_API_KEY)
`;

class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

interface FileView {
  name: string;
  rows: number;
  bytes: number;
  sha256: string;
  path: string;
}
interface JobView {
  id: string;
  status: string;
  progress: number;
  rowsWritten: number;
  rowsTotal: number | null;
  error: string | null;
  seeds: { split: number; sampling: number | null };
  files: FileView[];
  manifest: { path: string } | null;
  card: { path: string } | null;
}

function headers(cfg: ClientConfig): Record<string, string> {
  if (cfg.apiKey === undefined) throw new CliError('no API key: pass --key or set TXA_API_KEY', 2);
  return { 'x-api-key': cfg.apiKey };
}

async function call<T>(cfg: ClientConfig, method: string, p: string, body?: unknown): Promise<T> {
  // Before the request: a missing key is said as such, not reported as an unreachable service.
  const auth = headers(cfg);
  let res: Response;
  try {
    res = await fetch(`${cfg.url}${p}`, {
      method,
      headers: { ...auth, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
  } catch (err) {
    throw new CliError(`cannot reach ${cfg.url}: ${(err as Error).message}`, 1);
  }
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  if (!res.ok) {
    const msg = typeof parsed === 'object' && parsed !== null && 'message' in parsed ? String((parsed as { message: unknown }).message) : text;
    const retry = res.headers.get('retry-after');
    // The key was sent and refused: say which key setting to check.
    const hint = res.status === 401 || res.status === 403 ? ' (check the key given with --key or TXA_API_KEY)' : '';
    throw new CliError(`${method} ${p} failed: ${res.status} ${msg}${hint}${retry ? ` (retry after ${retry} s)` : ''}`, 1);
  }
  return parsed as T;
}

/** `[#########...........]  45%  12345/27000 rows` on one rewritten line (a line per change off a terminal). */
function progressBar(): (job: JobView) => void {
  let last = '';
  const tty = process.stderr.isTTY === true;
  return (job) => {
    const width = 30;
    const filled = Math.round((job.progress / 100) * width);
    const rows = job.rowsTotal === null ? `${job.rowsWritten} rows` : `${job.rowsWritten}/${job.rowsTotal} rows`;
    const line = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(job.progress).padStart(3)}%  ${job.status.padEnd(9)} ${rows}`;
    if (line === last) return;
    last = line;
    process.stderr.write(tty ? `\r${line}` : `${line}\n`);
  };
}

async function wait(cfg: ClientConfig, id: string): Promise<JobView> {
  const show = progressBar();
  for (;;) {
    const job = await call<JobView>(cfg, 'GET', `/v1/exports/${encodeURIComponent(id)}`);
    show(job);
    if (!['QUEUED', 'RUNNING'].includes(job.status)) {
      if (process.stderr.isTTY === true) process.stderr.write('\n');
      return job;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

const sha256Of = async (file: string): Promise<string> => {
  const h = createHash('sha256');
  await pipeline(createReadStream(file), h);
  return h.digest('hex');
};

/**
 * Download `p` to `dest`, continuing `dest.part` when it exists (Range from its size, with
 * If-Range: the file's ETag, so a changed file restarts whole), retrying a dropped
 * connection; `sha256`, when known, must match before the file takes its name.
 */
export async function downloadFile(cfg: ClientConfig, p: string, dest: string, sha256?: string, attempts = 5): Promise<void> {
  if (sha256 !== undefined && existsSync(dest) && (await sha256Of(dest)) === sha256) return;
  const part = `${dest}.part`;
  for (let attempt = 1; ; attempt++) {
    const have = existsSync(part) ? statSync(part).size : 0;
    const h: Record<string, string> = { ...headers(cfg) };
    if (have > 0 && sha256 !== undefined) {
      h.range = `bytes=${have}-`;
      h['if-range'] = `"${sha256}"`;
    }
    try {
      const res = await fetch(`${cfg.url}${p}`, { headers: h });
      if (res.status === 416 && have > 0) {
        // The .part is already whole (or longer than the file): checked below, restarted if wrong.
      } else if (res.status === 200 || res.status === 206) {
        const out = createWriteStream(part, { flags: res.status === 206 ? 'a' : 'w' });
        await pipeline(Readable.fromWeb(res.body! as import('node:stream/web').ReadableStream), out);
      } else {
        throw new CliError(`GET ${p} failed: ${res.status} ${await res.text()}`, 1);
      }
      if (sha256 !== undefined && (await sha256Of(part)) !== sha256) {
        rmSync(part, { force: true });
        throw new Error(`${path.basename(dest)}: sha256 differs from the manifest; downloading again`);
      }
      renameSync(part, dest);
      return;
    } catch (err) {
      if (err instanceof CliError || attempt >= attempts) throw err;
      process.stderr.write(`${path.basename(dest)}: ${(err as Error).message}; resuming (attempt ${attempt + 1} of ${attempts})\n`);
      await new Promise((r) => setTimeout(r, 500 * attempt));
    }
  }
}

async function downloadJob(cfg: ClientConfig, job: JobView, out: string): Promise<void> {
  if (job.status !== 'COMPLETED') throw new CliError(`job ${job.id} is ${job.status}${job.error ? `: ${job.error}` : ''}`, 1);
  mkdirSync(out, { recursive: true });
  for (const f of job.files) {
    await downloadFile(cfg, f.path, path.join(out, f.name), f.sha256);
    process.stderr.write(`  ${f.name}  ${f.rows} rows  ${f.bytes} bytes  sha256 ok\n`);
  }
  if (job.manifest) await downloadFile(cfg, job.manifest.path, path.join(out, 'manifest.json'));
  if (job.card) await downloadFile(cfg, job.card.path, path.join(out, 'README.md'));
  process.stdout.write(`${out}\n`);
}

function outputOptions(v: Record<string, string | boolean | undefined>): Record<string, unknown> {
  const num = (name: string, s: string | undefined): number | undefined => {
    if (s === undefined) return undefined;
    const n = Number(s);
    if (s.trim() === '' || !Number.isFinite(n)) throw new CliError(`--${name} must be a number, got "${s}"`, 2);
    return n;
  };
  const out: Record<string, unknown> = {};
  if (typeof v.format === 'string') out.format = v.format.toUpperCase();
  if (typeof v.splits === 'string') {
    const [train, test, val] = v.splits.split(',').map((x) => num('splits', x));
    out.splits = { train: train ?? 0, test: test ?? 0, val: val ?? 0 };
  }
  if (typeof v.seed === 'string') out.seed = num('seed', v.seed);
  if (typeof v.sample === 'string')
    out.sampling = { strategy: 'RANDOM', rate: num('sample', v.sample), seed: num('sample-seed', v['sample-seed'] as string | undefined) };
  return out;
}

async function run(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      url: { type: 'string' },
      key: { type: 'string' },
      format: { type: 'string' },
      splits: { type: 'string' },
      seed: { type: 'string' },
      sample: { type: 'string' },
      'sample-seed': { type: 'string' },
      protocols: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      columns: { type: 'string' },
      out: { type: 'string' },
      'stratify-by': { type: 'string' },
      normalize: { type: 'string' },
      'normalize-method': { type: 'string' },
      'one-hot': { type: 'string' },
      'no-wait': { type: 'boolean' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, ...args] = positionals;
  if (values.help || command === undefined) {
    process.stdout.write(USAGE);
    if (command === undefined && !values.help) throw new CliError('no command given', 2);
    return;
  }
  const cfg = loadClientConfig({ url: values.url, key: values.key });
  const one = (): string => {
    if (args.length !== 1) throw new CliError(`${command} takes one job id`, 2);
    return encodeURIComponent(args[0]!);
  };
  const finish = async (job: JobView): Promise<void> => {
    process.stderr.write(`job ${job.id} (split seed ${job.seeds.split}${job.seeds.sampling === null ? '' : `, sampling seed ${job.seeds.sampling}`})\n`);
    if (values['no-wait']) {
      process.stdout.write(`${JSON.stringify(job)}\n`);
      return;
    }
    const done = await wait(cfg, job.id);
    await downloadJob(cfg, done, values.out ?? `export-${done.id}`);
  };
  switch (command) {
    case 'sql': {
      if (args.length !== 1) throw new CliError('sql takes the query as one argument (quote it)', 2);
      return finish(await call<JobView>(cfg, 'POST', '/v1/query/exports', { query: args[0], ...outputOptions(values) }));
    }
    case 'filters': {
      const filters: Record<string, unknown> = {};
      if (values.protocols !== undefined) filters.protocols = values.protocols.split(',').map((s) => s.trim());
      if (values.from !== undefined || values.to !== undefined) filters.dateRange = { start: values.from, end: values.to };
      const list = (v: string | undefined): string[] | undefined => v?.split(',').map((s) => s.trim());
      const output = outputOptions(values);
      if (values['stratify-by'] !== undefined) {
        if (output.sampling === undefined) throw new CliError('--stratify-by needs --sample RATE', 2);
        output.sampling = { ...(output.sampling as object), strategy: 'STRATIFIED', stratifyBy: values['stratify-by'] };
      }
      const preprocessing =
        values.normalize !== undefined || values['one-hot'] !== undefined
          ? { normalize: list(values.normalize), normalizeMethod: values['normalize-method']?.toUpperCase(), oneHotEncode: list(values['one-hot']) }
          : undefined;
      const config = { ...output, filters, ...(values.columns ? { columns: list(values.columns) } : {}), ...(preprocessing ? { preprocessing } : {}) };
      return finish(await call<JobView>(cfg, 'POST', '/v1/exports', config));
    }
    case 'status': {
      process.stdout.write(`${JSON.stringify(await call<JobView>(cfg, 'GET', `/v1/exports/${one()}`), null, 2)}\n`);
      return;
    }
    case 'list': {
      const page = await call<{ jobs: JobView[] }>(cfg, 'GET', '/v1/exports?first=100');
      for (const j of page.jobs)
        process.stdout.write(`${j.id}  ${j.status.padEnd(9)} ${String(j.progress).padStart(3)}%  ${j.rowsWritten} rows${j.error ? `  ${j.error}` : ''}\n`);
      return;
    }
    case 'cancel': {
      const j = await call<JobView>(cfg, 'POST', `/v1/exports/${one()}/cancel`, {});
      process.stdout.write(`${j.id} ${j.status}\n`);
      return;
    }
    case 'download': {
      const job = await call<JobView>(cfg, 'GET', `/v1/exports/${one()}`);
      return downloadJob(cfg, job, values.out ?? `export-${job.id}`);
    }
    default:
      throw new CliError(`unknown command "${command}"\n\n${USAGE}`, 2);
  }
}

// Run only as the entry point (the test imports downloadFile).
if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${path.resolve(process.argv[1])}`).href) {
  run(process.argv.slice(2)).catch((err: unknown) => {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`error: ${(err as Error).message}\n`);
    process.exit(err instanceof CliError ? err.exitCode : 1);
  });
}
