// MCP tool calls against the same JSON-RPC calls, in the same run, over loopback with
// autocannon in a process of its own (load-client.ts). An MCP call is what a stateless
// Streamable HTTP client sends for each tool call (the SDK's client does the same after its
// one `initialize`): POST /mcp with a `tools/call` JSON-RPC request, Accept naming JSON and
// event streams, and the negotiated protocol version. Each pair runs JSON-RPC, MCP, MCP,
// JSON-RPC (so drift of a shared, loaded machine falls on both alike), and the ratio is the
// MCP door's throughput over JSON-RPC's. The load average is printed with every run. Then
// the server's CPU time per call on each door (sequential app.inject calls), whose ratio a
// shared, loaded machine moves far less.
//
//   npm run bench:mcp                                   # 100k demo rows, 10 s per run, 16 connections
//   BENCH_SECONDS=3 BENCH_ROWS=20000 npx tsx bench/mcp-load.ts   # quick smoke run
import { loadavg } from 'node:os';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { Result } from 'autocannon';
import { StatelessJsonTransport } from '../api/doors/mcp/mcp-transport.ts';
import { startBenchServer } from './bench-server.ts';
import { runLoad } from './load-client.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
/** Calls per block of the CPU-time comparison (blocks of 200 swung 0.68-0.79 between runs: GC and JIT). */
const CPU_CALLS = Number(process.env.BENCH_CPU_CALLS ?? 2000);

const rpcBody = (method: string, params: unknown[]): string => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
/** The tool call of the same method: its positions by name (api/doors/mcp/mcp-tools.ts). */
const mcpBody = (name: string, args: Record<string, unknown>): string =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });

const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };

interface Pair {
  name: string;
  rpc: () => string;
  mcp: () => string;
}

/** Microseconds per tools/call through the SDK alone (a new server and transport per call, as the door does). */
async function sdkFloorMicros(calls: number): Promise<number> {
  const validator = new AjvJsonSchemaValidator();
  const message = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'constant', arguments: {} } };
  const one = async (): Promise<string> => {
    const server = new Server({ name: 'floor', version: '1.0.0' }, { capabilities: { tools: {} }, jsonSchemaValidator: validator });
    server.setRequestHandler(CallToolRequestSchema, () => ({ content: [{ type: 'text', text: '["ok"]' }] }));
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
    await server.connect(transport);
    const headers = new Headers({ ...MCP_HEADERS, 'content-type': 'application/json' });
    const res = await transport.handleRequest({ method: 'POST', url: 'http://bench/mcp', headers } as Request, { parsedBody: message });
    return res.text();
  };
  for (let i = 0; i < calls / 4; i++) await one();
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) await one();
  return ((performance.now() - t0) * 1000) / calls;
}

/** The same through the door's transport: one Server and transport for every call, as the door runs them. */
async function doorFloorMicros(calls: number): Promise<number> {
  const server = new Server({ name: 'floor', version: '1.0.0' }, { capabilities: { tools: {} }, jsonSchemaValidator: new AjvJsonSchemaValidator() });
  server.setRequestHandler(CallToolRequestSchema, () => ({ content: [{ type: 'text', text: '["ok"]' }] }));
  const transport = new StatelessJsonTransport<null>();
  await server.connect(transport);
  const one = async (): Promise<string | undefined> => {
    const message = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'constant', arguments: {} } };
    return (
      await transport.handle(
        { accept: MCP_HEADERS.accept, contentType: 'application/json', protocolVersion: MCP_HEADERS['mcp-protocol-version'], body: message },
        null,
      )
    ).body;
  };
  for (let i = 0; i < calls / 4; i++) await one();
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) await one();
  return ((performance.now() - t0) * 1000) / calls;
}

const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

