// The shape of the configuration (core/config/load-config.ts loads it): one section per part of the
// service, each documented with the variable that sets it.
import type { Plan, X402PriceTable } from '../plans.ts';

/** LOG_FORMAT: json lines, pretty lines for a person, or auto (pretty on a terminal). */
export type LogFormat = 'auto' | 'json' | 'pretty';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  port: number;
  host: string;
  clickhouse: {
    url: string | undefined;
    user: string;
    password: string;
    database: string;
    /**
     * Cluster mode (CLICKHOUSE_CLUSTER: a cluster of the servers' remote_servers): migrations
     * create replicated local tables and Distributed tables over them on every node
     * (docs/cluster.md). Unset: one server, or embedded.
     */
    cluster: string | undefined;
  };
  dataDir: string;
  demoRows: number;
  demoSeed: number;
  /**
   * The demo's live trickle (ingest/demo-trickle.ts): records a minute added while the service
   * runs on seeded demo data (DEMO_TRICKLE; default the seeded data's own rate, DEMO_ROWS over
   * DEMO_DAYS; 0 = off), written every intervalMs (DEMO_TRICKLE_INTERVAL_MS, default 5 s).
   */
  demoTrickle: { perMinute: number; intervalMs: number };
  kafka: {
    brokers: string[] | undefined;
    topic: string;
    groupId: string;
    clientId: string;
    /** Where rejected records go, as their original bytes plus reason headers. */
    deadLetterTopic: string;
    /** Partitions of the topics the service creates when they do not exist yet. */
    partitions: number;
    /** A new consumer group starts at the earliest offset (no record is skipped). */
    fromBeginning: boolean;
    /** Fetch size per partition: bounds a batch (one pipeline insert) and memory held. */
    maxBytesPerPartition: number;
    /**
     * Partition batches handled at once: while one batch's insert runs in the engine, the
     * others are parsed and validated (inserts themselves still go one at a time).
     */
    concurrentPartitions: number;
    /** Pause/retry delay after a failed warehouse insert, doubled up to 30 s. */
    retryBackoffMs: number;
    /** How long the group waits for a silent member (e.g. a killed process) before reassigning. */
    sessionTimeoutMs: number;
    /** KAFKA_BACKFILL_TOPIC: a topic replayed from its beginning in the pipeline's backfill lane
     *  (its own group, `<group>-backfill`), beside the live topic; unset = none. */
    backfillTopic: string | undefined;
  };
  redisUrl: string | undefined;
  adminToken: string;
  adminTokenGenerated: boolean;
  logLevel: LogLevel;
  /** LOG_FORMAT (default auto: pretty lines on a terminal, JSON lines when piped). */
  logFormat: LogFormat;
  ingest: {
    maxBodyBytes: number;
    maxRecordBytes: number;
    batchRows: number;
    /** Where NDJSON bodies' and Kafka batches' records are checked (INGEST_CHECKS): in the engine as SQL (migration 121) or in JavaScript.
     *  'engine' only with the embedded engine (its lines are staged as a file the engine reads); a server uses 'javascript'. */
    checks: 'engine' | 'javascript';
    /** With checks 'engine', the fewest records of a call checked there (INGEST_ENGINE_MIN_RECORDS); fewer go through JavaScript. */
    engineMinRecords: number;
    /** Worker threads that parse and check records beside the engine's insert (INGEST_PARSE_WORKERS; 0 = on the main thread). */
    parseWorkers: number;
    /** Names this process in the ingest journal (INGEST_WRITER_ID; default: embedded, or the host name with a server). */
    writerId: string;
    /** Port of GET /metrics in the standalone ingest process (INGEST_METRICS_PORT; 0 = none). */
    metricsPort: number;
  };
  /** Engine time limit of every read the analytics layer builds (JSON-RPC, REST): ANALYTICS_TIMEOUT_SECONDS. */
  analyticsTimeoutSeconds: number;
  /** Limits of the SQL query interface (SPEC: 30 s time-out; tests lower it). */
  sql: {
    timeoutSeconds: number;
    maxMemoryBytes: number;
    /**
     * Engine sessions that run client SQL, apart from the serving session: client queries
     * run at most this many at a time in total (SQL_SESSIONS; default: cores - 1, at least 2).
     */
    sessions: number;
    /** Threads one client query may use (SQL_MAX_THREADS; default 1, so serving keeps a core). */
    maxThreads: number;
    /** Client queries of one key that may wait for a session while one of its own runs (SQL_QUEUE_PER_KEY). */
    queuePerKey: number;
    /** Client queries that may wait for a session in total (SQL_QUEUE_TOTAL); past it: 429. */
    queueTotal: number;
    /** A dedicated read-only ClickHouse user for client SQL (server mode; deploy/clickhouse/sql-sandbox-user.sql). */
    user: string | undefined;
    password: string;
  };
  access: {
    /** Bearer token for GET /metrics; unset = the admin token is the only one accepted. */
    metricsToken: string | undefined;
    /** How long a key lookup is trusted; bounds how late a revocation is seen (< 1 s). */
    keyCacheTtlMs: number;
    /** Requests per minute per client IP without a valid key (slows key guessing). */
    anonymousPerMinute: number;
    /** How often buffered usage rows are written to the warehouse. */
    usageFlushMs: number;
  };
  http: {
    /**
     * Longest time to receive a whole request, headers and body (REQUEST_TIMEOUT_MS); past
     * it the connection is answered 408 and closed. Responses are not limited by it.
     */
    requestTimeoutMs: number;
    /**
     * A connection with no bytes moving either way for this long is closed
     * (CONNECTION_TIMEOUT_MS; 0 = never): a client that stops reading its answer cannot
     * hold the socket and the answer's memory for good. Longer than the SQL time-out, the
     * longest an answer can legitimately be silent while the engine works.
     */
    connectionTimeoutMs: number;
    /**
     * Origins whose pages may call the API doors from a browser (CORS_ORIGINS): '*' any
     * (the default: keys travel in a header or the query, never in a cookie), a list of
     * exact origins, or an empty list (CORS_ORIGINS=none) for no cross-origin access.
     * The dashboard (cookies) is same-origin whatever this says (docs/browser-clients.md).
     */
    corsOrigins: '*' | readonly string[];
  };
  /** Dashboard accounts and sessions (docs/dashboard.md). */
  dashboard: {
    /** open: anyone may sign up; invite: only through an operator's invitation (DASHBOARD_SIGNUP). */
    signup: 'open' | 'invite';
    /** Lifetime of a session from sign-in (SESSION_TTL_HOURS); sign-out ends it earlier. */
    sessionTtlMs: number;
    /** Mark the session cookie Secure (SESSION_COOKIE_SECURE): set it when clients reach the
     *  service over TLS (a proxy terminating TLS included); the cookie is also Secure on a
     *  request that arrived over TLS directly. */
    cookieSecure: boolean;
    /** Failed sign-ins one account may take per 15-minute window (SIGNIN_FAILURES_PER_ACCOUNT). */
    signinFailuresPerAccount: number;
    /** Sign-in and sign-up attempts one client address may make per 15-minute window (SIGNIN_ATTEMPTS_PER_ADDRESS). */
    signinAttemptsPerAddress: number;
  };
  health: {
    /** /health fails when the newest ingested record is older than this; unset = never. */
    maxIngestAgeSeconds: number | undefined;
  };
  /** Longest wait for in-flight requests and the usage flush at shutdown. */
  shutdownTimeoutMs: number;
  /** The event loop stuck this long ends the process (PROCESS_STALL_EXIT_MS; 0 = never): core/process-guard.ts. */
  stallExitMs: number;
  /**
   * How often the API re-reads the freshness watermark (FRESHNESS_REFRESH_MS): writes by
   * this process's pipeline are seen at once, writes by another process (npm run ingest)
   * within this long. One read of a table of one row per protocol.
   */
  freshnessRefreshMs: number;
  /** How long events of /graphql/stream are kept for clients that reconnect with Last-Event-ID (docs/graphql-subscriptions.md). */
  streamReplayWindowSeconds: number;
  /** Dataset export jobs (docs/exports.md). */
  exports: ExportConfig;
  /** Keyless calls paid per call over HTTP 402 (docs/x402.md). */
  x402: X402Config;
}

