// Resumable live streams (issue 26): every event of /graphql/stream gets an id that orders it,
// and the events of the last STREAM_REPLAY_WINDOW_SECONDS (at most STREAM_REPLAY_MAX_EVENTS)
// are kept here, so a client reconnecting with Last-Event-ID is sent exactly what it missed.
//
// An id is `<slot>-<seq>`: `slot` is the newest slot the stream had seen when the event was
// made (a high-water mark, so it never goes back), `seq` a sequence that starts at this
// process's start in ms times STREAM_EVENT_SEQ_PER_MS, so ids of a later process sort after
// an earlier one's and an id of a process whose log is gone is recognised as such. Ids order
// by `seq` (the slot only ever grows with it).
import { AppError, Errors } from '../../../../core/errors.ts';
import { STREAM_EVENT_ID_MAX_CHARS, STREAM_EVENT_SEQ_PER_MS, STREAM_REPLAY_COMPACT_AFTER } from '../../../../core/limits/streams.ts';
import type { BucketFigures } from '../../../analytics/presets/activity-buckets.ts';

export interface LoggedEvent {
  id: string;
  seq: number;
  /** When it was made (epoch ms): the window is counted from here. */
  at: number;
  figures: BucketFigures;
}

/** What a client that came back too late is told, before the live stream. */
export interface Gap {
  /** The id it came back with. */
  lastEventId: string;
  /** Why the events after it cannot be sent. */
  reason: 'window' | 'restart' | 'unknown';
  /** The events lost are those after lastEventId up to and including this id (null: not known, the log was not this process's). */
  lostThroughId: string | null;
  /** Slots the lost events cover: after the client's last, up to this one (null when not known). */
  lostThroughSlot: number | null;
  /** The oldest event still kept, or null when none is. */
  oldestAvailableId: string | null;
  /** The live stream goes on from after this id: reconnect from it, not from lastEventId. */
  resumeAfterId: string;
  message: string;
}

const ID_SHAPE = /^(\d{1,20})-(\d{1,16})$/;

/** The position of an event id; a 400 for anything else (checked before a stream opens). */
export function parseEventId(id: string): { slot: number; seq: number } {
  const m = id.length <= STREAM_EVENT_ID_MAX_CHARS ? ID_SHAPE.exec(id) : null;
  const seq = m === null ? NaN : Number(m[2]);
  if (m === null || !Number.isSafeInteger(seq)) {
    throw new AppError(
      Errors.invalidParams,
      'Last-Event-ID is not an event id of this stream: send the id of the last event received (<slot>-<sequence>), or none',
      { field: 'Last-Event-ID' },
    );
  }
  return { slot: Number(m[1]), seq };
}

export class EventLog {
  private events: LoggedEvent[] = [];
  /** Index of the oldest kept event in `events` (the array is compacted now and then). */
  private head = 0;
  private nextSeq: number;
  private readonly firstSeq: number;
  /** The newest event dropped (by age or count); before anything is, the position before the first. */
  private evictedThrough: { seq: number; id: string | null; slot: number | null };
  private slotMark = 0;

  constructor(
    private readonly windowMs: number,
    private readonly maxEvents: number,
    private readonly now: () => number = Date.now,
  ) {
    this.firstSeq = this.nextSeq = now() * STREAM_EVENT_SEQ_PER_MS;
    this.evictedThrough = { seq: this.firstSeq - 1, id: null, slot: null };
  }

  get size(): number {
    return this.events.length - this.head;
  }

  /** Give each figure of one read its id, in order, and keep them. */
  append(figures: readonly (BucketFigures & { maxSlot?: number })[]): LoggedEvent[] {
    const at = this.now();
    const out: LoggedEvent[] = [];
    for (const f of figures) {
      this.slotMark = Math.max(this.slotMark, f.maxSlot ?? 0);
      const seq = this.nextSeq++;
      const e: LoggedEvent = { id: `${this.slotMark}-${seq}`, seq, at, figures: f };
      this.events.push(e);
      out.push(e);
    }
    this.evict(at);
    return out;
  }

  /** The id the live stream goes on after: the newest made so far (a made-up one before any). */
  headId(): string {
    const last = this.events.at(-1);
    return last?.id ?? `${this.slotMark}-${this.nextSeq - 1}`;
  }

  /**
   * The events after `lastEventId` still kept, oldest first, or the gap when some of them
   * are not: too old for the window or the bound, of a process whose log is gone, or an id
   * this process never made.
   */
  since(lastEventId: string): { events: LoggedEvent[]; gap?: undefined } | { events: []; gap: Gap } {
    const { slot, seq } = parseEventId(lastEventId);
    this.evict(this.now());
    const kept = this.events.slice(this.head);
    const gap = (reason: Gap['reason'], message: string): { events: []; gap: Gap } => ({
      events: [],
      gap: {
        lastEventId,
        reason,
        lostThroughId: reason === 'window' ? this.evictedThrough.id : null,
        lostThroughSlot: reason === 'window' ? this.evictedThrough.slot : null,
        oldestAvailableId: kept[0]?.id ?? null,
        resumeAfterId: this.headId(),
        message,
      },
    });
    if (seq >= this.nextSeq)
      return gap(
        'unknown',
        "this event id was not made by this server (another replica's, or not an id it sent): what came after it cannot be replayed; the live stream follows",
      );
    if (seq < this.firstSeq - 1)
      return gap('restart', 'the service restarted since this event: the events between it and the restart are not kept; the live stream follows');
    if (seq < this.evictedThrough.seq) {
      return gap(
        'window',
        `events after slot ${slot} up to slot ${this.evictedThrough.slot ?? slot} are past the replay window (or its bound) and are lost; the live stream follows`,
      );
    }
    // Kept events are in seq order: find the first after the client's.
    let lo = 0;
    let hi = kept.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (kept[mid]!.seq <= seq) lo = mid + 1;
      else hi = mid;
    }
    return { events: kept.slice(lo) };
  }

  private evict(now: number): void {
    const oldest = now - this.windowMs;
    while (this.head < this.events.length && (this.events[this.head]!.at < oldest || this.events.length - this.head > this.maxEvents)) {
      const e = this.events[this.head]!;
      this.evictedThrough = { seq: e.seq, id: e.id, slot: Number(e.id.slice(0, e.id.indexOf('-'))) };
      this.head++;
    }
    // Compact once the dropped part is the larger one: amortised O(1) per event.
    if (this.head > STREAM_REPLAY_COMPACT_AFTER && this.head * 2 > this.events.length) {
      this.events = this.events.slice(this.head);
      this.head = 0;
    }
  }
}
