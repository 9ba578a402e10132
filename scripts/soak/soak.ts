// The soak: a started service (its own process, data directory and Kafka broker) under
// mixed traffic at a fixed rate for a while: JSON-RPC, REST, SQL and GraphQL from keys of
// every plan, records streaming in through Kafka, and one abusive client sending heavy SQL.
// Reported per time window: requests by interface and status class, p50/p99 per interface,
// the service's RSS and event-loop lag (its own /metrics); at the end, rows stored against
// rows produced. Used by `npm run soak` (scripts/soak/soak-cli.ts) and test/daemons/soak.test.ts.
import { spawn } from 'node:child_process';
import { startBroker, waitFor, type TestBroker } from '../daemons/kafka-broker.ts';
import { startApiService, type ApiService } from '../daemons/api-service.ts';

export interface SoakOptions {
  seconds: number;
  /** Client requests per second, spread over the interfaces. */
  rate: number;
  /** Records per second produced to Kafka. */
  produceRate: number;
  /** Report window, seconds. */
  windowSeconds: number;
  log?: (line: string) => void;
}

type Iface = 'rpc' | 'rest' | 'sql' | 'graphql' | 'abusive';
type Outcome = '2xx' | '4xx' | '429' | '5xx' | 'network';

export interface SoakWindow {
  /** Seconds since the start of the traffic. */
  at: number;
  requests: Record<Iface, Partial<Record<Outcome, number>>>;
  p50: Partial<Record<Iface, number>>;
  p99: Partial<Record<Iface, number>>;
  /** p99 of the answers a cache serves (getProtocolStats, REST stats, GraphQL protocolStats). */
  cachedP99: number | null;
  rssBytes: number | null;
  eventLoopLagP99Seconds: number | null;
}

export interface SoakReport {
  seconds: number;
  served: number;
  byOutcome: Partial<Record<Outcome, number>>;
  windows: SoakWindow[];
  produced: number;
  stored: number;
  storedDistinct: number;
  /** RSS growth from the end of warm-up (the first fifth of the windows, at least one) to the end, as a fraction. */
  rssGrowthAfterWarmup: number | null;
  serverErrors: { iface: Iface; status: number; body: string }[];
}

interface Call {
  iface: Iface;
  cached: boolean;
  path: string;
  body: unknown;
}

const percentile = (xs: number[], p: number): number | undefined => {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(s.length * p) - 1)];
};

const gql = (query: string) => ({ query });
const rpc = (method: string, params: unknown[]) => ({ jsonrpc: '2.0', id: 1, method, params });

/** The mixed traffic: a fixed rotation over the interfaces' typical questions. */
function traffic(protocols: string[]): Call[] {
  const p = protocols[0] ?? 'jupiter_v6';
  const q = protocols[1] ?? p;
  return [
    { iface: 'rpc', cached: true, path: '/v1/rpc', body: rpc('getProtocolStats', [{ protocolName: p }]) },
    { iface: 'rpc', cached: false, path: '/v1/rpc', body: rpc('getTransactions', [{ limit: 20, filters: { protocols: [q] } }]) },
    { iface: 'rpc', cached: true, path: '/v1/rpc', body: rpc('getTopProtocols', [{ limit: 5 }]) },
    { iface: 'rest', cached: true, path: '/api/v1/stats', body: undefined },
    { iface: 'rest', cached: false, path: `/api/v1/transactions?protocol_name=${q}&limit=20`, body: undefined },
    {
      iface: 'sql',
      cached: false,
      path: '/v1/query',
      body: { query: 'SELECT protocol_name, count() AS n, avg(fee) AS f FROM transactions GROUP BY protocol_name ORDER BY n DESC' },
    },
    {
      iface: 'graphql',
      cached: true,
      path: '/graphql',
      body: gql(`{ protocolStats(filters: { protocols: ["${p}"] }) { protocolName totalTransactions averageFee } }`),
    },
    {
      iface: 'graphql',
      cached: false,
      path: '/graphql',
      body: gql('{ transactions(groupBy: [PROTOCOL], metrics: [COUNT, P95_FEE]) { edges { node { protocol count p95Fee } } } }'),
    },
  ];
}

