// How fresh the data behind an answer is: per protocol, the newest ingested block_time and
// the newest ingest time, kept in memory so that saying it costs no query per request.
// This process's pipeline reports each committed write (DataChangeObserver); writes of
// another process (npm run ingest, another replica) are learnt by re-reading the one-row-
// per-protocol table ingest_freshness every FRESHNESS_REFRESH_MS. Figures only move forward.
// Every interface states the figures of the protocols its caller may see (docs/access.md,
// "Freshness"): response headers on all four, extensions.freshness in GraphQL.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../../core/logger.ts';
import type { CommittedChange, DataChangeObserver } from '../../core/observers.ts';
import { readFreshnessByProtocol } from '../../warehouse/ingest-freshness.ts';
import type { Warehouse } from '../../warehouse/warehouse.ts';
import { policyOf } from './access/route-policy.ts';
import type { EdgeStep } from './answers/answer-edge.ts';

/** Header names (docs/access.md, "Freshness"). */
export const NEWEST_BLOCK_TIME_HEADER = 'x-data-newest-block-time';
export const INGESTED_AT_HEADER = 'x-data-ingested-at';

export interface FreshnessFigures {
  /** Unix seconds of the newest stored block_time; null when nothing visible is stored. */
  newestBlockTime: number | null;
  /** Unix milliseconds of the newest ingest; null when nothing visible is stored. */
  ingestedAtMs: number | null;
}

/** The shape of GraphQL's `extensions.freshness` (ISO 8601, UTC; null when nothing is stored). */
export interface FreshnessExtension {
  newestBlockTime: string | null;
  ingestedAt: string | null;
}

interface Mark {
  blockTime: number;
  ingestedAtMs: number;
}

export class FreshnessWatermark implements DataChangeObserver {
  private readonly marks = new Map<string, Mark>();
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private lastHeaders: { figures: FreshnessFigures; list: readonly (readonly [string, string])[] } | undefined;

  constructor(
    private readonly wh: Warehouse,
    private readonly log: Logger,
    private readonly refreshMs: number,
  ) {}

  /** Read the store once (awaited: the first answer already carries figures), then keep refreshing. */
  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One read at a time: a slow engine cannot pile refreshes up. A failed read keeps the figures. */
  refresh(): Promise<void> {
    this.refreshing ??= readFreshnessByProtocol(this.wh)
      .then((rows) => {
        for (const [protocol, f] of rows) this.raise(protocol, f.newestBlockTime, Math.round(f.newestIngestedAt * 1000));
      })
      .catch((err: unknown) => this.log.warn({ err }, 'freshness refresh failed; keeping the last figures'))
      .finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  dataChanged(change: CommittedChange): void {
    for (const n of change.newestBlockTimes) this.raise(n.protocolName, n.blockTime, change.committedAt);
  }

  private raise(protocol: string, blockTime: number, ingestedAtMs: number): void {
    const m = this.marks.get(protocol);
    if (m === undefined) this.marks.set(protocol, { blockTime, ingestedAtMs });
    else {
      m.blockTime = Math.max(m.blockTime, blockTime);
      m.ingestedAtMs = Math.max(m.ingestedAtMs, ingestedAtMs);
    }
  }

  /** Figures over `visible` protocols (all stored ones when undefined). */
  current(visible?: readonly string[]): FreshnessFigures {
    let newestBlockTime: number | null = null;
    let ingestedAtMs: number | null = null;
    for (const name of visible ?? this.marks.keys()) {
      const m = this.marks.get(name);
      if (m === undefined) continue;
      newestBlockTime = Math.max(newestBlockTime ?? 0, m.blockTime);
      ingestedAtMs = Math.max(ingestedAtMs ?? 0, m.ingestedAtMs);
    }
    return { newestBlockTime, ingestedAtMs };
  }

  /** `extensions.freshness` of a GraphQL answer over `visible` protocols. */
  extension(visible?: readonly string[]): FreshnessExtension {
    return toExtension(this.current(visible));
  }

  /** Response headers for `visible` protocols; none when nothing visible is stored. The same
   *  figures as last time give the same list (every answer asks; callers only read it). */
  headers(visible?: readonly string[]): readonly (readonly [string, string])[] {
    const f = this.current(visible);
    const last = this.lastHeaders;
    if (last !== undefined && last.figures.newestBlockTime === f.newestBlockTime && last.figures.ingestedAtMs === f.ingestedAtMs) return last.list;
    const e = toExtension(f);
    const list: [string, string][] = [];
    if (e.newestBlockTime !== null) list.push([NEWEST_BLOCK_TIME_HEADER, e.newestBlockTime]);
    if (e.ingestedAt !== null) list.push([INGESTED_AT_HEADER, e.ingestedAt]);
    this.lastHeaders = { figures: f, list };
    return list;
  }
}

export function toExtension(f: FreshnessFigures): FreshnessExtension {
  return {
    newestBlockTime: f.newestBlockTime === null ? null : new Date(f.newestBlockTime * 1000).toISOString().replace('.000Z', 'Z'),
    ingestedAt: f.ingestedAtMs === null ? null : new Date(f.ingestedAtMs).toISOString(),
  };
}

const ANALYTICS_INTERFACES: ReadonlySet<string> = new Set(['rpc', 'rest', 'sql', 'graphql', 'mcp']);

/** Whether an answer states freshness: an authenticated request of an analytics interface. */
const carriesFreshness = (req: FastifyRequest): boolean => req.apiKey !== null && ANALYTICS_INTERFACES.has(policyOf(req).interface);

/** The visible protocols: from the registry's cache when it is fresh (`now`, synchronous), else read. */
export interface VisibleProtocols {
  now(): readonly string[] | undefined;
  read(): Promise<string[]>;
}

/**
 * The freshness headers on every answer to an authenticated request of an analytics
 * interface (JSON-RPC, REST, SQL, GraphQL, MCP), errors included: a step of the one root
 * onSend pass (api/services/answers/answer-edge.ts), so routes other modules register later are
 * covered without touching them. Answers without a key (401, the API description) say
 * nothing about the data. Streams set them before hijacking (they skip onSend): see
 * setFreshnessHeaders. Synchronous while the registry's cache is fresh (every answer but
 * about one a second): no promise per answer.
 */
export function freshnessStep(freshness: FreshnessWatermark, visible: VisibleProtocols): EdgeStep {
  return (req, reply, payload) => {
    if (!carriesFreshness(req)) return payload;
    const names = visible.now();
    if (names === undefined) return setFreshnessHeaders(req, reply, freshness, () => visible.read()).then(() => payload);
    for (const [name, value] of freshness.headers(names)) reply.header(name, value);
    return payload;
  };
}

export async function setFreshnessHeaders(
  req: FastifyRequest,
  reply: FastifyReply,
  freshness: FreshnessWatermark,
  visible: () => Promise<string[]>,
): Promise<void> {
  if (!carriesFreshness(req)) return;
  // The registry is read through its one-second cache, which every analytics answer warms.
  let names: string[] | undefined;
  try {
    names = await visible();
  } catch {
    return; // the answer itself will say what failed; no figures rather than wrong ones
  }
  for (const [name, value] of freshness.headers(names)) reply.header(name, value);
}
