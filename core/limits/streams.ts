// Limits of live GraphQL streams (/graphql/stream; docs/graphql-subscriptions.md) and their replay.
// Open streams per key: PLAN_STREAMS (core/plans.ts, with the other plan figures).

// ---- Live GraphQL streams (/graphql/stream; docs/graphql-subscriptions.md) -------------
// Open streams per key: PLAN_STREAMS (core/plans.ts, with the other plan figures).
/** Events of earlier writes one stream may still have waiting for its client when the next write's arrive; at it the client is too slow and the stream is closed with an error event. (One write's events are always queued whole: a backfill can touch thousands of buckets at once.) */
export const STREAM_MAX_QUEUED_EVENTS = 1000;
/** A comment line this often keeps proxies and the idle-connection time-out from closing a quiet stream. */
export const STREAM_HEARTBEAT_MS = 15_000;
/** How often the keys of open streams are checked again (besides every key-change announcement): revocation closes them within 1 s. */
export const STREAM_KEY_CHECK_MS = 250;
/** After the closing error event, a client that does not read it is disconnected this much later. */
export const STREAM_CLOSE_GRACE_MS = 5000;
/** Largest subscription document (characters). */
export const STREAM_MAX_DOCUMENT_CHARS = 8 * 1024;
/** Most lexical tokens the parser reads of a subscription document before giving up (bounds parse work on hostile text). */
export const STREAM_MAX_TOKENS = 2000;
/** Characters of an unknown operationName quoted back in the error that names it. */
export const STREAM_QUOTED_NAME_MAX_CHARS = 100;
/** Most fields one subscription may select (aliases included): each is sent with every event. */
export const STREAM_MAX_SELECTIONS = 64;
/** Events one stream takes from its queue before it lets the event loop turn (I/O, other streams, /health run between). */
export const STREAM_EVENTS_PER_TURN = 32;
/** Most names in protocolActivity(protocols: [...]). */
export const STREAM_MAX_PROTOCOLS = 100;
/** Live streams: how far back each ingest-journal read looks again, so that a batch committed
 *  late, with an earlier time than one already read, is still found. */
export const STREAM_JOURNAL_LOOKBACK_MS = 5_000;

// ---- Resumable live streams (issue 26: Last-Event-ID on /graphql/stream; live-activity.ts) ----

/** Default replay window of stream events (STREAM_REPLAY_WINDOW_SECONDS): 24 h, as Helius keeps. */
export const STREAM_REPLAY_WINDOW_SECONDS = 86_400;
/** Most events kept for replay, whatever the window (about 300 bytes each in memory, ~60 MB at the bound): past it the oldest go (a reconnect before them gets a gap event). */
export const STREAM_REPLAY_MAX_EVENTS = 200_000;
/** The replay log drops its evicted head in one copy once it holds more than this many
 *  evicted events and they are the larger part: amortised O(1) per event. */
export const STREAM_REPLAY_COMPACT_AFTER = 1024;
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
