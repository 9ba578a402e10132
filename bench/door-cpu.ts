// CPU per call of one method on JSON-RPC and on MCP (tools/call), in-process through
// app.inject: blocks of N calls alternating doors (JSON-RPC, MCP, MCP, JSON-RPC), 3 rounds,
// medians. No network and no load client, so a shared machine moves it far less than
// throughput. TREE runs another checkout's server (an A/B against an older commit).
//
//   npx tsx bench/door-cpu.ts                                  # getProtocols, 20k demo rows, blocks of 5,000
//   CALL=getProtocolStats N=2000 TREE=/path/to/checkout npx tsx bench/door-cpu.ts
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = process.env.TREE ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const { startBenchServer } = (await import(path.join(ROOT, 'bench/bench-server.ts'))) as typeof import('./bench-server.ts');
const server = await startBenchServer(Number(process.env.ROWS ?? 20_000));
const { app, headers } = server;
const MCP = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
const name = process.env.CALL ?? 'getProtocols';
const stats = name === 'getProtocolStats';
const rpc = JSON.stringify({ jsonrpc: '2.0', id: 1, method: name, params: stats ? [{ protocolName: 'jupiter_v6' }] : [] });
const mcp = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name, arguments: stats ? { options: { protocolName: 'jupiter_v6' } } : {} },
});
const N = Number(process.env.N ?? 5000);

async function block(door: 'rpc' | 'mcp'): Promise<number> {
  const h = door === 'rpc' ? { 'content-type': 'application/json', ...headers } : { 'content-type': 'application/json', ...MCP, ...headers };
  const before = process.cpuUsage();
  for (let i = 0; i < N; i++) {
    const r = await app.inject({ method: 'POST', url: door === 'rpc' ? '/v1/rpc' : '/mcp', headers: h, payload: door === 'rpc' ? rpc : mcp });
    if (r.statusCode !== 200) throw new Error(`${door}: ${r.statusCode} ${r.body.slice(0, 200)}`);
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / N;
}

// Warm both doors first.
await block('rpc');
await block('mcp');
const out = { rpc: [] as number[], mcp: [] as number[] };
for (let round = 0; round < 3; round++) for (const door of ['rpc', 'mcp', 'mcp', 'rpc'] as const) out[door].push(await block(door));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(
  JSON.stringify({
    tree: ROOT,
    call: name,
    callsPerBlock: N,
    rpcMicros: Number(median(out.rpc).toFixed(1)),
    mcpMicros: Number(median(out.mcp).toFixed(1)),
    ratio: Number((median(out.rpc) / median(out.mcp)).toFixed(3)),
  }),
);
await server.close();
process.exit(0);
