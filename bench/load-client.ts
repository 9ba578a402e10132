// autocannon in a process of its own. Run in the server's process, the load generator
// shares the server's one event loop, and every figure measures both. runLoad() forks
// this file with a job file; the child runs autocannon and prints the result as JSON.
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon, { type Request as AcRequest, type Result } from 'autocannon';

export interface LoadJob {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  connections: number;
  seconds: number;
  /** One body for every request, or bodies to pick from at random per request. */
  body?: string;
  bodies?: string[];
  /** Paths (with query) to pick from at random per request, instead of the url's own. */
  paths?: string[];
  /** Count answers whose body contains this text (a JSON-RPC error still answers 200). */
  countBodiesContaining?: string;
  /** Connection i also sends connectionHeaders[i % length]: one API key per few
   *  connections keeps each key under its cap on requests in flight (PLAN_CONCURRENCY). */
  connectionHeaders?: Record<string, string>[];
}

export interface LoadResult {
  result: Result;
  /** Answers whose body contained `countBodiesContaining`. */
  matched: number;
  /** The load client's own peak resident memory (bench/capped.ts's headroom under a cap). */
  clientMaxRssBytes: number;
}

const SELF = fileURLToPath(import.meta.url);

/** Run one load job in a child process and return autocannon's result. */
export async function runLoad(job: LoadJob): Promise<LoadResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'txa-load-'));
  const jobFile = path.join(dir, 'job.json');
  writeFileSync(jobFile, JSON.stringify(job));
  try {
    return await new Promise<LoadResult>((resolve, reject) => {
      const child = fork(SELF, [jobFile], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      let answer: LoadResult | undefined;
      child.on('message', (m) => (answer = m as LoadResult));
      child.on('error', reject);
      child.on('exit', (code) => (answer ? resolve(answer) : reject(new Error(`load client exited with ${code} and no result`))));
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function child(jobFile: string): Promise<void> {
  const job = JSON.parse(readFileSync(jobFile, 'utf8')) as LoadJob;
  const { bodies, paths, countBodiesContaining: needle } = job;
  const pick = (xs: string[]): string => xs[Math.floor(Math.random() * xs.length)]!;
  let matched = 0;
  let connection = 0;
  const result = await autocannon({
    url: job.url,
    method: job.method ?? 'POST',
    connections: job.connections,
    duration: job.seconds,
    headers: job.headers ?? {},
    ...((bodies && bodies.length > 0) || (paths && paths.length > 0)
      ? {
          requests: [
            {
              setupRequest: (req: AcRequest) => ({
                ...req,
                ...(bodies && bodies.length > 0 ? { body: pick(bodies) } : job.body === undefined ? {} : { body: job.body }),
                ...(paths && paths.length > 0 ? { path: pick(paths) } : {}),
              }),
            },
          ],
        }
      : job.body === undefined
        ? {}
        : { body: job.body }),
    setupClient: (client) => {
      const own = job.connectionHeaders?.[connection++ % job.connectionHeaders.length];
      if (own) client.setHeaders({ ...job.headers, ...own });
      if (needle)
        client.on('body', (buf: Buffer) => {
          if (buf.includes(needle)) matched += 1;
        });
    },
  });
  process.send!({ result, matched, clientMaxRssBytes: process.resourceUsage().maxRSS * 1024 } satisfies LoadResult, () => process.exit(0));
}

if (process.argv[1] === SELF && process.argv[2]) {
  child(process.argv[2]).catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
