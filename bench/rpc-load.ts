// Load test of POST /v1/rpc over loopback with autocannon: 50 connections, 20 s per
// scenario by default; autocannon runs in a process of its own (load-client.ts), so the
// server's event loop serves only requests. A bare Fastify route answering a constant runs
// in the same server and the same run, so each method's throughput is also given as a ratio of that ceiling
// (HTTP + JSON overhead only), which makes numbers comparable across machines.
//
//   npx tsx bench/rpc-load.ts                      # 200k demo rows, 20 s per scenario
//   BENCH_ROWS=10000000 DATA_DIR=bench/tmp/rpc10m npx tsx bench/rpc-load.ts   # 10M rows, store kept for reruns
//   BENCH_SECONDS=3 BENCH_ROWS=50000 npx tsx bench/rpc-load.ts   # quick smoke run
//   BENCH_ONLY=getTransaction,getProtocolStats ...               # some scenarios only
//   BENCH_WARMUP=60 ...                                          # each scenario untimed for 60 s first (a cold page cache under memcap)
//   BENCH_SERVE=1 ...                                            # stay up and run scenarios asked on stdin (bench/capped-paired.ts)
//   BENCH_ROUNDS=3 ...                                           # every scenario (the bare route first) 3 times, the order reversed each round
//   BENCH_BOUND_PAGES=1 ...                                      # each address scenario also as "[bound]": its parameters bound, as before issue 37's literalParams
//
// Scenarios: getProtocolStats over the full range, getProtocolActivity for one day hourly,
// getTransaction for random known signatures, getTransactionsForAddress for the hottest
// address with limit 100 (also with 1 connection: the single-client latency). Every
// response is checked for a JSON-RPC error before counting.
import { loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import type { Result } from 'autocannon';
import { runLoad } from './load-client.ts';
import { addressCursorToken } from '../api/analytics/records/address-transactions.ts';
import { startBenchServer } from './bench-server.ts';
import { TABLES } from '../warehouse/tables.ts';
import { signatureRecordField } from '../warehouse/signature-records.ts';
import { EmbeddedWarehouse } from '../warehouse/embedded-warehouse.ts';
import type { QueryOptions } from '../warehouse/warehouse.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ROWS = Number(process.env.BENCH_ROWS ?? 200_000);
/** Seconds of untimed load of each scenario before its timed run (0: none). */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 0);
/** Which signatures the point-read scenarios ask for: 'sample' (100,000) or 'granules' (see below). */
const KEYS = process.env.BENCH_KEYS ?? 'sample';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const BOUND_PAGES = process.env.BENCH_BOUND_PAGES === '1';
if (KEYS !== 'sample' && KEYS !== 'granules') throw new Error('BENCH_KEYS is sample or granules');

const body = (method: string, params: unknown[]): string => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });

interface Scenario {
  name: string;
  path: string;
  /** A fixed body, or a function giving bodies one of which each request sends at random. */
  body: string | (() => string);
  /** GET: a function giving paths one of which each request asks at random (REST). */
  get?: () => string;
  /** With BENCH_KEYS=granules: the body (or GET path) asking for one signature, made for every one. */
  each?: (signature: string) => string;
  /** What marks an error answered with HTTP 200 (GraphQL: "errors"). */
  errorMark?: string;
  /** BENCH_BOUND_PAGES: run with the engine binding every parameter (literalParams ignored). */
  bound?: boolean;
}

/**
 * The embedded warehouse with literalParams ignored while `bound()` says so: the address page
 * as it ran before it asked for literals (every statement in chDB's one line of bound ones),
 * measured in the same run as the page that asks. A bench-only patch of this process.
 */
function ignoreLiteralParamsWhile(bound: () => boolean): void {
  const own = EmbeddedWarehouse.prototype.queryText;
  EmbeddedWarehouse.prototype.queryText = function (this: EmbeddedWarehouse, sql: string, format: string, options?: QueryOptions) {
    return own.call(this, sql, format, bound() && options ? { ...options, literalParams: false } : options);
  };
}