/** Heavy SQL an abusive free-plan client keeps sending: refused by the cost check or the per-key gate. */
const ABUSIVE = { query: 'SELECT count() FROM transactions a, transactions b, transactions c WHERE a.fee + b.fee + c.fee > 7' };

async function metric(service: ApiService, name: string): Promise<number | null> {
  const res = await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${service.adminToken}` } });
  const text = await res.text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line === undefined ? null : Number(line.split(' ').at(-1));
}

async function produce(brokers: string, count: number, rate: number): Promise<void> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'ingest/produce-cli.ts', '--count', String(count), '--rate', String(rate), '--live', '--quiet', '--brokers', brokers],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  if (code !== 0) throw new Error(`the producer exited ${code}: ${err.slice(-2000)}`);
}

export async function runSoak(opts: SoakOptions): Promise<SoakReport> {
  const log = opts.log ?? ((l: string) => console.log(l));
  let broker: TestBroker | undefined;
  let service: ApiService | undefined;
  try {
    broker = await startBroker();
    service = await startApiService({ demoRows: 0, env: { KAFKA_BROKERS: broker.brokers, KAFKA_FROM_BEGINNING: 'true' } });
    const svc = service;
    // Every protocol visible, so every produced record can be counted through SQL.
    const admin = { authorization: `Bearer ${svc.adminToken}`, 'content-type': 'application/json' };
    const { data: registry } = (await (await fetch(`${svc.url}/admin/protocols`, { headers: admin })).json()) as { data: { protocolName: string }[] };
    for (const p of registry) {
      await fetch(`${svc.url}/admin/protocols/${p.protocolName}`, { method: 'PATCH', headers: admin, body: JSON.stringify({ active: true }) });
    }
    // Keys of every plan; the client rotates over them (free keys meet their limit: 429 is expected).
    const plans = ['enterprise', 'enterprise', 'enterprise', 'x402', 'free'] as const;
    const keys = await Promise.all(plans.map((plan, i) => svc.createKey(plan, `soak-${plan}-${i}`).then((k) => k.key)));
    const abusiveKey = (await svc.createKey('free', 'soak-abusive')).key;

    const produced = Math.max(1, Math.round(opts.produceRate * opts.seconds));
    const producing = produce(broker.brokers, produced, opts.produceRate);
    // Some data before the clients start, so answers are not all empty.
    await waitFor(
      'first records stored',
      async () => {
        const r = await fetch(`${svc.url}/v1/rpc`, {
          method: 'POST',
          headers: { 'x-api-key': keys[0]!, 'content-type': 'application/json' },
          body: JSON.stringify(rpc('getProtocols', [])),
        });
        const names = ((await r.json()) as { result?: string[] }).result ?? [];
        return names.length > 0;
      },
      60_000,
    );
    const names = (
      (await (
        await fetch(`${svc.url}/v1/rpc`, {
          method: 'POST',
          headers: { 'x-api-key': keys[0]!, 'content-type': 'application/json' },
          body: JSON.stringify(rpc('getProtocols', [])),
        })
      ).json()) as { result: string[] }
    ).result;
    const calls = traffic(names);

    const report: SoakReport = {
      seconds: opts.seconds,
      served: 0,
      byOutcome: {},
      windows: [],
      produced,
      stored: 0,
      storedDistinct: 0,
      rssGrowthAfterWarmup: null,
      serverErrors: [],
    };
    const start = Date.now();
    let window = newWindow(0);
    const latencies: Record<string, number[]> = {};
    const cachedLatencies: number[] = [];
    const inFlight = new Set<Promise<void>>();
    let n = 0;

    const send = async (call: Call, key: string): Promise<void> => {
      const t0 = performance.now();
      let outcome: Outcome;
      let status = 0;
      try {
        const res = await fetch(`${svc.url}${call.path}`, {
          method: call.body === undefined ? 'GET' : 'POST',
          headers: { 'x-api-key': key, ...(call.body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: call.body === undefined ? undefined : JSON.stringify(call.body),
        });
        status = res.status;
        const text = await res.text();
        outcome = status === 429 ? '429' : status >= 500 ? '5xx' : status >= 400 ? '4xx' : '2xx';
        // JSON-RPC reports an internal error inside a 200.
        if (call.iface === 'rpc' && text.includes('"code":-32603')) outcome = '5xx';
        if (outcome === '5xx' && report.serverErrors.length < 20) report.serverErrors.push({ iface: call.iface, status, body: text.slice(0, 500) });
      } catch {
        outcome = 'network';
      }
      const ms = performance.now() - t0;
      const w = window;
      w.requests[call.iface][outcome] = (w.requests[call.iface][outcome] ?? 0) + 1;
      report.byOutcome[outcome] = (report.byOutcome[outcome] ?? 0) + 1;
      report.served++;
      if (outcome === '2xx') {
        (latencies[call.iface] ??= []).push(ms);
        if (call.cached) cachedLatencies.push(ms);
      }
    };

    const closeWindow = async (): Promise<void> => {
      const w = window;
      for (const [iface, xs] of Object.entries(latencies)) {
        w.p50[iface as Iface] = round(percentile(xs, 0.5));
        w.p99[iface as Iface] = round(percentile(xs, 0.99));
        xs.length = 0;
      }
      w.cachedP99 = round(percentile(cachedLatencies, 0.99)) ?? null;
      cachedLatencies.length = 0;
      w.rssBytes = await metric(svc, 'process_resident_memory_bytes');
      w.eventLoopLagP99Seconds = await metric(svc, 'nodejs_eventloop_lag_p99_seconds');
      report.windows.push(w);
      log(
        `soak ${String(w.at).padStart(4)} s: ${JSON.stringify(w.requests)} p99 ${JSON.stringify(w.p99)} cached p99 ${w.cachedP99} ms, RSS ${w.rssBytes === null ? '?' : Math.round(w.rssBytes / 2 ** 20)} MiB, loop lag p99 ${w.eventLoopLagP99Seconds}`,
      );
    };

    // Fixed rate: a tick every 1000/rate ms sends the next call; the abusive client sends
    // one heavy query a second on its own key.
    const interval = 1000 / opts.rate;
    let nextWindow = start + opts.windowSeconds * 1000;
    let nextAbuse = start;
    while (Date.now() - start < opts.seconds * 1000) {
      const now = Date.now();
      if (now >= nextWindow) {
        await closeWindow();
        window = newWindow(Math.round((now - start) / 1000));
        nextWindow += opts.windowSeconds * 1000;
      }
      const call = calls[n % calls.length]!;
      const p = send(call, keys[n % keys.length]!);
      n++;
      if (now >= nextAbuse) {
        const a = send({ iface: 'abusive', cached: false, path: '/v1/query', body: ABUSIVE }, abusiveKey);
        inFlight.add(a);
        void a.finally(() => inFlight.delete(a));
        nextAbuse += 1000;
      }
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
      const wait = start + n * interval - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    await Promise.all(inFlight);
    await closeWindow();

    // Everything produced must be stored exactly once.
    await producing;
    const count = async () => {
      const res = await fetch(`${svc.url}/v1/query`, {
        method: 'POST',
        headers: { 'x-api-key': keys[0]!, 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'SELECT count() AS n, uniqExact(signature, instruction_index) AS u FROM transactions' }),
      });
      const body = (await res.json()) as { data?: { n: string | number; u: string | number }[] };
      return { n: Number(body.data?.[0]?.n ?? 0), u: Number(body.data?.[0]?.u ?? 0) };
    };
    await waitFor('every produced record stored', async () => (await count()).n >= produced, 120_000, 1000).catch(() => undefined);
    const c = await count();
    report.stored = c.n;
    report.storedDistinct = c.u;
    const rss = report.windows.map((w) => w.rssBytes).filter((x): x is number => x !== null);
    const warm = Math.max(0, Math.floor(rss.length / 5) - 1);
    if (rss.length >= 2) report.rssGrowthAfterWarmup = (rss.at(-1)! - rss[warm]!) / rss[warm]!;
    return report;
  } finally {
    await service?.stop();
    await broker?.cleanup();
  }
}

function newWindow(at: number): SoakWindow {
  return {
    at,
    requests: { rpc: {}, rest: {}, sql: {}, graphql: {}, abusive: {} },
    p50: {},
    p99: {},
    cachedP99: null,
    rssBytes: null,
    eventLoopLagP99Seconds: null,
  };
}

const round = (x: number | undefined): number | undefined => (x === undefined ? undefined : Math.round(x * 10) / 10);