async function main(): Promise<void> {
  const server = await startBenchServer(ROWS);
  const { services, app, headers } = server;
  const connectionHeaders = await server.connectionHeaders(CONNECTIONS);
  try {
    const sigs = (
      await services.wh.query<{ s: string }>(
        "SELECT signature AS s FROM transactions WHERE protocol_name IN {p:Array(String)} ORDER BY cityHash64(signature, 'bench') LIMIT 20000",
        { params: { p: await services.analytics.protocols() } },
      )
    ).map((r) => r.s);
    const [span] = await services.wh.query<{ last: number }>('SELECT toUInt32(toStartOfDay(max(hour_start))) AS last FROM protocol_hourly');
    const day = Number(span?.last ?? 0) - 2 * 86_400;
    const activity = { protocolName: 'pump_fun', blockTime: { gte: day, lte: day + 86_399 } };
    const pairs: Pair[] = [
      { name: 'getProtocols', rpc: () => rpcBody('getProtocols', []), mcp: () => mcpBody('getProtocols', {}) },
      {
        name: 'getProtocolStats full range',
        rpc: () => rpcBody('getProtocolStats', [{ protocolName: 'jupiter_v6' }]),
        mcp: () => mcpBody('getProtocolStats', { options: { protocolName: 'jupiter_v6' } }),
      },
      {
        name: 'getProtocolActivity one day hourly',
        rpc: () => rpcBody('getProtocolActivity', [activity]),
        mcp: () => mcpBody('getProtocolActivity', { options: activity }),
      },
      {
        name: 'getTransaction random known signature',
        rpc: () => rpcBody('getTransaction', [sigs[Math.floor(Math.random() * sigs.length)]]),
        mcp: () => mcpBody('getTransaction', { signature: sigs[Math.floor(Math.random() * sigs.length)] }),
      },
    ];
    const only = process.env.BENCH_ONLY?.split(',').filter(Boolean);
    const chosen = pairs.filter((p) => !only || only.some((o) => p.name.startsWith(o)));

    // Each call must answer correctly on both doors, and the same, before it is timed.
    for (const p of chosen.filter((x) => x.name !== 'getTransaction random known signature')) {
      const r = await app.inject({ method: 'POST', url: '/v1/rpc', headers: { 'content-type': 'application/json', ...headers }, payload: p.rpc() });
      const m = await app.inject({
        method: 'POST',
        url: '/mcp',
        headers: { 'content-type': 'application/json', ...MCP_HEADERS, ...headers },
        payload: p.mcp(),
      });
      const mcpText = (m.json() as { result?: { isError?: boolean; content: { text: string }[] } }).result;
      if (
        r.statusCode !== 200 ||
        m.statusCode !== 200 ||
        mcpText?.isError === true ||
        JSON.stringify(JSON.parse(mcpText?.content[0]?.text ?? 'null')) !== JSON.stringify((r.json() as { result: unknown }).result)
      ) {
        throw new Error(`${p.name}: the doors disagree: ${r.body.slice(0, 200)} / ${m.body.slice(0, 200)}`);
      }
    }

    const run = async (path: string, extra: Record<string, string>, make: () => string, needle: string): Promise<{ result: Result; bad: number }> => {
      const bodies = Array.from({ length: 20_000 }, make);
      const { result, matched } = await runLoad({
        url: `${server.baseUrl}${path}`,
        connections: CONNECTIONS,
        seconds: SECONDS,
        headers: { 'content-type': 'application/json', ...extra },
        bodies,
        countBodiesContaining: needle,
        connectionHeaders,
      });
      return { result, bad: matched };
    };
    // Warm-up of both doors.
    await run('/v1/rpc', {}, chosen[0]!.rpc, '"error":');
    await run('/mcp', MCP_HEADERS, chosen[0]!.mcp, '"isError":true');

    const rows = [];
    for (const p of chosen) {
      const rps = { rpc: [] as number[], mcp: [] as number[] };
      const p99 = { rpc: [] as number[], mcp: [] as number[] };
      let bad = 0;
      const loads: string[] = [];
      for (const door of ['rpc', 'mcp', 'mcp', 'rpc'] as const) {
        loads.push(load());
        process.stdout.write(`${p.name} ${door}: ${SECONDS}s x ${CONNECTIONS} connections (load ${loads.at(-1)})\n`);
        const r = door === 'rpc' ? await run('/v1/rpc', {}, p.rpc, '"error":') : await run('/mcp', MCP_HEADERS, p.mcp, '"isError":true');
        rps[door].push(r.result.requests.average);
        p99[door].push(r.result.latency.p99);
        bad += r.bad + r.result.non2xx + r.result.errors;
      }
      const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
      rows.push({
        call: p.name,
        rpcPerSec: Math.round(mean(rps.rpc)),
        mcpPerSec: Math.round(mean(rps.mcp)),
        ratio: Number((mean(rps.mcp) / mean(rps.rpc)).toFixed(3)),
        rpcP99Ms: Math.max(...p99.rpc),
        mcpP99Ms: Math.max(...p99.mcp),
        failed: bad,
        loadAvg: `${loads[0]} .. ${load()}`,
      });
    }
    console.table(rows);

    // The server's CPU time per call, one call at a time through app.inject (no network, no
    // load client): what each door costs this process, far less moved by a loaded machine than
    // throughput. Doors alternate in blocks of CPU_CALLS.
    const cpu = [];
    for (const p of chosen) {
      const per = { rpc: [] as number[], mcp: [] as number[] };
      for (const door of ['rpc', 'mcp', 'mcp', 'rpc'] as const) {
        const h = door === 'rpc' ? { 'content-type': 'application/json', ...headers } : { 'content-type': 'application/json', ...MCP_HEADERS, ...headers };
        const make = door === 'rpc' ? p.rpc : p.mcp;
        const before = process.cpuUsage();
        for (let i = 0; i < CPU_CALLS; i++) {
          const res = await app.inject({ method: 'POST', url: door === 'rpc' ? '/v1/rpc' : '/mcp', headers: h, payload: make() });
          if (res.statusCode !== 200) throw new Error(`${p.name} ${door}: ${res.statusCode} ${res.body.slice(0, 200)}`);
        }
        const used = process.cpuUsage(before);
        per[door].push((used.user + used.system) / 1000 / CPU_CALLS);
      }
      const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
      cpu.push({
        call: p.name,
        rpcCpuMsPerCall: Number(mean(per.rpc).toFixed(3)),
        mcpCpuMsPerCall: Number(mean(per.mcp).toFixed(3)),
        ratio: Number((mean(per.rpc) / mean(per.mcp)).toFixed(3)),
      });
    }
    console.table(cpu);

    // The SDK's own floor: a bare Server on the same stateless JSON transport answering a
    // constant tool call, no service code at all. Its time per call is the least any tool
    // call through the official transport can cost here; compare it with the CPU table.
    // And the same Server on the door's own transport (api/doors/mcp/mcp-transport.ts), alternated.
    const floors = { sdk: [] as number[], door: [] as number[] };
    for (let i = 0; i < 2; i++) {
      floors.sdk.push(await sdkFloorMicros(2000));
      floors.door.push(await doorFloorMicros(2000));
    }
    const sdk = (floors.sdk[0]! + floors.sdk[1]!) / 2;
    const door = (floors.door[0]! + floors.door[1]!) / 2;
    process.stdout.write(`SDK floor (Server + the SDK's stateless Streamable HTTP transport, constant tool): ${sdk.toFixed(0)} µs per call (load ${load()})\n`);
    process.stdout.write(`door floor (the SDK's Server on the door's transport, constant tool): ${door.toFixed(0)} µs per call (load ${load()})\n`);
    process.stdout.write(
      `${JSON.stringify({ rows: ROWS, seconds: SECONDS, connections: CONNECTIONS, cores: (await import('node:os')).cpus().length, results: rows, cpu, sdkFloorMicros: Math.round(sdk), doorFloorMicros: Math.round(door) })}\n`,
    );
  } finally {
    await server.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
