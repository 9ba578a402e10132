// The hostile review's attack as a benchmark: three free keys send the heaviest work their
// plan allows (aliased GraphQL time series with unique comments, the audit's join queries,
// full JSON-RPC batches, generated-row SQL exports) for BENCH_SECONDS, while a fourth client
// (an enterprise key) probes /health and getProtocolStats. The same probes run on the idle
// server first, in the same run. The service runs as its own process (api/server/main.ts), so its
// memory is measured apart from this load generator's.
//
//   npx tsx bench/hostile-load.ts                              # 300k demo rows, 60 s of attack
//   BENCH_SECONDS=20 BENCH_ROWS=100000 npx tsx bench/hostile-load.ts
//   ATTACKS=graphql,rpc npx tsx bench/hostile-load.ts              # some attacks only (graphql, sql, rpc, export, mcp, poll, stream, replay)
//
// Issue 35's attacks: `mcp` POSTs 100-call MCP batches of 10,000-record listings, half of them
// abandoned after 300 ms; `poll` floods execution polls and unknown execution ids; `stream`
// holds each attacker's plan maximum of live streams open and reads everything while an
// operator writes 4,900 records (one per protocol and hour) every 10 s; `replay` reconnects
// with the oldest Last-Event-ID it saw, over and over.
//   SERVER_NODE_OPTIONS='' npx tsx bench/hostile-load.ts             # the server without npm start's heap limit (NODE_HEAP_MB)
//
// Figures: the server's peak RSS (target: bounded, under 1.5 GiB), probe p50/p99 idle and
// under attack (target p99 under 250 ms), answers by status per attacker, 5xx (target 0),
// and whether the server is still alive at the end (target: no crash).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { demoRecordsNdjson } from '../ingest/demo-generator.ts';
import { EmbeddedWarehouse } from '../warehouse/embedded-warehouse.ts';
import { startApiService } from '../scripts/daemons/api-service.ts';
import { machine } from './bench-support.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const ROWS = Number(process.env.BENCH_ROWS ?? 300_000);
const IDLE_SECONDS = Math.min(10, SECONDS);
const PROBE_EVERY_MS = 100;
/** Which kinds of attack run (all by default): graphql, sql, rpc, export, mcp, poll, stream, replay. */
const ATTACKS = (process.env.ATTACKS ?? 'graphql,sql,rpc,export,mcp,poll,stream,replay').split(',');
/** Seconds between the operator's writes while streams are attacked. */
const WRITE_EVERY_MS = 10_000;

const percentile = (xs: number[], p: number): number => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The audit's document: ten aliased hourly time series grouped by protocol and instruction
 * type, four metrics each, over 20 days (about 80,000 points a field: what the series cap
 * allowed before the document budget). Alternated with the largest document the document
 * budget allows now: ten aliased hourly series by protocol, four metrics, over 7 days
 * (about 47,000 points in all).
 */
function heavyDocument(tag: number): string {
  const day = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString().slice(0, 10);
  const audit = tag % 2 === 0;
  const groupBy = audit ? '[PROTOCOL, INSTRUCTION_TYPE]' : '[PROTOCOL]';
  const from = day(audit ? 20 : 7);
  const field = (i: number) =>
    `a${i}: timeSeries(bucketBy: HOUR, groupBy: ${groupBy}, metrics: [COUNT, SUM_FEE, MAX_FEE, MIN_FEE], filters: { dateRange: { start: "${from}", end: "${day(1)}" } }) { timestamp value label }`;
  return `# ${tag} ${Math.random()}\n{ ${Array.from({ length: 10 }, (_, i) => field(i)).join('\n')} }`;
}

const JOINS = [
  'SELECT count() FROM transactions t1 JOIN transactions t2 ON t1.success = t2.success WHERE t1.fee > 0',
  'SELECT count() FROM transactions t1 JOIN transactions t2 ON t1.fee = t1.fee',
  'SELECT count() FROM transactions t1 JOIN transactions t2 ON t1.protocol_name = t2.protocol_name',
  'SELECT protocol_name, instruction_type, count(), avg(fee), quantileExact(0.99)(fee) FROM transactions GROUP BY protocol_name, instruction_type',
];

