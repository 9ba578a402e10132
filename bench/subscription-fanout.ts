// Live subscription fan-out: N open /graphql/stream connections (default 200) on one API
// process, all subscribed to protocolActivity of every protocol; B writes through the
// pipeline, each into an hour of its own, a few hundred ms apart. Measures the delay from
// the start of each insert to each stream's event for that write (p50/p90/p99/max), how
// many events arrived of those expected, and the reads the hub made (one per write,
// whatever the number of streams).
// The streams are read by a child process (this file, forked with "client"): run in the
// server's process, the clients would share its event loop and every figure would measure both.
// Clocks: both processes read the same wall clock (performance.timeOrigin + now()).
//
//   npx tsx bench/subscription-fanout.ts [--streams 200] [--writes 30] [--gap-ms 500] [--rows 100000] [--per-protocol 10]
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { flag, machine } from './bench-support.ts';
import { startBenchServer } from './bench-server.ts';
import { forkClient, pct, runStreamBench, signatures, streamKeys } from './stream-harness.ts';

const SELF = fileURLToPath(import.meta.url);
const wallMs = (): number => performance.timeOrigin + performance.now();

interface ClientJob {
  url: string;
  keys: string[];
  streams: number;
}

/** A line the client sends per event: stream index, bucket start, protocol, arrival time. */
type Arrival = [number, number, string, number];

async function client(job: ClientJob): Promise<void> {
  const query = 'subscription { protocolActivity { protocolName timestamp count successCount failedCount totalFees totalComputeUnits } }';
  const arrivals: Arrival[] = [];
  let open = 0;
  const controllers: AbortController[] = [];
  const readers = Array.from({ length: job.streams }, async (_, i) => {
    const ctrl = new AbortController();
    controllers.push(ctrl);
    const res = await fetch(job.url, {
      method: 'POST',
      headers: { 'x-api-key': job.keys[i % job.keys.length]!, accept: 'text/event-stream', 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
      signal: ctrl.signal,
    });
    if (res.status !== 200) throw new Error(`stream ${i}: ${res.status} ${await res.text()}`);
    open += 1;
    if (open === job.streams) process.send!({ ready: true });
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of res.body!) {
        const at = wallMs();
        buf += decoder.decode(chunk, { stream: true });
        let cut: number;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          const data = block.split('\n').find((l) => l.startsWith('data: {'));
          if (!block.startsWith('event: next') || data === undefined) continue;
          const e = (JSON.parse(data.slice(6)) as { data?: { protocolActivity?: { timestamp: number; protocolName: string } } }).data?.protocolActivity;
          if (e) arrivals.push([i, e.timestamp, e.protocolName, at]);
        }
      }
    } catch (err) {
      if ((err as Error).name !== 'AbortError') throw err;
    }
  });
  process.on('message', (m: { stop?: boolean }) => {
    if (!m.stop) return;
    for (const c of controllers) c.abort();
    process.send!({ arrivals }, () => process.exit(0));
  });
  await Promise.all(readers);
}

async function main(): Promise<void> {
  const streams = Number(flag('streams', '200'));
  const writes = Number(flag('writes', '30'));
  const gapMs = Number(flag('gap-ms', '500'));
  const rows = Number(flag('rows', '100000'));
  const perProtocol = Number(flag('per-protocol', '10'));
  const server = await startBenchServer(rows);
  const { services, baseUrl } = server;
  try {
    const keys = await streamKeys(server, streams, 'fanout');
    const active = (await services.registry.list()).filter((p) => p.active);
    const { child, messages, waitFor } = forkClient<{ ready?: boolean; arrivals?: Arrival[] }>(SELF, {
      url: `${baseUrl}/graphql/stream`,
      keys,
      streams,
    } satisfies ClientJob);
    await waitFor(() => messages.some((m) => m.ready));
    while (services.live.subscribers < streams) await new Promise((r) => setTimeout(r, 20));

    // Each write: perProtocol records of every active protocol in an hour of its own, so
    // each stream gets one event per protocol per write, and its timestamp names the write.
    const base = Math.floor(Date.now() / 1000 / 3600) * 3600 - 24 * 3600 * 400;
    const started = new Map<number, number>();
    // When each write was committed (the pipeline reports it before ingest() returns): the
    // delay from there to an event is the fan-out's own (one read, then every stream).
    const committed = new Map<number, number>();
    services.pipeline.observeChanges({ dataChanged: (c) => committed.set(c.buckets[0]!.hourStart, wallMs()) });
    const ingestMs: number[] = [];
    const readsBefore = services.live.reads;
    const sigs = signatures();
    for (let w = 0; w < writes; w++) {
      const hour = base + w * 3600;
      const records = active.flatMap((p) =>
        Array.from({ length: perProtocol }, (_, i) => ({
          value: {
            signature: sigs.next(),
            slot: 1 + sigs.count(),
            block_time: hour + i,
            program_id: p.programId,
            protocol_name: p.protocolName,
            instruction_type: 'swap',
            fee: 5000 + i,
            compute_units: 100_000 + i,
            accounts_count: 2,
            success: i % 7 !== 0,
          },
          position: { line: i + 1 },
        })),
      );
      started.set(hour, wallMs());
      const t0 = performance.now();
      const report = await services.pipeline.ingest(records, 'bench');
      ingestMs.push(performance.now() - t0);
      if (report.accepted !== records.length) throw new Error(`write ${w}: ${report.accepted} of ${records.length} accepted`);
      await new Promise((r) => setTimeout(r, gapMs));
    }
    await services.live.idle();
    await new Promise((r) => setTimeout(r, 2000));
    const reads = services.live.reads - readsBefore;
    child.send({ stop: true });
    await waitFor(() => messages.some((m) => m.arrivals));
    const arrivals = messages.find((m) => m.arrivals)!.arrivals!;
    const delays = arrivals.filter(([, ts]) => started.has(ts)).map(([, ts, , at]) => at - started.get(ts)!);
    const fromCommit = arrivals.filter(([, ts]) => committed.has(ts)).map(([, ts, , at]) => at - committed.get(ts)!);
    const expected = writes * active.length * streams;
    const result = {
      date: new Date().toISOString(),
      machine: machine(),
      command: `npx tsx bench/subscription-fanout.ts --streams ${streams} --writes ${writes} --gap-ms ${gapMs} --rows ${rows} --per-protocol ${perProtocol}`,
      streams,
      writes,
      recordsPerWrite: active.length * perProtocol,
      eventsExpected: expected,
      eventsReceived: delays.length,
      hubReads: reads,
      insertToEventMs: { p50: pct(delays, 50), p90: pct(delays, 90), p99: pct(delays, 99), max: Math.max(...delays) },
      commitToEventMs: { p50: pct(fromCommit, 50), p90: pct(fromCommit, 90), p99: pct(fromCommit, 99), max: Math.max(...fromCommit) },
      ingestCallMs: { p50: pct(ingestMs, 50), p99: pct(ingestMs, 99) },
    };
    const round = (x: number): number => Math.round(x * 10) / 10;
    for (const k of ['insertToEventMs', 'commitToEventMs', 'ingestCallMs'] as const)
      for (const [p, v] of Object.entries(result[k])) (result[k] as Record<string, number>)[p] = round(v);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    writeFileSync(new URL(`./results/subscription-fanout-${streams}.json`, import.meta.url), `${JSON.stringify(result, null, 2)}\n`);
    child.kill();
  } finally {
    await server.close();
  }
}

runStreamBench<ClientJob>(main, client);