/** autocannon's count of answers by status, 200 left out. */
function otherStatuses(result: Result): Pick<Row, 'otherStatuses'> {
  const stats = (result as Result & { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {};
  const other: Record<string, number> = {};
  for (const [code, s] of Object.entries(stats)) if (code !== '200') other[code] = Number(s?.count ?? 0);
  return Object.keys(other).length > 0 ? { otherStatuses: other } : {};
}

interface Row {
  scenario: string;
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
  /** Answers by HTTP status other than 200 (what the non-2xx were), when there were any. */
  otherStatuses?: Record<string, number>;
  rpcErrors: number;
  ratioToBare: number;
  load1: number;
}

/** One enterprise key per 16 connections or fewer (its cap on requests in flight), set in main(). */
let connectionHeaders: Record<string, string>[] = [];
/** The largest peak resident memory of a load client so far (bench/capped.ts's headroom). */
let clientMaxRssBytes = 0;

async function run(
  url: string,
  headers: Record<string, string>,
  s: Scenario,
  bodies: string[],
  seconds = SECONDS,
  connections = CONNECTIONS,
): Promise<{ result: Result; rpcErrors: number }> {
  const {
    result,
    matched,
    clientMaxRssBytes: clientRss,
  } = await runLoad({
    url: `${url}${s.path}`,
    connections,
    seconds,
    headers: s.get ? headers : { 'content-type': 'application/json', ...headers },
    ...(s.get ? { method: 'GET' as const, paths: bodies } : typeof s.body === 'string' ? { body: s.body } : { bodies }),
    // A JSON-RPC error still comes back as HTTP 200, so count them from the bodies.
    countBodiesContaining: s.errorMark ?? '"error":',
    connectionHeaders,
  });
  clientMaxRssBytes = Math.max(clientMaxRssBytes, clientRss);
  return { result, rpcErrors: matched };
}

async function main(): Promise<void> {
  // Real services on the embedded engine, seeded once (DATA_DIR reuses a seeded store),
  // an enterprise key, and the rate limiter's clock run fast (bench-server.ts) so that a
  // throughput run measures the service rather than the plan's 2000 requests a minute.
  // The ceiling: same server, same framework and hooks, no analytics.
  const server = await startBenchServer(ROWS, (a) => a.post('/bench/constant', async () => ({ jsonrpc: '2.0', id: 1, result: 'ok' })));
  const { services, app, headers } = server;
  connectionHeaders = await server.connectionHeaders(CONNECTIONS);
  try {
    // The signatures asked for at random, all of protocols the service serves (a record of
    // another is answered as not found). By default 100,000 chosen by a hash: past memory their
    // granules of the point table (~1.3 GB at 100M) fit in any cap once read, so a warmed cache
    // would serve them all. BENCH_KEYS=granules takes one record of every 128-row granule of
    // tx_by_rid instead (the table's index granularity, migration 110): the first served one of
    // four candidates in its middle, so asking at random reads the whole table evenly.
    const served = new Set(await services.analytics.protocols());
    const sigs =
      KEYS === 'granules'
        ? (
            await services.wh.query<{ s: string }>(
              `SELECT argMin(${signatureRecordField('signature')}, _part_offset) AS s FROM ${TABLES.txByRid}
         WHERE _part_offset % 128 BETWEEN 64 AND 67 AND ${signatureRecordField('protocol_name')} IN {p:Array(String)}
         GROUP BY _part, intDiv(_part_offset, 128)`,
              { params: { p: [...served] } },
            )
          ).map((r) => r.s)
        : (
            await services.wh.query<{ s: string }>(
              `SELECT signature AS s FROM transactions WHERE protocol_name IN {p:Array(String)} ORDER BY cityHash64(signature, 'bench') LIMIT 100000`,
              { params: { p: [...served] } },
            )
          ).map((r) => r.s);
    process.stdout.write(`${sigs.length} signatures to ask for (BENCH_KEYS=${KEYS})\n`);
    const [hot] = await services.wh.query<{ a: string }>(
      `SELECT arrayJoin(accounts) AS a, count() AS c FROM transactions
       WHERE a NOT IN (SELECT program_id FROM protocols) GROUP BY a ORDER BY c DESC LIMIT 1`,
    );
    const [span] = await services.wh.query<{ first: number; last: number }>(
      'SELECT toUInt32(min(hour_start)) AS first, toUInt32(toStartOfDay(max(hour_start))) AS last FROM protocol_hourly',
    );
    // Random addresses at random places of their histories (issue 25): 2,000 references
    // chosen by a hash of the record, each a page start (half of them first pages).
    // (Migration 110: address rows keep no address text; the places come from the base table.)
    const places = await services.wh.query<{ a: string; id: string }>(
      `SELECT arrayJoin(arrayDistinct(arrayPushBack(accounts, toString(program_id)))) AS a, toString(rid) AS id FROM transactions
       WHERE intHash64(rid) % 2000 = 0 ORDER BY cityHash64(a, rid) LIMIT 2000`,
    );
    const randomPage = (): string => {
      const p = places[Math.floor(Math.random() * places.length)]!;
      const req = { address: p.a, filters: {}, sortOrder: 'asc' as const, limit: 100 };
      return body('getTransactionsForAddress', [
        p.a,
        { limit: 100, ...(Math.random() < 0.5 ? { paginationToken: addressCursorToken(services.pageTokens, req, p.id) } : {}) },
      ]);
    };
    // Whole hours only (answered from the hourly view alone), a different range each time,
    // so the result cache never answers: the view-backed read itself.
    const hours = Math.max(1, Math.floor((Number(span?.last ?? 0) - Number(span?.first ?? 0)) / 3600));
    const uncachedStats = (): string => {
      const a = Math.floor(Math.random() * hours);
      const b = a + Math.floor(Math.random() * (hours - a));
      const gte = Number(span?.first ?? 0) + a * 3600;
      return body('getProtocolStats', [{ protocolName: 'jupiter_v6', blockTime: { gte, lte: Number(span?.first ?? 0) + b * 3600 + 3599 } }]);
    };

    const url = server.baseUrl;

    const day = Number(span?.last ?? 0) - 2 * 86_400;
    const every = (each: (signature: string) => string): Pick<Scenario, 'each'> => (KEYS === 'granules' ? { each } : {});
    // Each door's ask for one signature: made per request from a random one, or for every one (BENCH_KEYS=granules).
    const anySig = (): string => sigs[Math.floor(Math.random() * sigs.length)]!;
    const rpcSignature = (sg: string): string => body('getTransaction', [sg]);
    const restSignature = (sg: string): string => `/api/v1/transactions/${sg}`;
    const gqlSignature = (sg: string): string => JSON.stringify({ query: `{ signature(signature: "${sg}") { signature slot blockTime protocolName fee } }` });
    const all: Scenario[] = [
      { name: 'bare constant route', path: '/bench/constant', body: '{}' },
      { name: 'getProtocolStats full range', path: '/v1/rpc', body: body('getProtocolStats', [{ protocolName: 'jupiter_v6' }]) },
      {
        name: 'getProtocolActivity one day hourly',
        path: '/v1/rpc',
        body: body('getProtocolActivity', [{ protocolName: 'pump_fun', blockTime: { gte: day, lte: day + 86_399 } }]),
      },
      { name: 'getTransaction random known signature', path: '/v1/rpc', body: () => rpcSignature(anySig()), ...every(rpcSignature) },
      { name: 'getTransactionsForAddress hot address limit 100', path: '/v1/rpc', body: body('getTransactionsForAddress', [hot?.a, { limit: 100 }]) },
      { name: 'getTransactionsForAddress random address random page', path: '/v1/rpc', body: randomPage },
      { name: 'getProtocolStats uncached (a random whole-hour range)', path: '/v1/rpc', body: uncachedStats },
      // The same point read through the other doors (REST and GraphQL have no address listing).
      {
        name: 'REST GET /api/v1/transactions/:signature random known signature',
        path: '/api/v1/transactions/x',
        body: '',
        get: () => restSignature(anySig()),
        ...every(restSignature),
      },
      {
        name: 'GraphQL signature(signature) random known signature',
        path: '/graphql',
        errorMark: '"errors":',
        body: () => gqlSignature(anySig()),
        ...every(gqlSignature),
      },
    ];
    // Issues 15 and 25 also ask for latencies with one client alone.
    const SINGLE = new Set([
      'getTransactionsForAddress hot address limit 100',
      'getTransaction random known signature',
      'getProtocolStats uncached (a random whole-hour range)',
      'getTransactionsForAddress random address random page',
    ]);
    // BENCH_ONLY=getTransaction,getProtocolStats runs those (and the bare route, the ratio's base).
    const only = process.env.BENCH_ONLY?.split(',').filter(Boolean);
    const chosen = all.filter((s, i) => i === 0 || !only || only.some((o) => s.name.startsWith(o)));
    const scenarios = BOUND_PAGES
      ? chosen.flatMap((s) => (s.name.startsWith('getTransactionsForAddress') ? [s, { ...s, name: `${s.name} [bound]`, bound: true }] : [s]))
      : chosen;
    let boundNow = false;
    if (BOUND_PAGES) ignoreLiteralParamsWhile(() => boundNow);

    // Each scenario must answer correctly before it is timed.
    for (const s of scenarios.slice(1)) {
      const res = s.get
        ? await app.inject({ method: 'GET', url: s.get(), headers })
        : await app.inject({
            method: 'POST',
            url: s.path,
            headers: { 'content-type': 'application/json', ...headers },
            payload: typeof s.body === 'string' ? s.body : s.body(),
          });
      if (res.statusCode !== 200 || res.body.includes(s.errorMark ?? '"error":'))
        throw new Error(`${s.name} does not answer: ${res.statusCode} ${res.body.slice(0, 300)}`);
    }

    // Random-body scenarios send one of 100,000 bodies made up front (the load runs in its own
    // process); a scenario of every signature sends one of its own bodies for each.
    const made = new Map<Scenario, string[]>();
    const bodiesOf = (s: Scenario): string[] => {
      const known = made.get(s);
      if (known) return known;
      const bodies = s.each
        ? sigs.map(s.each)
        : s.get
          ? Array.from({ length: 100_000 }, s.get)
          : typeof s.body === 'string'
            ? []
            : Array.from({ length: 100_000 }, s.body as () => string);
      made.set(s, bodies);
      return bodies;
    };
    /** One timed run of `s` (ratioToBare filled in by the caller). */
    const measure = async (s: Scenario, seconds = SECONDS, connections = CONNECTIONS, name = s.name): Promise<Row> => {
      boundNow = s.bound === true;
      const { result, rpcErrors } = await run(url, headers, s, bodiesOf(s), seconds, connections).finally(() => {
        boundNow = false;
      });
      return {
        scenario: name,
        requestsPerSec: Math.round(result.requests.average),
        p50Ms: result.latency.p50,
        p99Ms: result.latency.p99,
        errors: result.errors,
        non2xx: result.non2xx,
        ...otherStatuses(result),
        rpcErrors,
        ratioToBare: 0,
        load1: Number(loadavg()[0]!.toFixed(1)),
      };
    };

    // Warm up the server (JIT, connection pools) so the first timed scenario is not penalised.
    await run(url, headers, scenarios[0]!, [], Math.min(2, SECONDS));

    if (process.env.BENCH_SERVE === '1') {
      await serve(scenarios, measure);
      return;
    }

    const rows: Row[] = [];
    let bare = 0;
    const ratio = (rps: number): number => (bare === 0 ? 0 : Number((rps / bare).toFixed(3)));
    // Rounds: the bare route first (the ratios' base), the others in turn, reversed every other round.
    const rest = scenarios.slice(1);
    const order = Array.from({ length: ROUNDS }, (_, r) => [scenarios[0]!, ...(r % 2 === 0 ? rest : [...rest].reverse())]).flat();
    for (const s of order) {
      if (s === scenarios[0] && rows.length > 0) bare = 0;
      process.stdout.write(`${s.name}: ${SECONDS}s x ${CONNECTIONS} connections...\n`);
      // Under a memory cap the page cache starts empty (memcap drops it) and fills at the disk's
      // pace, minutes for a store of tens of GB: BENCH_WARMUP seconds of the same load, untimed,
      // first let the cache reach the state a long-running server has at that memory size (the
      // bare route reads no store).
      if (WARMUP > 0 && s !== scenarios[0]) {
        process.stdout.write(`${s.name}: warm-up ${WARMUP}s x ${CONNECTIONS} connections (untimed)...\n`);
        await run(url, headers, s, bodiesOf(s), WARMUP);
      }
      const row = await measure(s);
      if (bare === 0) bare = row.requestsPerSec;
      rows.push({ ...row, ratioToBare: ratio(row.requestsPerSec) });
      if (SINGLE.has(s.name.replace(' [bound]', '')) && CONNECTIONS !== 1 && process.env.BENCH_SINGLE !== '0') {
        process.stdout.write(`${s.name}: ${SECONDS}s x 1 connection...\n`);
        const one = await measure(s, SECONDS, 1, `${s.name}, 1 connection`);
        rows.push({ ...one, ratioToBare: ratio(one.requestsPerSec) });
      }
    }
    console.table(rows);
    process.stdout.write(
      `${JSON.stringify({
        date: new Date().toISOString(),
        load: loadavg()
          .map((x) => x.toFixed(2))
          .join(' '),
        rows: ROWS,
        seconds: SECONDS,
        connections: CONNECTIONS,
        transport: services.wh.transport,
        // Peak resident memory of the server (engine included) and of a load client: what bench/capped.ts's
        // `--headroom measured` adds to a third of the store, so a small store's cap leaves the store a third.
        serverMaxRssBytes: process.resourceUsage().maxRSS * 1024,
        clientMaxRssBytes,
        results: rows,
      })}\n`,
    );
  } finally {
    await server.close();
  }
}

/**
 * BENCH_SERVE=1 (bench/capped-paired.ts): the server stays up and runs what it is asked, one
 * JSON line on stdin each, `{"scenario": name, "seconds": n, "connections": n}` (the name as
 * BENCH_ONLY gives it, by prefix; the bare route is "bare"), answering each with a line
 * `@@{row}` on stdout; `{"quit": true}` ends it. Printed first: `@@{"ready": [names]}`.
 */
async function serve(scenarios: Scenario[], measure: (s: Scenario, seconds?: number, connections?: number) => Promise<Row>): Promise<void> {
  const answer = (x: unknown): boolean => process.stdout.write(`@@${JSON.stringify(x)}\n`);
  answer({ ready: scenarios.map((s) => s.name) });
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    const ask = JSON.parse(line) as { scenario?: string; seconds?: number; connections?: number; quit?: boolean };
    if (ask.quit) break;
    const s = scenarios.find((x) => x.name.startsWith(ask.scenario ?? '\u0000'));
    if (!s) {
      answer({ error: `no scenario ${ask.scenario}` });
      continue;
    }
    // With the peak memory of this server and of a load client, for a cap that adds them (bench/capped.ts's headroom).
    const row = await measure(s, ask.seconds ?? SECONDS, ask.connections ?? CONNECTIONS);
    answer({ ...row, serverMaxRssBytes: process.resourceUsage().maxRSS * 1024, clientMaxRssBytes });
  }
  lines.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
