// Every environment variable the service reads, in one schema: its type, its default beside
// it, its bounds and what it sets (as Langfuse's env schema does with zod; TypeBox here, the
// library the routes already use). The variables' types are derived from it (EnvVars), so a
// section cannot read a variable the schema does not declare, nor read it as the wrong type.
// Order matters: problems are reported in it. A default that depends on another variable or
// on the machine is left out of the schema (the variable is optional) and computed by its
// section, which says how in `description`.
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { EXPORT_INGEST_RESERVE_BYTES } from '../limits/exports.ts';
import { DEMO_TRICKLE_MAX_PER_MINUTE } from '../limits/ingest.ts';
import { PROCESS_STALL_EXIT_MS } from '../limits/process.ts';
import { SQL_TIMEOUT_SECONDS } from '../limits/sql.ts';
import { STREAM_REPLAY_WINDOW_SECONDS } from '../limits/streams.ts';
import { PLAN_EXPORT_MAX_JOBS, PLAN_EXPORT_MAX_ROWS, X402_PRICES } from '../plans.ts';

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;
const SECOND_MS = 1000;
const HOUR_MS = 3600 * SECOND_MS;
const DAY_SECONDS = 86_400;
/** The largest integer a variable may hold (2^53: exact in a JavaScript number). */
const MAX_SAFE = 2 ** 53;
const INT31 = 2 ** 31 - 1;
const PORT_MAX = 65_535;

// Bounds the sections check beyond one variable's type (service-sections.ts, x402-section.ts).
/** Bytes of the generated operator token (base64url: 32 characters). */
export const ADMIN_TOKEN_BYTES = 24;
/** The least a token may be (METRICS_TOKEN; ADMIN_TOKEN's schema says the same). */
export const TOKEN_MIN_CHARS = 16;
/** Below a second a busy moment (a large answer serialised) would count as stuck. */
export const STALL_EXIT_MIN_MS = 1000;
/** The idle-connection time-out's default floor. */
export const CONNECTION_TIMEOUT_FLOOR_MS = 120_000;
/** Characters of a bad CORS origin quoted in its problem. */
export const QUOTED_CHARS = 100;
/** Bytes of a Solana secret key (solana-keygen's 64 numbers). */
export const SECRET_KEY_BYTES = 64;
/** Characters of a bad address quoted in its problem. */
export const QUOTED_ADDRESS_CHARS = 64;

/** An integer between `minimum` and `maximum`, `def` when unset. */
const int = (def: number, minimum: number, maximum: number, description: string) => Type.Integer({ default: def, minimum, maximum, description });
/** An integer without a fixed default: its section computes one (`description` says how). */
const intOr = (minimum: number, maximum: number, description: string) => Type.Optional(Type.Integer({ minimum, maximum, description }));
const bool = (def: boolean, description: string) => Type.Boolean({ default: def, description });
/** Trimmed text; unset when absent or blank. */
const text = (description: string, options: { minLength?: number } = {}) => Type.Optional(Type.String({ ...options, description }));
const textOr = (def: string, description: string) => Type.String({ default: def, description });
/** Exactly as given (a password may hold spaces at either end). */
const raw = (description: string) => Type.String({ default: '', raw: true, description });
const url = (protocols: readonly string[], description: string) => Type.Optional(Type.String({ format: 'url', protocols, description }));
/** One of `values`, compared in lower case when `lowerCase`. */
const oneOf = <T extends string>(values: readonly T[], def: T, description: string, lowerCase = false) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    { default: def, lowerCase, description },
  );
/** A Kafka topic name, by Kafka's own rule. */
const TOPIC = { pattern: '^[A-Za-z0-9._-]{1,249}$', patternWords: '1-249 characters of letters, digits, ".", "_" or "-"' };

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;

