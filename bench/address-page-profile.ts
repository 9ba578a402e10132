// Where a random address page's time goes, layer by layer (issue 37): the same random places
// as rpc-load's "random address random page" (half first pages, half after a random record of
// the address), one page at a time, each layer on places of its own (so no layer finds
// another's answer cached), interleaved:
//   engine    the page's one statement on a chDB session of its own (bench/rid-granules.ts's form)
//   helper    listAddressTransactions on a plain EmbeddedWarehouse (no budget, no facade)
//   facade    the operator's Analytics.addressTransactions (budget, plan lanes, scope, shared reads)
//   inject    POST /v1/rpc through app.inject (access, the door, the answer edge; no socket)
//   http      POST /v1/rpc over loopback, one request at a time (what one autocannon client sees)
// Every chDB statement the process runs is timed at the session (Session.prototype), so each
// layer's pages also say how many statements they ran and how long the engine held them.
//   DATA_DIR=bench/tmp/rid10m npx tsx bench/address-page-profile.ts [--pages 200] [--layers engine,http]
//   ... --layers inject --cpu-profile bench/tmp/inject.cpuprofile   # the timed pages' JS time (node:inspector)
import { writeFileSync } from 'node:fs';
import { Session as Inspector } from 'node:inspector/promises';
import { loadavg } from 'node:os';
import { Session } from 'chdb';
import { addressCursorToken, listAddressTransactions } from '../api/analytics/records/address-transactions.ts';
import { EmbeddedWarehouse } from '../warehouse/embedded-warehouse.ts';
import { startBenchServer } from './bench-server.ts';
import { flag, machine, median } from './bench-support.ts';

const PAGES = Number(flag('pages', '200'));
const dataDir = process.env.DATA_DIR;
if (!dataDir) throw new Error('DATA_DIR of a store after migration 110 is required');

// Every statement of the process, timed where it meets the engine.
interface Statement {
  sql: string;
  ms: number;
}
let log: Statement[] = [];
for (const name of ['queryAsync', 'queryBindAsync'] as const) {
  const original = Session.prototype[name] as (...args: unknown[]) => Promise<unknown>;
  (Session.prototype as unknown as Record<string, unknown>)[name] = async function (this: Session, ...args: unknown[]) {
    const t = performance.now();
    try {
      return await original.apply(this, args);
    } finally {
      log.push({ sql: String(args[0]).replace(/\s+/g, ' ').slice(0, 60), ms: performance.now() - t });
    }
  };
}

console.log(machine());
const server = await startBenchServer(0);
const { services, app, headers } = server;
const raw = new EmbeddedWarehouse(dataDir);
const engine = new Session(dataDir);
const visible = await services.analytics.protocols();
const places = await raw.query<{ a: string; id: string }>(
  `SELECT arrayJoin(arrayDistinct(arrayPushBack(accounts, toString(program_id)))) AS a, toString(rid) AS id FROM transactions
   WHERE intHash64(rid) % 2000 = 0 ORDER BY cityHash64(a, rid) LIMIT 2000`,
);
const KEY = 'address_key = reinterpretAsUInt128(sipHash128({addr:String}))';

