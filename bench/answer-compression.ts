// npm run bench:compression: what gzip and brotli answers cost and save (issue 24), and what
// an If-None-Match revalidation (304) saves against a full answer.
//
// For each answer (REST 1000-row page, JSON-RPC 10000-row listing, SQL CSV 10000 rows streamed,
// GraphQL 1000 edges) and each coding (identity, gzip, br), RUNS requests through app.inject
// (in process: the CPU figure is the whole process's, engine and zlib's thread pool included):
// bytes on the wire, median wall ms, and CPU ms per request. The coding's own cost is the CPU
// difference to identity. Figures are printed as a table and as one JSON line.
import { startBenchServer } from './bench-server.ts';
import { flag, machine, median } from './bench-support.ts';

const ROWS = Number(flag('rows', '100000'));
const RUNS = Number(flag('runs', '15'));

interface Case {
  name: string;
  method: 'GET' | 'POST';
  url: string;
  payload?: object;
}
const CASES: Case[] = [
  { name: 'REST /transactions limit=1000 (JSON)', method: 'GET', url: '/api/v1/transactions?limit=1000' },
  {
    name: 'JSON-RPC getTransactions limit=10000',
    method: 'POST',
    url: '/v1/rpc',
    payload: { jsonrpc: '2.0', id: 1, method: 'getTransactions', params: [{ limit: 10000 }] },
  },
  {
    name: 'SQL CSV 10000 rows (streamed)',
    method: 'POST',
    url: '/v1/query',
    payload: {
      query: 'SELECT signature, program_id, protocol_name, instruction_type, fee, compute_units, success FROM transactions LIMIT 10000',
      format: 'csv',
    },
  },
  {
    name: 'GraphQL transactions first=1000',
    method: 'POST',
    url: '/graphql',
    payload: { query: '{ transactions(pagination: {first: 1000}) { edges { cursor node { signature slot protocolName fee computeUnits } } } }' },
  },
];
const CODINGS = ['identity', 'gzip', 'br'] as const;

const server = await startBenchServer(ROWS);
const out: Record<string, unknown>[] = [];
try {
  process.stderr.write(`bench:compression on ${machine()}, ${ROWS} rows, ${RUNS} runs per figure\n`);
  for (const c of CASES) {
    const request = (coding: string, extra: Record<string, string> = {}) =>
      server.app.inject({
        method: c.method,
        url: c.url,
        payload: c.payload,
        headers: { ...server.headers, ...(coding === 'identity' ? {} : { 'accept-encoding': coding }), ...extra },
      });
    await request('identity'); // warm: caches, JIT
    for (const coding of CODINGS) {
      const walls: number[] = [];
      let bytes = 0;
      const cpu0 = process.cpuUsage();
      for (let i = 0; i < RUNS; i += 1) {
        const t0 = process.hrtime.bigint();
        const res = await request(coding);
        walls.push(Number(process.hrtime.bigint() - t0) / 1e6);
        if (res.statusCode !== 200) throw new Error(`${c.name} ${coding}: HTTP ${res.statusCode} ${res.body.slice(0, 200)}`);
        if ((res.headers['content-encoding'] ?? 'identity') !== coding)
          throw new Error(`${c.name}: asked ${coding}, got ${String(res.headers['content-encoding'])}`);
        bytes = res.rawPayload.byteLength;
      }
      const cpu = process.cpuUsage(cpu0);
      out.push({
        answer: c.name,
        coding,
        bytes,
        wallMsMedian: Number(median(walls).toFixed(1)),
        cpuMsPerRequest: Number(((cpu.user + cpu.system) / 1000 / RUNS).toFixed(1)),
      });
    }
  }
  // Revalidation: a REST page answered in full, against the 304 its ETag earns.
  const url = '/api/v1/transactions?limit=1000';
  const first = await server.app.inject({ method: 'GET', url, headers: server.headers });
  const tag = String(first.headers.etag);
  for (const [name, extra] of [
    ['200 full answer', {}],
    ['304 If-None-Match', { 'if-none-match': tag }],
  ] as const) {
    const walls: number[] = [];
    const cpu0 = process.cpuUsage();
    let bytes = 0;
    for (let i = 0; i < RUNS; i += 1) {
      const t0 = process.hrtime.bigint();
      const res = await server.app.inject({ method: 'GET', url, headers: { ...server.headers, ...extra } });
      walls.push(Number(process.hrtime.bigint() - t0) / 1e6);
      bytes = res.rawPayload.byteLength;
    }
    const cpu = process.cpuUsage(cpu0);
    out.push({
      answer: `REST /transactions limit=1000, ${name}`,
      coding: 'identity',
      bytes,
      wallMsMedian: Number(median(walls).toFixed(1)),
      cpuMsPerRequest: Number(((cpu.user + cpu.system) / 1000 / RUNS).toFixed(1)),
    });
  }
  process.stdout.write('| answer | coding | bytes | wall ms (median) | CPU ms / request |\n|---|---|---|---|---|\n');
  for (const r of out)
    process.stdout.write(
      `| ${String(r.answer)} | ${String(r.coding)} | ${Number(r.bytes).toLocaleString('en-US')} | ${String(r.wallMsMedian)} | ${String(r.cpuMsPerRequest)} |\n`,
    );
  process.stdout.write(`${JSON.stringify({ bench: 'answer-compression', rows: ROWS, runs: RUNS, machine: machine(), results: out })}\n`);
} finally {
  await server.close();
}
