// Client SQL under abuse: 20 legitimate SQL clients (each with a key of its own) for a
// while alone, then the same 20 plus one abusive client sending the heaviest queries its
// plan lets through, back to back. Reported: legitimate answers per second, their p50/p99,
// 429s, and serving (/health, getProtocolStats) p99 meanwhile; the figure is the ratio of
// legitimate throughput with the abuser to without, in the same run.
//
//   npx tsx bench/sql-isolation.ts            (BENCH_ROWS=1000000 BENCH_SECONDS=20 by default)
//
// The clients run in a child process (bench/load-client.ts explains why).
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startBenchServer } from './bench-server.ts';

const SELF = fileURLToPath(import.meta.url);
const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const LEGIT_CLIENTS = 20;

/** What a dashboard or researcher sends: hourly-table aggregates and narrow base-table reads. */
const LEGIT = [
  'SELECT protocol_name, sum(tx_count) AS n, sum(fee_sum) AS fees FROM protocol_hourly GROUP BY protocol_name ORDER BY n DESC',
  'SELECT toDate(hour_start) AS d, sum(tx_count) AS n FROM protocol_hourly GROUP BY d ORDER BY d DESC LIMIT 30',
  'SELECT instruction_type, sum(tx_count) AS n FROM instruction_hourly GROUP BY instruction_type ORDER BY n DESC LIMIT 20',
  "SELECT signature, fee FROM transactions WHERE protocol_name = 'jupiter_v6' ORDER BY block_time DESC LIMIT 20",
];
/** The heaviest thing an enterprise key gets past the cost check: a whole-table scan with work per row. */
const ABUSIVE =
  'SELECT count() FROM transactions WHERE cityHash64(signature, program_id, instruction_type, toString(fee)) % 1000 = 7 AND length(log_messages) >= 0';

interface ClientJob {
  baseUrl: string;
  seconds: number;
  keys: string[];
  abusiveKey?: string;
  rpcKey: string;
  protocol: string;
}

interface Phase {
  legitOk: number;
  legit429: number;
  legitOther: number;
  legitP50: number;
  legitP99: number;
  abusiveAnswers: Record<string, number>;
  servingP99: number;
  seconds: number;
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round((s[Math.min(s.length - 1, Math.ceil(s.length * p) - 1)] ?? 0) * 10) / 10;
};

async function clients(job: ClientJob): Promise<Phase> {
  const until = Date.now() + job.seconds * 1000;
  const latencies: number[] = [];
  const serving: number[] = [];
  let ok = 0;
  let limited = 0;
  let other = 0;
  const abusive: Record<string, number> = {};
  const post = (key: string, query: string) =>
    fetch(`${job.baseUrl}/v1/query`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
  const legit = async (key: string, n: number) => {
    for (let i = n; Date.now() < until; i++) {
      const t0 = performance.now();
      const res = await post(key, LEGIT[i % LEGIT.length]!);
      await res.arrayBuffer();
      if (res.status === 200) {
        ok += 1;
        latencies.push(performance.now() - t0);
      } else if (res.status === 429) {
        limited += 1;
        await new Promise((r) => setTimeout(r, 200));
      } else other += 1;
    }
  };
  const abuser = async (key: string) => {
    while (Date.now() < until) {
      const res = await post(key, ABUSIVE);
      await res.arrayBuffer();
      abusive[res.status] = (abusive[res.status] ?? 0) + 1;
    }
  };
  const servingLoop = async () => {
    for (let i = 0; Date.now() < until; i++) {
      const t0 = performance.now();
      const res = await fetch(`${job.baseUrl}/v1/rpc`, {
        method: 'POST',
        headers: { 'x-api-key': job.rpcKey, 'content-type': 'application/json' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: i,
          method: 'getProtocolStats',
          params: [{ protocolName: job.protocol, blockTime: { gte: 1_600_000_000 + i * 3601, lte: 2_000_000_000 } }],
        }),
      });
      await res.arrayBuffer();
      serving.push(performance.now() - t0);
      const h = performance.now();
      await (await fetch(`${job.baseUrl}/health`)).arrayBuffer();
      serving.push(performance.now() - h);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  await Promise.all([...job.keys.map((k, n) => legit(k, n)), ...(job.abusiveKey ? [abuser(job.abusiveKey)] : []), servingLoop()]);
  return {
    legitOk: ok,
    legit429: limited,
    legitOther: other,
    legitP50: pct(latencies, 0.5),
    legitP99: pct(latencies, 0.99),
    abusiveAnswers: abusive,
    servingP99: pct(serving, 0.99),
    seconds: job.seconds,
  };
}

function runClients(job: ClientJob): Promise<Phase> {
  return new Promise((resolve, reject) => {
    const child = fork(SELF, ['client', JSON.stringify(job)], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let answer: Phase | undefined;
    child.on('message', (m) => (answer = m as Phase));
    child.on('error', reject);
    child.on('exit', (code) => (answer ? resolve(answer) : reject(new Error(`client process exited with ${code}`))));
  });
}

async function main(): Promise<void> {
  const server = await startBenchServer(ROWS);
  try {
    const newKey = async (name: string, plan: string) => {
      const res = await server.app.inject({
        method: 'POST',
        url: '/admin/keys',
        headers: { authorization: `Bearer ${server.services.config.adminToken}` },
        payload: { name, plan },
      });
      return (res.json() as { key: string }).key;
    };
    const keys = await Promise.all(Array.from({ length: LEGIT_CLIENTS }, (_, i) => newKey(`legit-${i}`, 'enterprise')));
    const abusiveKey = await newKey('abusive', 'enterprise');
    const protocol = (await server.services.analytics.protocols())[0]!;
    const rpcKey = server.headers['x-api-key']!;
    const base = { baseUrl: server.baseUrl, seconds: SECONDS, keys, rpcKey, protocol };
    const quiet = await runClients(base);
    const abused = await runClients({ ...base, abusiveKey });
    const rate = (p: Phase) => Math.round((p.legitOk / p.seconds) * 10) / 10;
    const table = {
      machine: `${(await import('node:os')).cpus().length} cores`,
      rows: ROWS,
      sqlSessions: server.services.config.sql.sessions,
      withoutAbuser: { legitPerSecond: rate(quiet), ...quiet },
      withAbuser: { legitPerSecond: rate(abused), ...abused },
      throughputRatio: Math.round((rate(abused) / rate(quiet)) * 1000) / 1000,
      legitP99Ratio: Math.round((abused.legitP99 / quiet.legitP99) * 1000) / 1000,
    };
    console.log(JSON.stringify(table, null, 2));
  } finally {
    await server.close();
  }
}

if (process.argv[2] === 'client') {
  clients(JSON.parse(process.argv[3]!) as ClientJob).then(
    (p) => process.send!(p, () => process.exit(0)),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
} else {
  await main();
}
