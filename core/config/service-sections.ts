// The configuration's sections of how the service serves: the operator, access control,
// HTTP time-outs, health, export jobs and the dashboard. Read in this order by loadConfig
// (core/config.ts), after the engine sections, so problems are listed in it.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { EXPORT_INGEST_RESERVE_BYTES, PROCESS_STALL_EXIT_MS, STREAM_REPLAY_WINDOW_SECONDS } from '../limits.ts';
import { PLAN_EXPORT_DISK_SHARE, PLAN_EXPORT_JOB_BYTES, PLAN_EXPORT_KEY_BYTES, PLAN_EXPORT_MAX_JOBS, PLAN_EXPORT_MAX_ROWS } from '../plans.ts';
import type { EnvReader } from './env-reader.ts';
import type { Config, ExportConfig, LogFormat, LogLevel } from './types.ts';

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const LOG_FORMATS: readonly LogFormat[] = ['auto', 'json', 'pretty'];

export function operatorSection(r: EnvReader): Pick<Config, 'logLevel' | 'logFormat' | 'adminToken' | 'adminTokenGenerated'> {
  const logLevel = (r.str('LOG_LEVEL') ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) r.problem(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  const logFormat = (r.str('LOG_FORMAT') ?? 'auto').toLowerCase() as LogFormat;
  if (!LOG_FORMATS.includes(logFormat)) r.problem(`LOG_FORMAT must be one of ${LOG_FORMATS.join(', ')}, got "${logFormat}"`);
  const given = r.str('ADMIN_TOKEN');
  if (given !== undefined && given.length < 16) r.problem('ADMIN_TOKEN must be at least 16 characters');
  return { logLevel, logFormat, adminToken: given ?? randomBytes(24).toString('base64url'), adminTokenGenerated: given === undefined };
}

export function accessSection(r: EnvReader): Config['access'] {
  // METRICS_TOKEN_FILE: the token in a file (a container secret), the same file Prometheus
  // reads with credentials_file (deploy/prometheus/prometheus.yml), so the two cannot drift.
  let metricsToken = r.str('METRICS_TOKEN');
  const metricsTokenFile = r.str('METRICS_TOKEN_FILE');
  if (metricsToken !== undefined && metricsTokenFile !== undefined) r.problem('set METRICS_TOKEN or METRICS_TOKEN_FILE, not both');
  else if (metricsTokenFile !== undefined) {
    try {
      metricsToken = readFileSync(metricsTokenFile, 'utf8').trim();
    } catch (err) {
      r.problem(`METRICS_TOKEN_FILE cannot be read: ${(err as Error).message}`);
    }
  }
  if (metricsToken !== undefined && metricsToken.length < 16) r.problem('METRICS_TOKEN must be at least 16 characters');
  return {
    metricsToken,
    // 1000 ms at most: DESIGN/issue require a revocation to be seen within one second.
    keyCacheTtlMs: r.int('KEY_CACHE_TTL_MS', 500, 0, 1000),
    anonymousPerMinute: r.int('ANONYMOUS_RATE_LIMIT', 60, 1, 1_000_000),
    usageFlushMs: r.int('USAGE_FLUSH_MS', 5000, 100, 300_000),
  };
}

export function lifecycleSection(r: EnvReader): Pick<Config, 'health' | 'shutdownTimeoutMs' | 'stallExitMs' | 'freshnessRefreshMs' | 'streamReplayWindowSeconds'> {
  const maxIngestAgeSeconds = r.str('HEALTH_MAX_INGEST_AGE_SECONDS') === undefined ? undefined : r.int('HEALTH_MAX_INGEST_AGE_SECONDS', 0, 1, 10 ** 9);
  const stallExitMs = r.int('PROCESS_STALL_EXIT_MS', PROCESS_STALL_EXIT_MS, 0, 3_600_000);
  // Below a second a busy moment (a large answer serialised) would count as stuck.
  if (stallExitMs !== 0 && stallExitMs < 1000) r.problem(`PROCESS_STALL_EXIT_MS must be 0 (no watchdog) or at least 1000, got ${stallExitMs}`);
  return {
    health: { maxIngestAgeSeconds },
    shutdownTimeoutMs: r.int('SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    stallExitMs,
    freshnessRefreshMs: r.int('FRESHNESS_REFRESH_MS', 2000, 100, 600_000),
    // Resumable live streams (Last-Event-ID): how far back a reconnecting client is replayed.
    streamReplayWindowSeconds: r.int('STREAM_REPLAY_WINDOW_SECONDS', STREAM_REPLAY_WINDOW_SECONDS, 1, 7 * 86_400),
  };
}

/** `longestSilenceSeconds`: the engine time limits (SQL, analytics), the longest an answer is legitimately silent. */
export function httpSection(r: EnvReader, longestSilenceSeconds: number): Config['http'] {
  // 0 (Node's "no limit") is refused: a body trickled a byte at a time would hold a
  // connection, and a unit of its key's rate limit, for as long as the client likes.
  const requestTimeoutMs = r.int('REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000);
  // The longest a legitimate answer keeps a connection silent: a SQL query or an analytics
  // read running to its engine time limit.
  const sqlTimeoutMs = longestSilenceSeconds * 1000;
  const connectionTimeoutMs = r.int('CONNECTION_TIMEOUT_MS', Math.max(120_000, 2 * sqlTimeoutMs, 2 * requestTimeoutMs), 0, 86_400_000);
  // A connection silent for less than the longest legitimate silence would cut answers.
  if (connectionTimeoutMs !== 0 && connectionTimeoutMs <= Math.max(sqlTimeoutMs, requestTimeoutMs)) {
    r.problem(`CONNECTION_TIMEOUT_MS must be 0 or more than SQL_TIMEOUT_SECONDS and ANALYTICS_TIMEOUT_SECONDS (${sqlTimeoutMs} ms) and REQUEST_TIMEOUT_MS (${requestTimeoutMs} ms), got ${connectionTimeoutMs}`);
  }
  return { requestTimeoutMs, connectionTimeoutMs, corsOrigins: corsOrigins(r) };
}

/** CORS_ORIGINS: unset or `*` any origin; `none` no cross-origin access; else a comma list of exact origins. */
function corsOrigins(r: EnvReader): '*' | readonly string[] {
  const raw = r.str('CORS_ORIGINS');
  if (raw === undefined || raw === '*') return '*';
  if (raw.toLowerCase() === 'none') return [];
  const origins: string[] = [];
  for (const item of raw.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    let origin: string | undefined;
    try {
      const u = new URL(item);
      // An origin is scheme, host and port only: what a browser sends in the Origin header.
      if ((u.protocol === 'http:' || u.protocol === 'https:') && u.origin === item.replace(/\/$/, '')) origin = u.origin;
    } catch { /* reported below */ }
    if (origin === undefined) r.problem(`CORS_ORIGINS must be *, none, or a comma-separated list of origins like https://app.example.com (scheme, host, optional port; no path), got "${item.slice(0, 100)}"`);
    else origins.push(origin);
  }
  if (origins.length === 0 && r.problems.length === 0) r.problem('CORS_ORIGINS lists no origin; use none for no cross-origin access');
  return origins;
}

export function exportsSection(r: EnvReader, dataDir: string, sqlTimeoutSeconds: number): ExportConfig {
  const dir = path.resolve(r.str('EXPORT_DIR') ?? path.join(dataDir, '..', `${path.basename(dataDir)}-exports`));
  // Not inside the engine's data directory: the engine owns that tree.
  if (dir === dataDir || dir.startsWith(`${dataDir}${path.sep}`)) r.problem('EXPORT_DIR must not be inside DATA_DIR');
  return {
    dir,
    retentionHours: r.int('EXPORT_RETENTION_HOURS', 72, 1, 24 * 365),
    diskBudgetBytes: r.int('EXPORT_DISK_BUDGET_BYTES', 20 * 1024 ** 3, 1024 ** 2, 2 ** 53),
    fileMaxRows: r.int('EXPORT_FILE_MAX_ROWS', 1_000_000, 1, 1_000_000_000),
    ingestReserveBytes: r.int('EXPORT_INGEST_RESERVE_BYTES', EXPORT_INGEST_RESERVE_BYTES, 0, 2 ** 53),
    quotas: { jobBytes: { ...PLAN_EXPORT_JOB_BYTES }, keyBytes: { ...PLAN_EXPORT_KEY_BYTES }, planShare: { ...PLAN_EXPORT_DISK_SHARE } },
    maxRows: {
      free: r.int('EXPORT_MAX_ROWS_FREE', PLAN_EXPORT_MAX_ROWS.free, 0, 10 ** 12),
      x402: r.int('EXPORT_MAX_ROWS_X402', PLAN_EXPORT_MAX_ROWS.x402, 0, 10 ** 12),
      enterprise: r.int('EXPORT_MAX_ROWS_ENTERPRISE', PLAN_EXPORT_MAX_ROWS.enterprise, 0, 10 ** 12),
    },
    maxJobs: {
      free: r.int('EXPORT_MAX_JOBS_FREE', PLAN_EXPORT_MAX_JOBS.free, 0, 1000),
      x402: r.int('EXPORT_MAX_JOBS_X402', PLAN_EXPORT_MAX_JOBS.x402, 0, 1000),
      enterprise: r.int('EXPORT_MAX_JOBS_ENTERPRISE', PLAN_EXPORT_MAX_JOBS.enterprise, 0, 1000),
    },
    // Two: one stays free for paid plans (plans.ts EXPORT_WORKERS_RESERVED_FOR_PAID).
    workers: r.int('EXPORT_WORKERS', 2, 1, 16),
    maxThreads: r.int('EXPORT_MAX_THREADS', 1, 1, 256),
    // A job's statements obey the same time-out as a client query: lowering is allowed, raising is not.
    statementTimeoutSeconds: r.int('EXPORT_STATEMENT_TIMEOUT_SECONDS', sqlTimeoutSeconds, 1, sqlTimeoutSeconds),
    linkTtlSeconds: r.int('EXPORT_LINK_TTL_SECONDS', 3600, 10, 7 * 86_400),
  };
}

export function dashboardSection(r: EnvReader): Config['dashboard'] {
  const signup = (r.str('DASHBOARD_SIGNUP') ?? 'open').toLowerCase();
  if (signup !== 'open' && signup !== 'invite') r.problem(`DASHBOARD_SIGNUP must be open or invite, got "${signup}"`);
  const sessionTtlHours = r.int('SESSION_TTL_HOURS', 12, 1, 24 * 30);
  return {
    signup: signup === 'invite' ? 'invite' : 'open',
    sessionTtlMs: sessionTtlHours * 3_600_000,
    cookieSecure: r.bool('SESSION_COOKIE_SECURE', false),
    signinFailuresPerAccount: r.int('SIGNIN_FAILURES_PER_ACCOUNT', 10, 1, 10_000),
    signinAttemptsPerAddress: r.int('SIGNIN_ATTEMPTS_PER_ADDRESS', 30, 1, 1_000_000),
  };
}