/** The x402 plan's settings (core/config/x402-section.ts, docs/x402.md "Operator settings"). */
export interface X402Config {
  /** X402_ENABLED: a keyless request to a keyed door is answered 402 with a price instead of 401. */
  enabled: boolean;
  /** X402_NETWORK as a CAIP-2 id (solana:…). */
  network: string;
  /** X402_PAY_TO: the wallet paid. */
  payTo: string;
  /** X402_ASSET: the SPL token mint (USDC of the network by default). */
  asset: string;
  /** X402_FACILITATOR_URL (remote), or X402_FACILITATOR_SECRET_KEY and X402_SOLANA_RPC_URL (in-process, our own fee payer). */
  facilitator: { kind: 'remote'; url: string } | { kind: 'local'; secretKey: Uint8Array; rpcUrl: string | undefined };
  /** X402_PRICE_PER_MILLION_UNITS, X402_PRICE_FLOOR (atomic units of the asset). */
  prices: X402PriceTable;
  /** X402_VALIDITY_SECONDS: how long requirements stay payable (maxTimeoutSeconds). */
  validitySeconds: number;
  /** X402_REQUIREMENTS_PER_MINUTE: 402 answers and payment attempts per client address. */
  requirementsPerMinute: number;
}

type PlanValues<T> = Record<Plan, T>;

