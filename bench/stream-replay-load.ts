// Replays against everyone else (the security review's finding: 32 replays from 16 free keys
// pushed another key's /health p99 to 1.45 s, and one free-key request replayed 83,299
// events). The server's replay log is filled with `--writes` writes of 4,900 buckets (7
// protocols x 700 hours, one event each); then a forked client (so the server's event loop is
// measured alone) opens `--replays` streams with Last-Event-ID from before them, two per free
// key, while it asks GET /health every `--probe-ms`. Reports /health latency (p50/p99/max) while
// the replays run, the events each replay received and how it ended, and the time.
// RATE_LIMIT_CLOCK=real makes the free keys' rate limit bind as in service (by default the
// bench's rate-limit clock runs 1000 times faster, so only the pace of replays is measured).
//
//   npx tsx bench/stream-replay-load.ts [--writes 4] [--replays 32] [--probe-ms 20]
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { flag, machine } from './bench-support.ts';
import { startBenchServer } from './bench-server.ts';
import { forkClient, pct, runStreamBench, signatures } from './stream-harness.ts';

const SELF = fileURLToPath(import.meta.url);
const QUERY = 'subscription { protocolActivity { protocolName timestamp count } }';
const IDLE_PROBE_MS = 2000;

interface Job {
  url: string;
  health: string;
  keys: string[];
  listenerKey: string;
  replays: number;
  from: string;
  probeMs: number;
}
interface Replay {
  events: number;
  ending: string;
  ms: number;
}

async function read(url: string, key: string, lastEventId: string | undefined, signal: AbortSignal, onEvent: (block: string) => void): Promise<void> {
  const res = await fetch(url, {
    method: 'POST',
    signal,
    headers: { 'x-api-key': key, accept: 'text/event-stream', 'content-type': 'application/json', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
    body: JSON.stringify({ query: QUERY }),
  });
  let buf = '';
  const decoder = new TextDecoder();
  try {
    for await (const chunk of res.body!) {
      buf += decoder.decode(chunk as Uint8Array, { stream: true });
      const blocks = buf.split('\n\n');
      buf = blocks.pop()!;
      for (const b of blocks) if (!b.startsWith(':')) onEvent(b);
    }
  } catch {
    /* aborted */
  }
}

async function client(job: Job): Promise<void> {
  const ctrl = new AbortController();
  void read(job.url, job.listenerKey, undefined, ctrl.signal, () => undefined);
  process.send!({ ready: true });
  // The replays stop at the events logged, or at the stream's own end (RATE_LIMITED).
  const expected = await new Promise<number>((resolve) => process.once('message', (m: { go: number }) => resolve(m.go)));
  let probing = true;
  const probe = async (into: number[], until: () => boolean): Promise<void> => {
    while (!until()) {
      const t0 = performance.now();
      await (await fetch(job.health)).text();
      into.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, job.probeMs));
    }
  };
  // The same probes on the idle server first: what /health costs without replays.
  const idle: number[] = [];
  const idleUntil = performance.now() + IDLE_PROBE_MS;
  await probe(idle, () => performance.now() > idleUntil);
  const health: number[] = [];
  const probed = probe(health, () => !probing);
  const t0 = performance.now();
  const replays = await Promise.all(
    Array.from({ length: job.replays }, async (_, i): Promise<Replay> => {
      const r: Replay = { events: 0, ending: 'open', ms: 0 };
      const done = new AbortController();
      await read(job.url, job.keys[i % job.keys.length]!, job.from, done.signal, (b) => {
        if (b.includes('event: complete')) r.ending = r.ending === 'open' ? 'complete' : r.ending;
        else if (b.includes('"errors"')) r.ending = /"code":"(\w+)"/.exec(b)?.[1] ?? 'error';
        else if (b.includes('event: next')) r.events += 1;
        if (r.events === expected) {
          r.ending = 'all';
          done.abort();
        }
      });
      r.ms = performance.now() - t0;
      return r;
    }),
  );
  probing = false;
  await probed;
  ctrl.abort();
  process.send!({ report: { replays, health, idle, ms: performance.now() - t0 } }, () => process.exit(0));
}