const MCP_BATCH = JSON.stringify(
  Array.from({ length: 100 }, (_, i) => ({
    jsonrpc: '2.0',
    id: i + 1,
    method: 'tools/call',
    params: { name: 'getTransactions', arguments: { options: { limit: 10_000 } } },
  })),
);
const STREAM_QUERY = JSON.stringify({ query: 'subscription { protocolActivity { protocolName timestamp count failedCount totalFees } }' });

/** An operator's backfill: 4,900 demo records over the last 700 hours (thousands of (protocol, hour) buckets), as NDJSON. */
async function backfill(wh: EmbeddedWarehouse, round: number): Promise<string> {
  const end = Math.floor(Date.now() / 1000);
  return demoRecordsNdjson(wh, { seed: 1000 + round, total: 4900, offset: 0, count: 4900, startTime: end - 700 * 3600, endTime: end });
}

/** Read an SSE stream until `until` or its end: events and bytes read, and the last and first ids seen. */
async function readStream(res: Response, until: () => boolean, ids: { first?: string; last?: string }): Promise<number> {
  let bytes = 0;
  const reader = res.body?.getReader();
  if (reader === undefined) return 0;
  let tail = '';
  while (!until()) {
    const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
    if (done || value === undefined) break;
    bytes += value.byteLength;
    tail = (tail + Buffer.from(value).toString('utf8')).slice(-4096);
    for (const m of tail.matchAll(/^id: (\S+)$/gm)) {
      ids.first ??= m[1];
      ids.last = m[1];
    }
  }
  await reader.cancel().catch(() => {});
  return bytes;
}

interface Tally {
  sent: number;
  byStatus: Record<string, number>;
  bytes: number;
}

