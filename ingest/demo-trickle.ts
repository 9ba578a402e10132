// The demo's live trickle: while the service runs on seeded demo data, a few demo records
// arrive every few seconds, with block times up to now, through the same pipeline as every
// other source (so freshness, the live GraphQL streams, caches and /metrics see them as they
// would a real deployment's writes). Without it the dashboard's Live page showed a dead
// store: the hourly chart fell to 0 in the current hour, the newest record was minutes old,
// and stale-data alerts fired on any demo.
//
// The records continue the seeded data set: same seed, so the same wallets, pools and
// protocol mix; ids past the seeded rows (DEMO_TRICKLE_ID_BASE), so no signature repeats
// one. Each write covers the seconds since the previous one (the first reaches back to the
// newest stored record, at most DEMO_TRICKLE_BACKFILL_SECONDS) and holds the records due in
// them at the configured rate; a write with none due is skipped.
import { DEMO_TRICKLE_BACKFILL_SECONDS, DEMO_TRICKLE_ID_BASE, DEMO_TRICKLE_IDS_PER_SECOND, DEMO_TRICKLE_MAX_PER_WRITE } from '../core/limits/ingest.ts';
import type { Logger } from '../core/logger.ts';
import { readFreshness } from '../warehouse/ingest-freshness.ts';
import { TABLES } from '../warehouse/tables.ts';
import type { Warehouse } from '../warehouse/warehouse.ts';
import { demoRecordsNdjson } from './demo-generator.ts';
import type { IngestReport, RawRecord } from './pipeline.ts';

/** Where trickled records go: the ingest pipeline (its source label is `demo`). */
export interface TrickleSink {
  ingest(records: readonly RawRecord[], source: string): Promise<IngestReport>;
}

export interface DemoTrickleOptions {
  seed: number;
  perMinute: number;
  intervalMs: number;
  /** Milliseconds since the epoch (a test's clock). */
  now?: () => number;
}

export class DemoTrickle {
  /** Writes made (each stored the records due since the previous one) and records they stored. */
  writes = 0;
  records = 0;
  /** Start of the next write's window, Unix seconds. */
  private from = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly now: () => number;

  constructor(
    private readonly wh: Warehouse,
    private readonly sink: TrickleSink,
    private readonly log: Logger,
    private readonly options: DemoTrickleOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** Begin after the newest stored record (at most DEMO_TRICKLE_BACKFILL_SECONDS back), then every intervalMs. */
  async start(): Promise<void> {
    const nowSeconds = Math.floor(this.now() / 1000);
    const { newestBlockTime } = await readFreshness(this.wh);
    this.from = Math.max(nowSeconds - DEMO_TRICKLE_BACKFILL_SECONDS, (newestBlockTime ?? 0) + 1);
    this.log.info(
      { perMinute: this.options.perMinute, intervalMs: this.options.intervalMs },
      'demo trickle: demo records keep arriving (DEMO_TRICKLE=0 turns it off)',
    );
    this.schedule(0);
  }

  /** Stop; resolves once a write in progress has finished (before the engine closes). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.tick()
        .catch((err: unknown) => this.log.warn({ err }, 'demo trickle: a write failed; the next one tries again'))
        .finally(() => this.schedule(this.options.intervalMs));
    }, delayMs);
    // A trickle never keeps the process alive on its own.
    this.timer.unref();
  }

  /** The records due in [from, now) at the configured rate, generated and ingested as one write. */
  private async tick(): Promise<void> {
    const to = Math.floor(this.now() / 1000);
    const perSecond = this.options.perMinute / 60;
    const due = Math.min(DEMO_TRICKLE_MAX_PER_WRITE, Math.floor(to * perSecond) - Math.floor(this.from * perSecond));
    if (to <= this.from || due <= 0) return;
    const text = await demoRecordsNdjson(this.wh, {
      seed: this.options.seed,
      total: due,
      offset: 0,
      count: due,
      startTime: this.from,
      endTime: to,
      idBase: DEMO_TRICKLE_ID_BASE + this.from * DEMO_TRICKLE_IDS_PER_SECOND,
    });
    const lines = text.split('\n').filter((l) => l !== '');
    const report = await this.sink.ingest(
      lines.map((value, i) => ({ value, position: { line: i + 1 } })),
      'demo',
    );
    this.from = to;
    this.writes += 1;
    this.records += report.accepted;
  }
}

/**
 * Whether the store holds the demo data set of `seed` (its first record): the trickle joins
 * seeded demo data, never a store of real records that a non-zero DEMO_ROWS left unseeded.
 */
export async function holdsDemoData(wh: Warehouse, seed: number): Promise<boolean> {
  const [first] = (await demoRecordsNdjson(wh, { seed, total: 1, offset: 0, count: 1, startTime: 0, endTime: 1 })).split('\n');
  const signature = (JSON.parse(first!) as { signature: string }).signature;
  const [row] = await wh.query<{ n: string }>(`SELECT count() AS n FROM ${TABLES.txRidBySig} WHERE sig_key = cityHash64({s:String})`, {
    params: { s: signature },
  });
  return Number(row?.n ?? 0) > 0;
}
