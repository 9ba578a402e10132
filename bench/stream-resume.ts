// Resumable live streams (issue 26): N open /graphql/stream connections (default 200), all
// subscribed to protocolActivity of every protocol; W writes through the pipeline, each into
// an hour of its own. After `--drop-at` writes a quarter of the streams disconnect, `--away`
// writes happen without them, and they reconnect with Last-Event-ID. Checks that every stream
// got every event exactly once (one per protocol per write; ids strictly increasing, no
// (protocol, hour) twice) and measures the replay latency: from the reconnect request to the
// last missed event received (p50/p99/max), and to the first.
// The streams are read by a child process (this file, forked with "client"), as in
// bench/subscription-fanout.ts: in the server's process they would share its event loop.
//
//   npx tsx bench/stream-resume.ts [--streams 200] [--writes 12] [--drop-at 4] [--away 4] [--gap-ms 300] [--rows 20000]
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { flag, machine } from './bench-support.ts';
import { startBenchServer } from './bench-server.ts';
import { forkClient, pct, runStreamBench, signatures, streamKeys } from './stream-harness.ts';

const SELF = fileURLToPath(import.meta.url);

interface ClientJob {
  url: string;
  keys: string[];
  streams: number;
}

/** What the client reports per stream at the end. */
interface StreamReport {
  events: number;
  duplicates: number;
  outOfOrder: number;
  pairs: string[];
}

const QUERY = 'subscription { protocolActivity { protocolName timestamp count } }';

async function client(job: ClientJob): Promise<void> {
  const state = Array.from({ length: job.streams }, () => ({
    lastId: undefined as string | undefined,
    lastSeq: -1,
    events: 0,
    duplicates: 0,
    outOfOrder: 0,
    seen: new Set<string>(),
    ctrl: new AbortController(),
  }));
  let open = 0;
  /** Reconnected streams waiting for their missed events: count expected, start, first arrival. */
  const replays = new Map<number, { expect: number; got: number; t0: number; first?: number; done?: number }>();

  async function read(i: number, lastEventId?: string): Promise<void> {
    const s = state[i]!;
    s.ctrl = new AbortController();
    const res = await fetch(job.url, {
      method: 'POST',
      headers: {
        'x-api-key': job.keys[i % job.keys.length]!,
        accept: 'text/event-stream',
        'content-type': 'application/json',
        ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }),
      },
      body: JSON.stringify({ query: QUERY }),
      signal: s.ctrl.signal,
    });
    if (res.status !== 200) throw new Error(`stream ${i}: ${res.status} ${await res.text()}`);
    if (lastEventId === undefined && ++open === job.streams) process.send!({ ready: true });
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of res.body!) {
        buf += decoder.decode(chunk as Uint8Array, { stream: true });
        let cut: number;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          const lines = block.split('\n');
          const id = lines.find((l) => l.startsWith('id: '))?.slice(4);
          const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
          const data = lines.find((l) => l.startsWith('data: {'));
          if (event === 'gap') throw new Error(`stream ${i}: unexpected gap ${data}`);
          if (event !== 'next' || data === undefined || id === undefined) continue;
          const payload = JSON.parse(data.slice(6)) as {
            data?: { protocolActivity?: { timestamp: number; protocolName: string } };
            extensions?: { gap?: unknown };
          };
          // A gap comes in a next event's extensions (docs/graphql-subscriptions.md).
          if (payload.extensions?.gap !== undefined) throw new Error(`stream ${i}: unexpected gap ${data}`);
          const a = payload.data?.protocolActivity;
          if (a === undefined) continue;
          const seq = Number(id.split('-')[1]);
          if (seq <= s.lastSeq) s.outOfOrder += 1;
          const pair = `${a.protocolName}#${a.timestamp}`;
          if (s.seen.has(pair)) s.duplicates += 1;
          s.seen.add(pair);
          s.lastSeq = Math.max(s.lastSeq, seq);
          s.lastId = id;
          s.events += 1;
          const r = replays.get(i);
          if (r !== undefined && r.done === undefined) {
            r.got += 1;
            r.first ??= performance.now();
            if (r.got === r.expect) {
              r.done = performance.now();
              if ([...replays.values()].every((x) => x.done !== undefined)) {
                process.send!({ replayed: [...replays.values()].map((x) => ({ firstMs: x.first! - x.t0, allMs: x.done! - x.t0 })) });
              }
            }
          }
        }
      }
    } catch (err) {
      if ((err as Error).name !== 'AbortError') throw err;
    }
  }

  const dropped = (i: number): boolean => i % 4 === 0;
  process.on('message', (m: { drop?: boolean; reconnect?: number; stop?: boolean }) => {
    if (m.drop) {
      for (let i = 0; i < job.streams; i++) if (dropped(i)) state[i]!.ctrl.abort();
      process.send!({ dropped: true });
    } else if (m.reconnect !== undefined) {
      for (let i = 0; i < job.streams; i++) {
        if (!dropped(i)) continue;
        replays.set(i, { expect: m.reconnect, got: 0, t0: performance.now() });
        void read(i, state[i]!.lastId);
      }
    } else if (m.stop) {
      for (const s of state) s.ctrl.abort();
      const report: StreamReport[] = state.map((s) => ({ events: s.events, duplicates: s.duplicates, outOfOrder: s.outOfOrder, pairs: [...s.seen] }));
      process.send!({ report }, () => process.exit(0));
    }
  });
  await Promise.all(Array.from({ length: job.streams }, (_, i) => read(i)));
}