async function main(): Promise<void> {
  process.stdout.write(`seeding ${ROWS} demo rows, then starting the service again on the store...\n`);
  const service = await startApiService({
    demoRows: ROWS,
    env: { LOG_LEVEL: 'error', NODE_OPTIONS: process.env.SERVER_NODE_OPTIONS ?? '--max-old-space-size=1024' },
    restartAfterSeeding: true,
  });
  const pid = service.child.pid!;
  const exited = new Promise<number | null>((r) => service.child.once('exit', (code) => r(code)));
  let crashed: number | null | undefined;
  void exited.then((c) => (crashed = c));
  const attackers = await Promise.all([1, 2, 3].map((i) => service.createKey('free', `attacker-${i}`)));
  const prober = await service.createKey('enterprise', 'prober');
  const json = (key: string) => ({ 'content-type': 'application/json', 'x-api-key': key });

  let peakRss = 0;
  const rssTimer = setInterval(() => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) peakRss = Math.max(peakRss, Number(m[1]) * 1024);
    } catch {
      /* the process is gone: counted as a crash below */
    }
  }, 250);

  const probeBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getProtocolStats', params: [{ protocolName: 'jupiter_v6' }] });
  async function probe(seconds: number): Promise<{ health: number[]; stats: number[]; failures: number }> {
    const health: number[] = [];
    const stats: number[] = [];
    let failures = 0;
    const end = Date.now() + seconds * 1000;
    while (Date.now() < end) {
      const t0 = performance.now();
      const h = await fetch(`${service.url}/health`).catch(() => undefined);
      health.push(performance.now() - t0);
      if (h?.status !== 200) failures += 1;
      await h?.arrayBuffer();
      const t1 = performance.now();
      const s = await fetch(`${service.url}/v1/rpc`, { method: 'POST', headers: json(prober.key), body: probeBody }).catch(() => undefined);
      const text = (await s?.text()) ?? '';
      stats.push(performance.now() - t1);
      if (s?.status !== 200 || text.includes('"error"')) failures += 1;
      await sleep(PROBE_EVERY_MS);
    }
    return { health, stats, failures };
  }

  process.stdout.write(`idle probes for ${IDLE_SECONDS} s...\n`);
  const idle = await probe(IDLE_SECONDS);

  let attacking = true;
  let tag = 0;
  const kinds = ['graphql', 'sql', 'rpc', 'export', 'mcp', 'poll'];
  const mcpHeaders = (key: string) => ({ ...json(key), accept: 'application/json, text/event-stream' });
  const allWork = [
    (key: string) => fetch(`${service.url}/graphql`, { method: 'POST', headers: json(key), body: JSON.stringify({ query: heavyDocument(tag++) }) }),
    (key: string) =>
      fetch(`${service.url}/v1/query`, {
        method: 'POST',
        headers: json(key),
        body: JSON.stringify({ query: `${JOINS[tag++ % JOINS.length]} -- ${Math.random()}` }),
      }),
    (key: string) =>
      fetch(`${service.url}/v1/rpc`, {
        method: 'POST',
        headers: json(key),
        body: JSON.stringify(
          Array.from({ length: 20 }, (_, i) => ({
            jsonrpc: '2.0',
            id: i,
            method: 'getTransactions',
            params: [{ limit: 10_000, sortOrder: i % 2 === 0 ? 'desc' : 'asc' }],
          })),
        ),
      }),
    (key: string) =>
      fetch(`${service.url}/v1/query/exports`, {
        method: 'POST',
        headers: json(key),
        body: JSON.stringify({ query: `SELECT number, randomPrintableASCII(200) AS junk FROM numbers(1000000000) -- ${tag++}`, format: 'csv' }),
      }),
    // Half the batches abandoned after 300 ms, as in the review; the others read to the end.
    async (key: string) => {
      const abort = new AbortController();
      const n = tag++;
      if (n % 2 === 0) setTimeout(() => abort.abort(), 300).unref();
      const res = await fetch(`${service.url}/mcp`, { method: 'POST', headers: mcpHeaders(key), body: MCP_BATCH, signal: abort.signal });
      return new Response(await res.arrayBuffer(), { status: res.status, headers: res.headers });
    },
    // Polls of an execution id that does not exist, and of the key's own, as fast as answered.
    (key: string) =>
      fetch(`${service.url}/v1/query/executions/${tag++ % 2 === 0 ? 'no-such-execution' : '00000000-0000-0000-0000-000000000000'}`, { headers: json(key) }),
  ];
  const work = allWork.filter((_, i) => ATTACKS.includes(kinds[i]!));
  const tallies: Tally[] = attackers.map(() => ({ sent: 0, byStatus: {}, bytes: 0 }));
  // Each attacker keeps as many requests in flight as its plan admits, and waits out its 429s.
  const attack = attackers.flatMap((a, i) =>
    [0, 1, 2, 3].map(async (lane) => {
      const tally = tallies[i]!;
      let n = lane;
      while (attacking) {
        const res = await work[n++ % work.length]!(a.key).catch(() => undefined);
        tally.sent += 1;
        const status = res === undefined ? 'network' : String(res.status);
        tally.byStatus[status] = (tally.byStatus[status] ?? 0) + 1;
        const body = res === undefined ? new ArrayBuffer(0) : await res.arrayBuffer().catch(() => new ArrayBuffer(0));
        tally.bytes += body.byteLength;
        if (res?.status === 429) await sleep(Math.min(5, Number(res.headers.get('retry-after') ?? 1)) * 1000);
      }
    }),
  );
  // Live streams: each attacker holds its plan's maximum open and reads everything; `replay`
  // reconnects from the oldest id it saw. An operator write feeds them every WRITE_EVERY_MS.
  const streamWanted = ATTACKS.includes('stream') || ATTACKS.includes('replay');
  let streamBytes = 0;
  let streamsOpened = 0;
  const streamLanes = !streamWanted
    ? []
    : attackers.flatMap((a) =>
        [0, 1].map(async (lane) => {
          const ids: { first?: string; last?: string } = {};
          const replaying = ATTACKS.includes('replay') && lane === 1;
          while (attacking) {
            const headers: Record<string, string> = {
              ...json(a.key),
              accept: 'text/event-stream',
              ...(replaying && ids.first !== undefined ? { 'last-event-id': ids.first } : {}),
            };
            const res = await fetch(`${service.url}/graphql/stream`, { method: 'POST', headers, body: STREAM_QUERY }).catch(() => undefined);
            if (res === undefined || res.status !== 200) {
              await res?.arrayBuffer().catch(() => {});
              await sleep(1000);
              continue;
            }
            streamsOpened += 1;
            const started = Date.now();
            streamBytes += await readStream(res, () => !attacking || (replaying && Date.now() - started > 5000), ids);
          }
        }),
      );
  let rounds = 0;
  const genDir = mkdtempSync(path.join(tmpdir(), 'hostile-gen-'));
  const gen = new EmbeddedWarehouse(genDir);
  const writer = !streamWanted
    ? Promise.resolve()
    : (async () => {
        while (attacking) {
          const body = await backfill(gen, rounds++);
          await fetch(`${service.url}/admin/ingest`, {
            method: 'POST',
            headers: { authorization: `Bearer ${service.adminToken}`, 'content-type': 'application/x-ndjson' },
            body,
          })
            .then((r) => r.arrayBuffer())
            .catch(() => {});
          await sleep(WRITE_EVERY_MS);
        }
      })().finally(() => rmSync(genDir, { recursive: true, force: true }));
  const idleRss = peakRss;
  process.stdout.write(`attack by 3 free keys for ${SECONDS} s, probing meanwhile...\n`);
  const loaded = await probe(SECONDS);
  // Where the memory is, while the attack still runs: V8's heap and buffers, the rest is the engine's.
  const metrics = await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${service.adminToken}` } })
    .then((r) => r.text())
    .catch(() => '');
  const figure = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)`, 'm').exec(metrics)?.[1] ?? NaN) / 1024 ** 2;
  const heapMiB = figure('nodejs_heap_size_used_bytes');
  const externalMiB = figure('nodejs_external_memory_bytes');
  attacking = false;
  await Promise.race([Promise.all([...attack, ...streamLanes, writer]), sleep(35_000)]);
  clearInterval(rssTimer);
  const alive = crashed === undefined;

  const row = (name: string, xs: number[]) => `| ${name} | ${percentile(xs, 50).toFixed(1)} | ${percentile(xs, 99).toFixed(1)} | ${xs.length} |`;
  const fiveXx = tallies.reduce(
    (n, t) =>
      n +
      Object.entries(t.byStatus)
        .filter(([s]) => s.startsWith('5'))
        .reduce((a, [, c]) => a + c, 0),
    0,
  );
  const report = [
    `machine: ${machine()}`,
    `rows: ${ROWS}, attack ${SECONDS} s (${ATTACKS.join(', ')}), idle probes ${IDLE_SECONDS} s, ${new Date().toISOString()}`,
    '',
    '| probe | p50 ms | p99 ms | n |',
    '|---|---|---|---|',
    row('/health idle', idle.health),
    row('/health under attack', loaded.health),
    row('getProtocolStats idle', idle.stats),
    row('getProtocolStats under attack', loaded.stats),
    '',
    `probe failures: idle ${idle.failures}, under attack ${loaded.failures}`,
    `server peak RSS: ${(peakRss / 1024 ** 2).toFixed(0)} MiB (target < 1536); before the attack ${(idleRss / 1024 ** 2).toFixed(0)} MiB; at the attack's end V8 heap used ${heapMiB.toFixed(0)} MiB, external ${externalMiB.toFixed(0)} MiB`,
    `attackers' answers: ${tallies.map((t, i) => `#${i + 1} ${t.sent} sent, ${JSON.stringify(t.byStatus)}, ${(t.bytes / 1024 ** 2).toFixed(1)} MiB received`).join('; ')}`,
    `live streams opened: ${streamsOpened}, ${(streamBytes / 1024 ** 2).toFixed(1)} MiB read; operator writes: ${rounds} of 4,900 records`,
    `5xx answers: ${fiveXx}; server alive at the end: ${alive ? 'yes' : `no (exit ${crashed})`}`,
  ].join('\n');
  process.stdout.write(`\n${report}\n`);
  process.stdout.write(
    `${JSON.stringify({
      bench: 'hostile-load',
      rows: ROWS,
      seconds: SECONDS,
      attacks: ATTACKS,
      peakRssMiB: Math.round(peakRss / 1024 ** 2),
      idleRssMiB: Math.round(idleRss / 1024 ** 2),
      idle: { healthP99: percentile(idle.health, 99), statsP99: percentile(idle.stats, 99) },
      loaded: { healthP99: percentile(loaded.health, 99), statsP99: percentile(loaded.stats, 99) },
      probeFailures: loaded.failures,
      fiveXx,
      alive,
      attackers: tallies,
    })}\n`,
  );
  await service.stop();
  if (!alive || fiveXx > 0) process.exitCode = 1;
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