export const ENV_SCHEMA = Type.Object({
  // Listen address.
  PORT: int(8080, 0, PORT_MAX, 'the API port'),
  HOST: textOr('127.0.0.1', 'the API address'),
  // The engine: embedded (no CLICKHOUSE_URL) or a server, a cluster.
  CLICKHOUSE_URL: url(['http:', 'https:'], 'a ClickHouse server; unset: the embedded engine'),
  CLICKHOUSE_CLUSTER: text("cluster mode: a cluster of the servers' remote_servers (needs CLICKHOUSE_URL); unset: one server, or embedded"),
  CLICKHOUSE_DATABASE: textOr('default', 'the database of the tables'),
  DATA_DIR: textOr('./data', "the embedded engine's data directory"),
  DEMO_ROWS: int(2_000_000, 0, 10_000_000_000, 'demo records seeded into an empty store'),
  DEMO_SEED: int(42, 0, INT31, "the demo generator's seed"),
  DEMO_TRICKLE: intOr(
    0,
    DEMO_TRICKLE_MAX_PER_MINUTE,
    "demo records a minute added while running; default the seeded data's own rate (DEMO_ROWS over DEMO_DAYS); 0 = off",
  ),
  DEMO_TRICKLE_INTERVAL_MS: int(5 * SECOND_MS, 10, HOUR_MS, 'how often the trickle writes'),
  CLICKHOUSE_USER: textOr('default', 'the server user'),
  CLICKHOUSE_PASSWORD: raw("the server user's password"),
  // Kafka.
  KAFKA_BROKERS: Type.Optional(
    Type.Array(Type.String({ pattern: '^[A-Za-z0-9.\\-_[\\]:]+:\\d{1,5}$', patternWords: 'host:port' }), {
      commaList: 'broker',
      description: 'host:port, comma-separated; unset: no Kafka',
    }),
  ),
  KAFKA_TOPIC: Type.String({ ...TOPIC, default: 'solana.instructions', description: 'the topic of records' }),
  KAFKA_DLQ_TOPIC: Type.Optional(Type.String({ ...TOPIC, description: 'the dead-letter topic; default KAFKA_TOPIC + ".dlq"' })),
  KAFKA_BACKFILL_TOPIC: Type.Optional(Type.String({ ...TOPIC, description: 'a topic replayed from its beginning in the backfill lane; unset: none' })),
  KAFKA_GROUP_ID: textOr('tx-analytics-ingest', 'the consumer group'),
  KAFKA_CLIENT_ID: textOr('tx-analytics', 'the client id'),
  KAFKA_TOPIC_PARTITIONS: int(4, 1, 10_000, 'partitions of topics the service creates'),
  KAFKA_FROM_BEGINNING: bool(true, 'a new group starts at the earliest offset'),
  KAFKA_MAX_BYTES_PER_PARTITION: int(4 * MiB, 64 * KiB, 256 * MiB, 'fetch size per partition'),
  KAFKA_CONCURRENT_PARTITIONS: int(4, 1, 64, 'partition batches handled at once'),
  KAFKA_RETRY_BACKOFF_MS: int(500, 10, 60 * SECOND_MS, 'pause after a failed insert, doubled'),
  // The broker accepts 6-300 s by default (group.min/max.session.timeout.ms).
  KAFKA_SESSION_TIMEOUT_MS: int(30 * SECOND_MS, 6 * SECOND_MS, 300 * SECOND_MS, 'how long the group waits for a silent member'),
  REDIS_URL: url(['redis:', 'rediss:'], 'shared rate limits and revocations across API processes; unset: each process alone'),
  // The operator.
  LOG_LEVEL: oneOf(LOG_LEVELS, 'info', "pino's level"),
  LOG_FORMAT: oneOf(LOG_FORMATS, 'auto', 'json lines, pretty lines, or auto (pretty on a terminal)', true),
  ADMIN_TOKEN: text('the operator token; default a random one, printed at start', { minLength: TOKEN_MIN_CHARS }),
  // Ingest.
  INGEST_MAX_BODY_BYTES: int(64 * MiB, KiB, INT31, 'the largest ingest request body'),
  INGEST_MAX_RECORD_BYTES: int(256 * KiB, 256, 64 * MiB, 'the largest record'),
  INGEST_BATCH_ROWS: int(10_000, 1, 1_000_000, 'rows per insert'),
  INGEST_CHECKS: oneOf(
    ['engine', 'javascript'] as const,
    'engine',
    "where NDJSON bodies' and Kafka batches' records are checked: engine (SQL, migration 121; embedded engine only) or javascript",
    true,
  ),
  // Below this many records a call's fixed costs in the engine (a dozen statements) outweigh
  // what its checks save: Kafka-shaped batches measured 0.06-0.4 of the JavaScript path at
  // 50-1,000 records, 0.4-1.4 at 5,000-40,000 (bench/RESULTS.md, issue 40, third session).
  INGEST_ENGINE_MIN_RECORDS: int(
    10_000,
    1,
    INT31,
    "with INGEST_CHECKS=engine, the fewest records of a call (a body's lines, a Kafka batch) checked in the engine; fewer go through JavaScript",
  ),
  INGEST_PARSE_WORKERS: intOr(0, 16, "parse workers; default what is beyond the engine's two cores, at most 2"),
  INGEST_METRICS_PORT: int(9464, 0, PORT_MAX, "the standalone ingest process's /metrics port"),
  INGEST_WRITER_ID: text('the journal\'s writer id; default "embedded", or the host name with a server'),
  // Client SQL and the analytics layer's engine time limit.
  SQL_TIMEOUT_SECONDS: int(SQL_TIMEOUT_SECONDS, 1, 3600, 'the engine time limit of a client query'),
  ANALYTICS_TIMEOUT_SECONDS: int(10, 1, 3600, 'the engine time limit of an analytics read'),
  SQL_MAX_MEMORY_BYTES: int(2 * GiB, 16 * MiB, 2 ** 50, 'memory of a client query'),
  SQL_SESSIONS: intOr(1, 64, 'client SQL sessions; default the cores less one, at least 2'),
  SQL_MAX_THREADS: int(1, 1, 256, 'engine threads of a client query'),
  SQL_QUEUE_PER_KEY: int(2, 0, 100, 'queries a key may queue'),
  SQL_QUEUE_TOTAL: int(8, 0, 10_000, 'queries queued in all'),
  CLICKHOUSE_SQL_USER: text("the sandbox user of client SQL (needs CLICKHOUSE_URL); unset: the service's own user"),
  CLICKHOUSE_SQL_PASSWORD: raw("the sandbox user's password"),
  // Access control.
  METRICS_TOKEN: text('the /metrics bearer token (at least 16 characters); unset: /metrics is not served'),
  METRICS_TOKEN_FILE: text('the /metrics token in a file (a container secret); unset: METRICS_TOKEN'),
  // 1000 ms at most: DESIGN/issue require a revocation to be seen within one second.
  KEY_CACHE_TTL_MS: int(500, 0, SECOND_MS, "how long a key's record is cached"),
  ANONYMOUS_RATE_LIMIT: int(60, 1, 1_000_000, 'keyless requests a minute per address'),
  USAGE_FLUSH_MS: int(5 * SECOND_MS, 100, 300 * SECOND_MS, 'how often usage counts are written'),
  // Lifecycle.
  HEALTH_MAX_INGEST_AGE_SECONDS: intOr(1, 10 ** 9, '/health fails when no record arrived for this long; unset: never'),
  PROCESS_STALL_EXIT_MS: int(PROCESS_STALL_EXIT_MS, 0, HOUR_MS, 'the watchdog: exit when the event loop is stuck this long; 0 = off'),
  SHUTDOWN_TIMEOUT_MS: int(10 * SECOND_MS, 0, 600 * SECOND_MS, 'how long shutdown waits for requests'),
  FRESHNESS_REFRESH_MS: int(2 * SECOND_MS, 100, 600 * SECOND_MS, 'how often the freshness watermark is read'),
  STREAM_REPLAY_WINDOW_SECONDS: int(STREAM_REPLAY_WINDOW_SECONDS, 1, 7 * DAY_SECONDS, 'how far back a reconnecting live stream is replayed'),
  // HTTP. 0 (Node's "no limit") is refused for the request time-out: a body trickled a byte
  // at a time would hold a connection, and a unit of its key's rate limit, for ever.
  REQUEST_TIMEOUT_MS: int(30 * SECOND_MS, 100, HOUR_MS, 'the time to receive a request in full'),
  CONNECTION_TIMEOUT_MS: intOr(0, 24 * HOUR_MS, "an idle connection's time-out; default 120 s, or twice the longest silent answer"),
  CORS_ORIGINS: text('*, none, or a comma-separated list of origins; unset: *'),
  // Export jobs.
  EXPORT_DIR: text('where export jobs and files live; default <DATA_DIR>-exports'),
  EXPORT_RETENTION_HOURS: int(72, 1, 24 * 365, 'how long export files stay'),
  EXPORT_DISK_BUDGET_BYTES: int(20 * GiB, MiB, MAX_SAFE, 'bytes all export files may hold'),
  EXPORT_FILE_MAX_ROWS: int(1_000_000, 1, 1_000_000_000, 'rows per export file'),
  EXPORT_INGEST_RESERVE_BYTES: int(EXPORT_INGEST_RESERVE_BYTES, 0, MAX_SAFE, 'free bytes exports leave for ingest'),
  EXPORT_MAX_ROWS_FREE: int(PLAN_EXPORT_MAX_ROWS.free, 0, 10 ** 12, 'rows of a free-plan export'),
  EXPORT_MAX_ROWS_X402: int(PLAN_EXPORT_MAX_ROWS.x402, 0, 10 ** 12, 'rows of an x402 export'),
  EXPORT_MAX_ROWS_ENTERPRISE: int(PLAN_EXPORT_MAX_ROWS.enterprise, 0, 10 ** 12, 'rows of an enterprise export'),
  EXPORT_MAX_JOBS_FREE: int(PLAN_EXPORT_MAX_JOBS.free, 0, 1000, 'export jobs of a free key at once'),
  EXPORT_MAX_JOBS_X402: int(PLAN_EXPORT_MAX_JOBS.x402, 0, 1000, 'export jobs of an x402 payer at once'),
  EXPORT_MAX_JOBS_ENTERPRISE: int(PLAN_EXPORT_MAX_JOBS.enterprise, 0, 1000, 'export jobs of an enterprise key at once'),
  // Two: one stays free for paid plans (plans.ts EXPORT_WORKERS_RESERVED_FOR_PAID).
  EXPORT_WORKERS: int(2, 1, 16, 'export workers'),
  EXPORT_MAX_THREADS: int(1, 1, 256, 'engine threads of an export statement'),
  // A job's statements obey the same time-out as a client query: lowering is allowed, raising is not.
  EXPORT_STATEMENT_TIMEOUT_SECONDS: intOr(1, 3600, 'the time-out of an export statement; default and most: SQL_TIMEOUT_SECONDS'),
  EXPORT_LINK_TTL_SECONDS: int(3600, 10, 7 * DAY_SECONDS, 'how long a download link is valid'),
  // The dashboard.
  DASHBOARD_SIGNUP: oneOf(['open', 'invite'] as const, 'open', 'open: anyone may sign up; invite: only through operator invitations', true),
  SESSION_TTL_HOURS: int(12, 1, 24 * 30, "a dashboard session's lifetime"),
  SESSION_COOKIE_SECURE: bool(false, 'mark the session cookie Secure (behind TLS)'),
  SIGNIN_FAILURES_PER_ACCOUNT: int(10, 1, 10_000, 'sign-in failures per account per 15 minutes'),
  SIGNIN_ATTEMPTS_PER_ADDRESS: int(30, 1, 1_000_000, 'failed sign-ins and sign-ups per address per 15 minutes'),
  // x402 (docs/x402.md).
  X402_ENABLED: bool(false, 'keyless calls paid per call over HTTP 402'),
  X402_PRICE_PER_MILLION_UNITS: int(X402_PRICES.perMillionUnits, 0, 10 ** 12, 'token units per million request units'),
  X402_PRICE_FLOOR: int(X402_PRICES.floor, 1, 10 ** 12, 'the least a call costs, in token units'),
  X402_VALIDITY_SECONDS: int(X402_PRICES.validitySeconds, 10, 3600, 'how long a payment requirement is valid'),
  X402_REQUIREMENTS_PER_MINUTE: int(X402_PRICES.requirementsPerMinute, 1, 1_000_000, '402 answers a minute per address'),
  X402_NETWORK: textOr('solana-devnet', 'solana, solana-devnet, solana-testnet or a CAIP-2 id'),
  X402_PAY_TO: text('the Solana address paid for every call; unset: refused when X402_ENABLED'),
  X402_ASSET: text('the SPL token mint callers pay in; default USDC of the network'),
  X402_FACILITATOR_URL: url(['http:', 'https:'], 'a remote facilitator; unset: X402_FACILITATOR_SECRET_KEY'),
  X402_FACILITATOR_SECRET_KEY: text('settle in-process with this key (JSON array or base58); unset: X402_FACILITATOR_URL'),
  X402_SOLANA_RPC_URL: url(['http:', 'https:'], "the Solana RPC of an in-process facilitator; unset: the network's public one"),
});

/** The variables, as the service reads them: each declared type, a default where it has one. */
export type EnvVars = Static<typeof ENV_SCHEMA>;

/** The command-line client's variables (npm run keys, npm run export). */
export const CLIENT_ENV_SCHEMA = Type.Object({
  TXA_URL: textOr('http://127.0.0.1:8080', 'the service the CLI talks to'),
  ADMIN_TOKEN: text('the operator token'),
  TXA_API_KEY: text('an API key'),
});
export type ClientEnvVars = Static<typeof CLIENT_ENV_SCHEMA>;

/** A schema of variables, for the reader. */
export type EnvSchema = { properties: Record<string, TSchema> };