async function main(): Promise<void> {
  const streams = Number(flag('streams', '200'));
  const writes = Number(flag('writes', '12'));
  const dropAt = Number(flag('drop-at', '4'));
  const away = Number(flag('away', '4'));
  const gapMs = Number(flag('gap-ms', '300'));
  const rows = Number(flag('rows', '20000'));
  const loadBefore = os.loadavg();
  const server = await startBenchServer(rows);
  const { services, baseUrl } = server;
  try {
    const keys = await streamKeys(server, streams, 'resume');
    const active = (await services.registry.list()).filter((p) => p.active);
    const { child, messages, waitFor } = forkClient<{
      ready?: boolean;
      dropped?: boolean;
      replayed?: { firstMs: number; allMs: number }[];
      report?: StreamReport[];
    }>(SELF, { url: `${baseUrl}/graphql/stream`, keys, streams } satisfies ClientJob);
    await waitFor(() => messages.some((m) => m.ready));
    while (services.live.subscribers < streams) await new Promise((r) => setTimeout(r, 20));

    const base = Math.floor(Date.now() / 1000 / 3600) * 3600 - 24 * 3600 * 400;
    const sigs = signatures();
    const write = async (w: number): Promise<void> => {
      const hour = base + w * 3600;
      const records = active.flatMap((p) =>
        Array.from({ length: 5 }, (_, i) => ({
          value: {
            signature: sigs.next(),
            slot: 350_000_000 + sigs.count(),
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
      const report = await services.pipeline.ingest(records, 'bench');
      if (report.accepted !== records.length) throw new Error(`write ${w}: ${report.accepted} of ${records.length} accepted`);
      await services.live.idle();
      await new Promise((r) => setTimeout(r, gapMs));
    };
    let replayed: { firstMs: number; allMs: number }[] = [];
    for (let w = 0; w < writes; w++) {
      if (w === dropAt) {
        child.send({ drop: true });
        await waitFor(() => messages.some((m) => m.dropped));
        while (services.live.subscribers > streams - Math.ceil(streams / 4)) await new Promise((r) => setTimeout(r, 20));
        for (let a = 0; a < away; a++) await write(w + a);
        w += away;
        child.send({ reconnect: away * active.length });
        await waitFor(() => messages.some((m) => m.replayed));
        replayed = messages.find((m) => m.replayed)!.replayed!;
      }
      if (w < writes) await write(w);
    }
    await new Promise((r) => setTimeout(r, 1500));
    child.send({ stop: true });
    await waitFor(() => messages.some((m) => m.report));
    const report = messages.find((m) => m.report)!.report!;
    const expectedPerStream = writes * active.length;
    const complete = report.filter(
      (s) => s.events === expectedPerStream && s.duplicates === 0 && s.outOfOrder === 0 && s.pairs.length === expectedPerStream,
    ).length;
    const round = (x: number): number => Math.round(x * 10) / 10;
    const all = replayed.map((r) => r.allMs);
    const first = replayed.map((r) => r.firstMs);
    const result = {
      date: new Date().toISOString(),
      machine: machine(),
      loadAverageBefore: loadBefore.map(round),
      loadAverageAfter: os.loadavg().map(round),
      command: `npx tsx bench/stream-resume.ts --streams ${streams} --writes ${writes} --drop-at ${dropAt} --away ${away} --gap-ms ${gapMs} --rows ${rows}`,
      streams,
      reconnected: replayed.length,
      writes,
      eventsPerStreamExpected: expectedPerStream,
      eventsReplayedPerReconnect: away * active.length,
      streamsWithEveryEventOnce: complete,
      duplicates: report.reduce((a, s) => a + s.duplicates, 0),
      outOfOrder: report.reduce((a, s) => a + s.outOfOrder, 0),
      eventsTotal: report.reduce((a, s) => a + s.events, 0),
      replayAllMissedMs: { p50: round(pct(all, 50)), p99: round(pct(all, 99)), max: round(Math.max(...all)) },
      replayFirstEventMs: { p50: round(pct(first, 50)), p99: round(pct(first, 99)), max: round(Math.max(...first)) },
      eventsKept: services.live.events.size,
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    writeFileSync(new URL(`./results/stream-resume-${streams}.json`, import.meta.url), `${JSON.stringify(result, null, 2)}\n`);
    child.kill();
  } finally {
    await server.close();
  }
}

runStreamBench<ClientJob>(main, client);
