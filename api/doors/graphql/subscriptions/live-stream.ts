// One open stream of /graphql/stream (stream-route.ts): its events written as the
// graphql-sse protocol's `next` events, heartbeats, back-pressure and closing.
import type { ServerResponse } from 'node:http';
import type { ExecutionResult, GraphQLFormattedError } from 'graphql';
import { AppError, Errors } from '../../../../core/errors.ts';
import { STREAM_REPLAY_BYTES_PER_UNIT, STREAM_REPLAY_EVENTS_PER_UNIT } from '../../../../core/limits/streams.ts';
import type { Logger } from '../../../../core/logger.ts';
import type { ReplayMeter } from './replay-meter.ts';
/** One error of a stream's events, as the one formatError (api/doors/graphql/errors.ts) writes it. */
export type ErrorJson = GraphQLFormattedError;

export const sseEvent = (event: 'next' | 'complete' | 'gap', data?: unknown, id?: string): string =>
  // `data:` even when empty: EventSource drops an event without a data field. `id:` is what
  // a reconnecting client sends back as Last-Event-ID (event-log.ts).
  `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata:${data === undefined ? '' : ` ${JSON.stringify(data)}`}\n\n`;

export const HEARTBEAT = ':\n\n';

/** What a stream needs of the route that opened it. */
export interface StreamHost {
  readonly limits: { heartbeatMs: number; closeGraceMs: number };
  readonly logger: Logger;
  /** An execution result as the event's payload (extensions.freshness added, and extensions.eventId when it has an id). */
  withExtensions(result: ExecutionResult, eventId?: string): Promise<Record<string, unknown>>;
}

/** What a stream sends: its subscription's results, with what the subscription knows of each. */
export interface StreamSource {
  readonly events: AsyncIterator<ExecutionResult>;
  /** The id of the event the iterator last gave (its SSE `id:`). */
  eventId(): string | undefined;
  /** Whether that event was replayed (a reconnect's), which the key pays for. */
  replayed(): boolean;
  readonly meter: ReplayMeter;
}

/** One open stream: its events, heartbeat and closing. */
export class LiveStream {
  private closed = false;
  private heartbeat: NodeJS.Timeout | undefined;
  private grace: NodeJS.Timeout | undefined;
  /** Ends a wait for 'drain' (set only while the pump waits for one). */
  private wake: (() => void) | undefined;

  constructor(
    readonly keyId: string,
    readonly secret: string,
    private readonly raw: ServerResponse,
    private readonly source: StreamSource,
    private readonly streams: StreamHost,
    private readonly onGone: () => void,
    /** The id of the last event the client has: its Last-Event-ID, then each event's as it is sent. */
    private lastSentId?: string,
  ) {}

  /** `first`: an event written before any other (a reconnect's `gap`). */
  start(first?: string): void {
    const { limits } = this.streams;
    // The socket's close ends everything, whoever closed it.
    this.raw.once('close', () => {
      this.finish();
      this.onGone();
    });
    // Some clients (Firefox, Safari) want a first byte before they report the stream open.
    this.raw.write(HEARTBEAT);
    if (first !== undefined) this.raw.write(first);
    this.heartbeat = setInterval(() => {
      // Behind a full socket a heartbeat is pointless and would only add to the backlog.
      if (!this.raw.writableNeedDrain) this.raw.write(HEARTBEAT);
    }, limits.heartbeatMs);
    this.heartbeat.unref();
    void this.pump();
  }

  /** Ends the stream with `errors` in a last `next` event, then `complete`; a client that
   *  does not read them is disconnected after the grace period. */
  close(errors?: ErrorJson[]): void {
    if (this.closed) return;
    if (errors !== undefined && this.raw.writable) this.raw.write(sseEvent('next', { errors }));
    if (this.raw.writable) this.raw.end(sseEvent('complete'));
    this.finish();
    this.grace = setTimeout(() => this.raw.destroy(), this.streams.limits.closeGraceMs);
    this.grace.unref();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    this.wake?.();
    // Leaves the hub at once; the feed's end settles a pending next() (done), which ends the pump.
    void this.source.events.return?.().catch(() => undefined);
  }

  private async pump(): Promise<void> {
    try {
      for (;;) {
        // Not raced against a promise of the close: each race adds a reaction to that promise
        // holding its result (the event) until the stream closes, so an open stream kept
        // every event it sent. finish() ends the iterator instead.
        const r = await this.source.events.next();
        if (this.closed) return;
        if (r.done) {
          this.close();
          return;
        }
        const id = this.source.eventId();
        const replayed = this.source.replayed();
        // The id in the payload too: graphql-sse's client drops `id:` lines (stream-route.ts).
        const text = sseEvent('next', await this.streams.withExtensions(r.value, id), id);
        if (replayed && !(await this.admitReplayed(Buffer.byteLength(text)))) return;
        // Closed while the event was prepared or charged: the response may have ended.
        if (this.closed) return;
        this.raw.write(text);
        if (id !== undefined) this.lastSentId = id;
        if (this.raw.writableNeedDrain) await this.drained();
      }
    } catch (err) {
      this.streams.logger.error({ err }, 'live stream failed');
      this.close([{ message: 'Internal error', extensions: { code: Errors.internal.graphql } }]);
    }
  }

  /** Charge a replayed event to the key before it is sent; false when refused: the stream is
   *  then closed with the reason (a spent rate limit can be waited out and resumed from the
   *  last event sent). */
  private async admitReplayed(bytes: number): Promise<boolean> {
    try {
      await this.source.meter.admit(bytes);
      return true;
    } catch (err) {
      if (this.closed) return false;
      if (!(err instanceof AppError)) throw err;
      const message =
        err.kind !== Errors.rateLimited
          ? err.message
          : `the replay stopped: ${err.message}. A replay costs one request per ${STREAM_REPLAY_EVENTS_PER_UNIT} events (or ${STREAM_REPLAY_BYTES_PER_UNIT / 1024} KiB) sent` +
            (this.lastSentId === undefined ? '' : `; reconnect then with Last-Event-ID: ${this.lastSentId} to go on from the last event sent`);
      this.close([{ message, extensions: { code: err.kind.graphql } }]);
      return false;
    }
  }

  /** Resolves on 'drain' or when the stream finishes, its listener then removed: nothing outlives the wait. */
  private drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        this.raw.off('drain', done);
        this.wake = undefined;
        resolve();
      };
      this.wake = done;
      this.raw.once('drain', done);
    });
  }
}