async function main(): Promise<void> {
  const writes = Number(flag('writes', '4'));
  const replays = Number(flag('replays', '32'));
  const loadBefore = os.loadavg();
  const server = await startBenchServer(0);
  const { services, app, baseUrl } = server;
  try {
    const keys: string[] = [];
    for (let i = 0; i < Math.ceil(replays / 2); i++) {
      const res = await app.inject({
        method: 'POST',
        url: '/admin/keys',
        headers: { authorization: `Bearer ${services.config.adminToken}` },
        payload: { name: `replay-${i}`, plan: 'free' },
      });
      keys.push((res.json() as { key: string }).key);
    }
    const from = services.live.events.headId();
    const job: Job = {
      url: `${baseUrl}/graphql/stream`,
      health: `${baseUrl}/health`,
      keys,
      listenerKey: server.headers['x-api-key']!,
      replays,
      from,
      probeMs: Number(flag('probe-ms', '20')),
    };
    const { child, messages, waitFor } = forkClient<{ ready?: boolean; report?: { replays: Replay[]; health: number[]; idle: number[]; ms: number } }>(
      SELF,
      job,
    );
    await waitFor(() => messages.some((m) => m.ready));
    while (services.live.subscribers < 1) await new Promise((r) => setTimeout(r, 20));
    const active = (await services.registry.list()).filter((p) => p.active).slice(0, 7);
    const sigs = signatures();
    const base = Math.floor(Date.now() / 1000 / 3600) * 3600 - 24 * 3600 * 400;
    for (let w = 0; w < writes; w++) {
      const records = active.flatMap((p) =>
        Array.from({ length: 700 }, (_, i) => ({
          value: {
            signature: sigs.next(),
            slot: 350_000_000 + sigs.count(),
            block_time: base + (w * 700 + i) * 3600,
            program_id: p.programId,
            protocol_name: p.protocolName,
            instruction_type: 'swap',
            fee: 5000,
            compute_units: 100_000,
            accounts_count: 2,
            success: true,
          },
          position: { line: i + 1 },
        })),
      );
      await services.pipeline.ingest(records, 'bench');
      await services.live.idle();
      process.stderr.write(`write ${w + 1}/${writes}: ${services.live.events.size} events logged\n`);
    }
    const logged = services.live.events.size;
    process.stderr.write(`${replays} replays of ${logged} events\n`);
    child.send({ go: logged });
    await waitFor(() => messages.some((m) => m.report));
    const { replays: got, health, idle, ms } = messages.find((m) => m.report)!.report!;
    const endings: Record<string, number> = {};
    for (const r of got) endings[r.ending] = (endings[r.ending] ?? 0) + 1;
    const events = got.map((r) => r.events);
    const round = (x: number): number => Math.round(x * 10) / 10;
    process.stdout.write(
      `${JSON.stringify(
        {
          date: new Date().toISOString(),
          machine: machine(),
          rateLimitClock: process.env.RATE_LIMIT_CLOCK === 'real' ? 'real' : 'fast',
          logged,
          replays,
          eventsReplayed: events.reduce((a, b) => a + b, 0),
          perReplay: { min: Math.min(...events), max: Math.max(...events) },
          endings,
          seconds: round(ms / 1000),
          health: { probes: health.length, p50: round(pct(health, 50)), p99: round(pct(health, 99)), max: round(Math.max(...health)) },
          healthIdle: { probes: idle.length, p50: round(pct(idle, 50)), p99: round(pct(idle, 99)), max: round(Math.max(...idle)) },
          loadBefore: loadBefore.map(round),
          loadAfter: os.loadavg().map(round),
        },
        null,
        1,
      )}\n`,
    );
  } finally {
    await server.close();
  }
}

runStreamBench(main, client);
