// Limits of stream replay: part of core/limits.ts (which re-exports this file), kept apart so that no file
// of limits outgrows the house rule; every number still lives under core/limits.

// ---- Resumable live streams (issue 26: Last-Event-ID on /graphql/stream; live-activity.ts) ----

/** Default replay window of stream events (STREAM_REPLAY_WINDOW_SECONDS): 24 h, as Helius keeps. */
export const STREAM_REPLAY_WINDOW_SECONDS = 86_400;
/** Most events kept for replay, whatever the window (about 300 bytes each in memory, ~60 MB at the bound): past it the oldest go (a reconnect before them gets a gap event). */
export const STREAM_REPLAY_MAX_EVENTS = 200_000;
/** Event ids: a per-process sequence starting at the process start in ms times this, so ids of a later process sort after. */
export const STREAM_EVENT_SEQ_PER_MS = 1000;
/** Longest Last-Event-ID read (two whole numbers and a dash). */
export const STREAM_EVENT_ID_MAX_CHARS = 64;

// ---- The ingest journal as live streams read it (live-activity.ts, delivered-batches.ts) ----

/** A batch this process's pipeline delivered whose journal rows no read has returned yet is
 *  remembered this long (its 'done' row rides on the next write, seconds later at most), so a
 *  later read does not send it again. Batches a read returned are remembered exactly as long
 *  as a read can still return them (STREAM_JOURNAL_LOOKBACK_MS past the newest). */
export const STREAM_JOURNAL_UNSEEN_KEEP_MS = 10 * 60_000;

// ---- What a replay costs, and its pace (replay-meter.ts, replay-pacer.ts; docs/access.md) ----

/** A replay (a reconnect with Last-Event-ID) costs one request of the key's rate limit per this
 *  many events sent (a block, charged before its first event)... */
export const STREAM_REPLAY_EVENTS_PER_UNIT = 100;
/** ...or per this many bytes of them, whichever fills a block first (a selection of many
 *  long aliases makes events of several KiB). */
export const STREAM_REPLAY_BYTES_PER_UNIT = 64 * 1024;
/** Replayed events handed out per turn of the event loop, all streams of the process together
 *  (about 5 ms of work: an event is executed and written in ~0.15 ms), so replays never hold the
 *  loop from other keys' requests however many run at once. */
export const STREAM_REPLAY_EVENTS_PER_TURN = 32;