interface Ask {
  address: string;
  rid: string | undefined;
}
const request = (a: Ask) => {
  const req = { address: a.address, filters: {}, sortOrder: 'asc' as const, limit: 100 };
  return { req, token: a.rid === undefined ? undefined : addressCursorToken(services.pageTokens, req, a.rid) };
};
const rpcBody = (a: Ask): string => {
  const { token } = request(a);
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'getTransactionsForAddress',
    params: [a.address, { limit: 100, ...(token === undefined ? {} : { paginationToken: token }) }],
  });
};
const LAYERS: Record<string, (a: Ask) => Promise<number>> = {
  engine: async (a) => {
    const ids = `SELECT rid FROM tx_by_address_v2 WHERE ${KEY}${a.rid === undefined ? '' : ' AND rid > {after:UInt64}'} ORDER BY rid ASC LIMIT 101`;
    const r = await engine.queryBindAsync(
      `SELECT toString(rid) AS id, record FROM tx_by_rid WHERE rid IN (${ids}) ORDER BY rid SETTINGS max_threads = 1`,
      { addr: a.address, ...(a.rid === undefined ? {} : { after: a.rid }) },
      { format: 'JSONEachRow' },
    );
    return r.text().split('\n').length - 1;
  },
  helper: async (a) => {
    const { req, token } = request(a);
    return (await listAddressTransactions(raw, services.pageTokens, { ...req, cursor: token }, visible)).data.length;
  },
  facade: async (a) => {
    const { req, token } = request(a);
    return (await services.operatorAnalytics.addressTransactions({ ...req, cursor: token })).data.length;
  },
  inject: async (a) => {
    const res = await app.inject({ method: 'POST', url: '/v1/rpc', headers: { 'content-type': 'application/json', ...headers }, payload: rpcBody(a) });
    if (res.statusCode !== 200 || res.body.includes('"error":')) throw new Error(res.body.slice(0, 300));
    return (res.json() as { result: { data: unknown[] } }).result.data.length;
  },
  http: async (a) => {
    const res = await fetch(`${server.baseUrl}/v1/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'accept-encoding': 'identity', ...headers },
      body: rpcBody(a),
    });
    const text = await res.text();
    if (res.status !== 200 || text.includes('"error":')) throw new Error(text.slice(0, 300));
    return (JSON.parse(text) as { result: { data: unknown[] } }).result.data.length;
  },
};
// --layers helper,http: some layers only (a CPU profile of one path).
const names = flag('layers', Object.keys(LAYERS).join(',')).split(',');
for (const n of names) if (!(n in LAYERS)) throw new Error(`--layers: no layer ${n} (${Object.keys(LAYERS).join(', ')})`);

interface Sample {
  ms: number;
  statements: number;
  engineMs: number;
  records: number;
  shapes: string[];
  shapeMs: number[];
}
const samples: Record<string, Sample[]> = Object.fromEntries(names.map((n) => [n, []]));
// Warm the JIT and the sessions first, untimed.
for (let i = 0; i < 20; i++) for (const n of names) await LAYERS[n]!({ address: places[i]!.a, rid: places[i]!.id });
const loadBefore = loadavg()[0]!;
// The timed pages only, not start-up (schema compilation, module loading).
const profileTo = flag('cpu-profile', '');
const inspector = new Inspector();
if (profileTo !== '') {
  inspector.connect();
  await inspector.post('Profiler.enable');
  await inspector.post('Profiler.start');
}
for (let i = 0; i < PAGES; i++) {
  // Layers in a rotating order, each on a place of its own.
  for (let j = 0; j < names.length; j++) {
    const n = names[(i + j) % names.length]!;
    const p = places[(i * names.length + j + 20) % places.length]!;
    const ask = { address: p.a, rid: i % 2 === 0 ? p.id : undefined };
    log = [];
    const t = performance.now();
    const records = await LAYERS[n]!(ask);
    const ms = performance.now() - t;
    // The engine layer's own statement is not the service's: count it apart.
    const own = log;
    samples[n]!.push({
      ms,
      statements: own.length,
      engineMs: own.reduce((s, x) => s + x.ms, 0),
      records,
      shapes: own.map((x) => x.sql),
      shapeMs: own.map((x) => x.ms),
    });
  }
}
if (profileTo !== '') writeFileSync(profileTo, JSON.stringify((await inspector.post('Profiler.stop')).profile));
const round = (x: number) => Math.round(x * 100) / 100;
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
const summary = Object.fromEntries(
  names.map((n) => {
    const s = samples[n]!;
    const short = s.filter((x) => x.records < 100);
    // Each statement shape: how many ran, and their engine time (median, mean).
    const times: Record<string, number[]> = {};
    for (const x of s)
      x.shapes.forEach((sh, k) => {
        (times[sh] ??= []).push(x.shapeMs[k]!);
      });
    const shapes = Object.fromEntries(Object.entries(times).map(([sh, ms]) => [sh, { n: ms.length, medianMs: round(median(ms)), meanMs: round(mean(ms)) }]));
    return [
      n,
      {
        medianMs: round(median(s.map((x) => x.ms))),
        meanMs: round(mean(s.map((x) => x.ms))),
        statementsAPage: round(mean(s.map((x) => x.statements))),
        engineMsMedian: round(median(s.map((x) => x.engineMs))),
        engineMsMean: round(mean(s.map((x) => x.engineMs))),
        outsideEngineMsMedian: round(median(s.map((x) => x.ms - x.engineMs))),
        shortPages: short.length,
        shortPagesMeanMs: round(mean(short.map((x) => x.ms))),
        fullPagesMeanMs: round(mean(s.filter((x) => x.records >= 100).map((x) => x.ms))),
        statementShapes: shapes,
      },
    ];
  }),
);
console.log(
  JSON.stringify({ date: new Date().toISOString(), pages: PAGES, load: [loadBefore, loadavg()[0]!].map((x) => x.toFixed(2)).join(' → '), summary }, null, 2),
);
engine.close();
await raw.close();
await server.close();