/** Disk quotas of export files (numbers in core/plans.ts "Export quotas"; tests lower them). */
export interface ExportQuotas {
  /** Bytes one job's files may hold, per plan. */
  jobBytes: PlanValues<number>;
  /** Bytes one key's unexpired files may hold together, per plan. */
  keyBytes: PlanValues<number>;
  /** Share (0-1) of diskBudgetBytes the files of all keys of a plan may hold together. */
  planShare: PlanValues<number>;
}

export interface ExportConfig {
  /** Where jobs (one JSON record each) and their files live (EXPORT_DIR; default DATA_DIR/../exports). */
  dir: string;
  /** How long a finished job's files stay downloadable (EXPORT_RETENTION_HOURS); then EXPIRED, files deleted. */
  retentionHours: number;
  /** Bytes all export files together may hold (EXPORT_DISK_BUDGET_BYTES); a job that would pass it FAILS. */
  diskBudgetBytes: number;
  /** Bytes of the export disk left free for ingest (EXPORT_INGEST_RESERVE_BYTES): files stay below free space minus this. */
  ingestReserveBytes: number;
  quotas: ExportQuotas;
  /** Most rows one file holds, about (EXPORT_FILE_MAX_ROWS): a job writes one file per split per chunk of this size. */
  fileMaxRows: number;
  /** Rows one job may write, per plan (EXPORT_MAX_ROWS_FREE, _X402, _ENTERPRISE). */
  maxRows: PlanValues<number>;
  /** Jobs QUEUED or RUNNING at once per key, per plan (EXPORT_MAX_JOBS_FREE, _X402, _ENTERPRISE); past it: 429. */
  maxJobs: PlanValues<number>;
  /** Jobs the service runs at once, each on an engine session of its own (EXPORT_WORKERS). */
  workers: number;
  /** Engine threads one export statement may use (EXPORT_MAX_THREADS; default 1, so serving keeps a core). */
  maxThreads: number;
  /** Engine time limit of one export statement (a chunk, a SQL export's count or write), seconds
   *  (EXPORT_STATEMENT_TIMEOUT_SECONDS; default and most: SQL_TIMEOUT_SECONDS, the SPEC's limit per statement). */
  statementTimeoutSeconds: number;
  /** Lifetime of a signed download link, seconds (EXPORT_LINK_TTL_SECONDS); re-minted on every status read. */
  linkTtlSeconds: number;
}

/** Settings of the operator CLI (npm run keys), a client of a running service. */
export interface ClientConfig {
  url: string;
  adminToken: string | undefined;
  /** A client's API key (npm run export): --key or TXA_API_KEY. */
  apiKey: string | undefined;
}
