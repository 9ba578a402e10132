// The one place that reads process.env. Every problem is collected and reported at once,
// so an operator fixes a bad deployment in one go rather than one restart per mistake.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { availableParallelism, hostname } from 'node:os';
import path from 'node:path';
import { EXPORT_INGEST_RESERVE_BYTES, PROCESS_STALL_EXIT_MS, SQL_TIMEOUT_SECONDS } from './limits.ts';
import { PLAN_EXPORT_DISK_SHARE, PLAN_EXPORT_JOB_BYTES, PLAN_EXPORT_KEY_BYTES, PLAN_EXPORT_MAX_JOBS, PLAN_EXPORT_MAX_ROWS, type Plan } from './plans.ts';

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
  };
  redisUrl: string | undefined;
  adminToken: string;
  adminTokenGenerated: boolean;
  logLevel: LogLevel;
  ingest: {
    maxBodyBytes: number;
    maxRecordBytes: number;
    batchRows: number;
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
  /** Dataset export jobs (docs/exports.md). */
  exports: ExportConfig;
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

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const str = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const int = (name: string, def: number, min: number, max: number): number => {
    const raw = str(name);
    if (raw === undefined) return def;
    if (!/^-?\d+$/.test(raw)) {
      problems.push(`${name} must be an integer, got "${raw}"`);
      return def;
    }
    const n = Number(raw);
    if (n < min || n > max) problems.push(`${name} must be between ${min} and ${max}, got ${n}`);
    return n;
  };
  const url = (name: string, protocols: string[]): string | undefined => {
    const raw = str(name);
    if (raw === undefined) return undefined;
    try {
      const u = new URL(raw);
      if (!protocols.includes(u.protocol)) {
        problems.push(`${name} must use ${protocols.join(' or ')}, got "${u.protocol}"`);
      }
    } catch {
      problems.push(`${name} is not a valid URL: "${raw}"`);
    }
    return raw;
  };

  const port = int('PORT', 8080, 0, 65535);
  const host = str('HOST') ?? '127.0.0.1';
  const chUrl = url('CLICKHOUSE_URL', ['http:', 'https:']);
  const chCluster = str('CLICKHOUSE_CLUSTER');
  if (chCluster !== undefined) {
    if (chUrl === undefined) problems.push('CLICKHOUSE_CLUSTER needs CLICKHOUSE_URL (the embedded engine is one process, not a cluster)');
    // Rendered into DDL (ON CLUSTER name, Distributed('name', ...)): an identifier only.
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(chCluster)) problems.push(`CLICKHOUSE_CLUSTER must be a cluster name of letters, digits and "_", got "${chCluster}"`);
  }
  const chDatabase = str('CLICKHOUSE_DATABASE') ?? 'default';
  if (chCluster !== undefined && !/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(chDatabase)) problems.push(`CLICKHOUSE_DATABASE must be letters, digits and "_" in cluster mode, got "${chDatabase}"`);
  const dataDir = path.resolve(str('DATA_DIR') ?? './data');
  const demoRows = int('DEMO_ROWS', 2_000_000, 0, 10_000_000_000);
  const demoSeed = int('DEMO_SEED', 42, 0, 2 ** 31 - 1);

  const brokersRaw = str('KAFKA_BROKERS');
  let brokers: string[] | undefined;
  if (brokersRaw !== undefined) {
    brokers = brokersRaw.split(',').map((b) => b.trim()).filter(Boolean);
    for (const b of brokers) {
      if (!/^[A-Za-z0-9.\-_[\]:]+:\d{1,5}$/.test(b)) problems.push(`KAFKA_BROKERS entry "${b}" must be host:port`);
    }
    if (brokers.length === 0) problems.push('KAFKA_BROKERS is set but lists no broker');
  }
  const topicName = (name: string, def: string): string => {
    const v = str(name) ?? def;
    // Kafka's own rule for topic names.
    if (!/^[A-Za-z0-9._-]{1,249}$/.test(v)) problems.push(`${name} must be 1-249 characters of letters, digits, ".", "_" or "-", got "${v}"`);
    return v;
  };
  const bool = (name: string, def: boolean): boolean => {
    const raw = str(name)?.toLowerCase();
    if (raw === undefined) return def;
    if (['1', 'true', 'yes'].includes(raw)) return true;
    if (['0', 'false', 'no'].includes(raw)) return false;
    problems.push(`${name} must be true or false, got "${raw}"`);
    return def;
  };
  const kafkaTopic = topicName('KAFKA_TOPIC', 'solana.instructions');
  const kafkaDeadLetterTopic = topicName('KAFKA_DLQ_TOPIC', `${kafkaTopic}.dlq`);
  if (kafkaDeadLetterTopic === kafkaTopic) problems.push('KAFKA_DLQ_TOPIC must differ from KAFKA_TOPIC');
  const kafkaGroupId = str('KAFKA_GROUP_ID') ?? 'tx-analytics-ingest';
  const kafkaClientId = str('KAFKA_CLIENT_ID') ?? 'tx-analytics';
  const kafkaPartitions = int('KAFKA_TOPIC_PARTITIONS', 4, 1, 10_000);
  const kafkaFromBeginning = bool('KAFKA_FROM_BEGINNING', true);
  const kafkaMaxBytesPerPartition = int('KAFKA_MAX_BYTES_PER_PARTITION', 4 * 1024 * 1024, 64 * 1024, 256 * 1024 * 1024);
  const kafkaConcurrentPartitions = int('KAFKA_CONCURRENT_PARTITIONS', 4, 1, 64);
  const kafkaRetryBackoffMs = int('KAFKA_RETRY_BACKOFF_MS', 500, 10, 60_000);
  // The broker accepts 6-300 s by default (group.min/max.session.timeout.ms).
  const kafkaSessionTimeoutMs = int('KAFKA_SESSION_TIMEOUT_MS', 30_000, 6_000, 300_000);

  const redisUrl = url('REDIS_URL', ['redis:', 'rediss:']);

  const logLevelRaw = (str('LOG_LEVEL') ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevelRaw)) {
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevelRaw}"`);
  }

  let adminToken = str('ADMIN_TOKEN');
  const adminTokenGenerated = adminToken === undefined;
  if (adminToken !== undefined && adminToken.length < 16) {
    problems.push('ADMIN_TOKEN must be at least 16 characters');
  }
  adminToken ??= randomBytes(24).toString('base64url');

  const maxBodyBytes = int('INGEST_MAX_BODY_BYTES', 64 * 1024 * 1024, 1024, 2 ** 31 - 1);
  const maxRecordBytes = int('INGEST_MAX_RECORD_BYTES', 256 * 1024, 256, 64 * 1024 * 1024);
  const batchRows = int('INGEST_BATCH_ROWS', 10_000, 1, 1_000_000);
  // Parse workers (ingest/parse-pool.ts): the records' JavaScript runs beside the engine's
  // insert, which itself kept 1.5-2 cores busy on a 2-core machine (bench/RESULTS.md, "Parse
  // workers": 2 workers there gained a median 1.14x, within the load's noise). So the default
  // leaves the engine two cores and gives workers what is beyond them: none on 1-2 cores, one
  // on 3, two from 4 on.
  const parseWorkers = int('INGEST_PARSE_WORKERS', Math.max(0, Math.min(2, availableParallelism() - 2)), 0, 16);
  // Embedded: one process per data directory, so every journal entry is this process's
  // predecessor's. Server: several ingest processes share the tables; each repairs only
  // its own entries, so the id must be stable across restarts (a host or pod name).
  const metricsPort = int('INGEST_METRICS_PORT', 9464, 0, 65535);
  const writerId = str('INGEST_WRITER_ID') ?? (chUrl === undefined ? 'embedded' : hostname());

  const sqlTimeoutSeconds = int('SQL_TIMEOUT_SECONDS', SQL_TIMEOUT_SECONDS, 1, 3600);
  const analyticsTimeoutSeconds = int('ANALYTICS_TIMEOUT_SECONDS', 10, 1, 3600);
  const sqlMaxMemoryBytes = int('SQL_MAX_MEMORY_BYTES', 2 * 1024 ** 3, 16 * 1024 ** 2, 2 ** 50);
  // At least two: one key runs one query at a time, so an abusive key can hold one session, never all.
  const sqlSessions = int('SQL_SESSIONS', Math.max(2, availableParallelism() - 1), 1, 64);
  const sqlMaxThreads = int('SQL_MAX_THREADS', 1, 1, 256);
  const sqlQueuePerKey = int('SQL_QUEUE_PER_KEY', 2, 0, 100);
  const sqlQueueTotal = int('SQL_QUEUE_TOTAL', 8, 0, 10_000);
  const sqlUser = str('CLICKHOUSE_SQL_USER');
  if (sqlUser !== undefined && chUrl === undefined) problems.push('CLICKHOUSE_SQL_USER needs CLICKHOUSE_URL (embedded mode has no users)');
  // METRICS_TOKEN_FILE: the token in a file (a container secret), the same file Prometheus
  // reads with credentials_file (deploy/prometheus/prometheus.yml), so the two cannot drift.
  let metricsToken = str('METRICS_TOKEN');
  const metricsTokenFile = str('METRICS_TOKEN_FILE');
  if (metricsToken !== undefined && metricsTokenFile !== undefined) problems.push('set METRICS_TOKEN or METRICS_TOKEN_FILE, not both');
  else if (metricsTokenFile !== undefined) {
    try {
      metricsToken = readFileSync(metricsTokenFile, 'utf8').trim();
    } catch (err) {
      problems.push(`METRICS_TOKEN_FILE cannot be read: ${(err as Error).message}`);
    }
  }
  if (metricsToken !== undefined && metricsToken.length < 16) problems.push('METRICS_TOKEN must be at least 16 characters');
  // 1000 ms at most: DESIGN/issue require a revocation to be seen within one second.
  const keyCacheTtlMs = int('KEY_CACHE_TTL_MS', 500, 0, 1000);
  const anonymousPerMinute = int('ANONYMOUS_RATE_LIMIT', 60, 1, 1_000_000);
  const usageFlushMs = int('USAGE_FLUSH_MS', 5000, 100, 300_000);
  const maxIngestAgeRaw = str('HEALTH_MAX_INGEST_AGE_SECONDS');
  const maxIngestAgeSeconds = maxIngestAgeRaw === undefined ? undefined : int('HEALTH_MAX_INGEST_AGE_SECONDS', 0, 1, 10 ** 9);
  const shutdownTimeoutMs = int('SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000);
  const stallExitMs = int('PROCESS_STALL_EXIT_MS', PROCESS_STALL_EXIT_MS, 0, 3_600_000);
  // Below a second a busy moment (a large answer serialised) would count as stuck.
  if (stallExitMs !== 0 && stallExitMs < 1000) problems.push(`PROCESS_STALL_EXIT_MS must be 0 (no watchdog) or at least 1000, got ${stallExitMs}`);
  const freshnessRefreshMs = int('FRESHNESS_REFRESH_MS', 2000, 100, 600_000);
  // 0 (Node's "no limit") is refused: a body trickled a byte at a time would hold a
  // connection, and a unit of its key's rate limit, for as long as the client likes.
  const requestTimeoutMs = int('REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000);
  // The longest a legitimate answer keeps a connection silent: a SQL query or an analytics
  // read running to its engine time limit.
  const sqlTimeoutMs = Math.max(sqlTimeoutSeconds, analyticsTimeoutSeconds) * 1000;
  const connectionTimeoutMs = int('CONNECTION_TIMEOUT_MS', Math.max(120_000, 2 * sqlTimeoutMs, 2 * requestTimeoutMs), 0, 86_400_000);
  // A connection silent for less than the longest legitimate silence would cut answers.
  if (connectionTimeoutMs !== 0 && connectionTimeoutMs <= Math.max(sqlTimeoutMs, requestTimeoutMs)) {
    problems.push(`CONNECTION_TIMEOUT_MS must be 0 or more than SQL_TIMEOUT_SECONDS and ANALYTICS_TIMEOUT_SECONDS (${sqlTimeoutMs} ms) and REQUEST_TIMEOUT_MS (${requestTimeoutMs} ms), got ${connectionTimeoutMs}`);
  }

  const exportDir = path.resolve(str('EXPORT_DIR') ?? path.join(dataDir, '..', `${path.basename(dataDir)}-exports`));
  // Not inside the engine's data directory: the engine owns that tree.
  if (exportDir === dataDir || exportDir.startsWith(`${dataDir}${path.sep}`)) problems.push('EXPORT_DIR must not be inside DATA_DIR');
  const exportsConfig: ExportConfig = {
    dir: exportDir,
    retentionHours: int('EXPORT_RETENTION_HOURS', 72, 1, 24 * 365),
    diskBudgetBytes: int('EXPORT_DISK_BUDGET_BYTES', 20 * 1024 ** 3, 1024 ** 2, 2 ** 53),
    fileMaxRows: int('EXPORT_FILE_MAX_ROWS', 1_000_000, 1, 1_000_000_000),
    ingestReserveBytes: int('EXPORT_INGEST_RESERVE_BYTES', EXPORT_INGEST_RESERVE_BYTES, 0, 2 ** 53),
    quotas: { jobBytes: { ...PLAN_EXPORT_JOB_BYTES }, keyBytes: { ...PLAN_EXPORT_KEY_BYTES }, planShare: { ...PLAN_EXPORT_DISK_SHARE } },
    maxRows: {
      free: int('EXPORT_MAX_ROWS_FREE', PLAN_EXPORT_MAX_ROWS.free, 0, 10 ** 12),
      x402: int('EXPORT_MAX_ROWS_X402', PLAN_EXPORT_MAX_ROWS.x402, 0, 10 ** 12),
      enterprise: int('EXPORT_MAX_ROWS_ENTERPRISE', PLAN_EXPORT_MAX_ROWS.enterprise, 0, 10 ** 12),
    },
    maxJobs: {
      free: int('EXPORT_MAX_JOBS_FREE', PLAN_EXPORT_MAX_JOBS.free, 0, 1000),
      x402: int('EXPORT_MAX_JOBS_X402', PLAN_EXPORT_MAX_JOBS.x402, 0, 1000),
      enterprise: int('EXPORT_MAX_JOBS_ENTERPRISE', PLAN_EXPORT_MAX_JOBS.enterprise, 0, 1000),
    },
    // Two: one stays free for paid plans (plans.ts EXPORT_WORKERS_RESERVED_FOR_PAID).
    workers: int('EXPORT_WORKERS', 2, 1, 16),
    maxThreads: int('EXPORT_MAX_THREADS', 1, 1, 256),
    // A job's statements obey the same time-out as a client query: lowering is allowed, raising is not.
    statementTimeoutSeconds: int('EXPORT_STATEMENT_TIMEOUT_SECONDS', sqlTimeoutSeconds, 1, sqlTimeoutSeconds),
    linkTtlSeconds: int('EXPORT_LINK_TTL_SECONDS', 3600, 10, 7 * 86_400),
  };
  const signupRaw = (str('DASHBOARD_SIGNUP') ?? 'open').toLowerCase();
  if (signupRaw !== 'open' && signupRaw !== 'invite') problems.push(`DASHBOARD_SIGNUP must be open or invite, got "${signupRaw}"`);
  const sessionTtlHours = int('SESSION_TTL_HOURS', 12, 1, 24 * 30);
  const cookieSecure = bool('SESSION_COOKIE_SECURE', false);
  const signinFailuresPerAccount = int('SIGNIN_FAILURES_PER_ACCOUNT', 10, 1, 10_000);
  const signinAttemptsPerAddress = int('SIGNIN_ATTEMPTS_PER_ADDRESS', 30, 1, 1_000_000);

  if (problems.length > 0) throw new ConfigError(problems);

  return {
    port,
    host,
    clickhouse: {
      url: chUrl,
      user: str('CLICKHOUSE_USER') ?? 'default',
      password: env.CLICKHOUSE_PASSWORD ?? '',
      database: chDatabase,
      cluster: chCluster,
    },
    dataDir,
    demoRows,
    demoSeed,
    kafka: {
      brokers,
      topic: kafkaTopic,
      groupId: kafkaGroupId,
      clientId: kafkaClientId,
      deadLetterTopic: kafkaDeadLetterTopic,
      partitions: kafkaPartitions,
      fromBeginning: kafkaFromBeginning,
      maxBytesPerPartition: kafkaMaxBytesPerPartition,
      concurrentPartitions: kafkaConcurrentPartitions,
      retryBackoffMs: kafkaRetryBackoffMs,
      sessionTimeoutMs: kafkaSessionTimeoutMs,
    },
    redisUrl,
    adminToken,
    adminTokenGenerated,
    logLevel: logLevelRaw,
    ingest: { maxBodyBytes, maxRecordBytes, batchRows, parseWorkers, writerId, metricsPort },
    analyticsTimeoutSeconds,
    sql: {
      timeoutSeconds: sqlTimeoutSeconds,
      maxMemoryBytes: sqlMaxMemoryBytes,
      sessions: sqlSessions,
      maxThreads: sqlMaxThreads,
      queuePerKey: sqlQueuePerKey,
      queueTotal: sqlQueueTotal,
      user: sqlUser,
      password: env.CLICKHOUSE_SQL_PASSWORD ?? '',
    },
    access: { metricsToken, keyCacheTtlMs, anonymousPerMinute, usageFlushMs },
    http: { requestTimeoutMs, connectionTimeoutMs },
    dashboard: {
      signup: signupRaw === 'invite' ? 'invite' : 'open',
      sessionTtlMs: sessionTtlHours * 3_600_000,
      cookieSecure,
      signinFailuresPerAccount,
      signinAttemptsPerAddress,
    },
    health: { maxIngestAgeSeconds },
    shutdownTimeoutMs,
    stallExitMs,
    freshnessRefreshMs,
    exports: exportsConfig,
  };
}

/** The CLI's settings: --url / --token flags win over TXA_URL / ADMIN_TOKEN. */
export function loadClientConfig(flags: { url?: string; token?: string; key?: string }, env: Env = process.env): ClientConfig {
  const problems: string[] = [];
  const url = (flags.url ?? env.TXA_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') problems.push(`service URL must be http(s), got "${url}"`);
  } catch {
    problems.push(`service URL is not valid: "${url}"`);
  }
  const adminToken = flags.token ?? (env.ADMIN_TOKEN?.trim() || undefined);
  const apiKey = flags.key ?? (env.TXA_API_KEY?.trim() || undefined);
  if (problems.length > 0) throw new ConfigError(problems);
  return { url, adminToken, apiKey };
}

/** For entry points: the configuration, or every problem on stderr and exit code 2. */
export function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}
