// The configuration's sections of how the service serves: the operator, access control,
// HTTP time-outs, health, export jobs and the dashboard. Read in this order by loadConfig
// (load-config.ts), after the engine sections, from the variables of env-schema.ts: what is
// checked here spans variables, reads a file, or is computed.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PLAN_EXPORT_DISK_SHARE, PLAN_EXPORT_JOB_BYTES, PLAN_EXPORT_KEY_BYTES } from '../plans.ts';
import type { Problems } from './env-reader.ts';
import { ADMIN_TOKEN_BYTES, CONNECTION_TIMEOUT_FLOOR_MS, type EnvVars, QUOTED_CHARS, STALL_EXIT_MIN_MS, TOKEN_MIN_CHARS } from './env-schema.ts';
import type { Config, ExportConfig } from './types.ts';

export function operatorSection(v: EnvVars): Pick<Config, 'logLevel' | 'logFormat' | 'adminToken' | 'adminTokenGenerated'> {
  const given = v.ADMIN_TOKEN;
  return {
    logLevel: v.LOG_LEVEL,
    logFormat: v.LOG_FORMAT,
    adminToken: given ?? randomBytes(ADMIN_TOKEN_BYTES).toString('base64url'),
    adminTokenGenerated: given === undefined,
  };
}

export function accessSection(v: EnvVars, p: Problems): Config['access'] {
  // METRICS_TOKEN_FILE: the token in a file (a container secret), the same file Prometheus
  // reads with credentials_file (deploy/prometheus/prometheus.yml), so the two cannot drift.
  let metricsToken = v.METRICS_TOKEN;
  const metricsTokenFile = v.METRICS_TOKEN_FILE;
  if (metricsToken !== undefined && metricsTokenFile !== undefined) p.add('set METRICS_TOKEN or METRICS_TOKEN_FILE, not both');
  else if (metricsTokenFile !== undefined) {
    try {
      metricsToken = readFileSync(metricsTokenFile, 'utf8').trim();
    } catch (err) {
      p.add(`METRICS_TOKEN_FILE cannot be read: ${(err as Error).message}`);
    }
  }
  if (metricsToken !== undefined && metricsToken.length < TOKEN_MIN_CHARS) p.add(`METRICS_TOKEN must be at least ${TOKEN_MIN_CHARS} characters`);
  return { metricsToken, keyCacheTtlMs: v.KEY_CACHE_TTL_MS, anonymousPerMinute: v.ANONYMOUS_RATE_LIMIT, usageFlushMs: v.USAGE_FLUSH_MS };
}

export function lifecycleSection(
  v: EnvVars,
  p: Problems,
): Pick<Config, 'health' | 'shutdownTimeoutMs' | 'stallExitMs' | 'freshnessRefreshMs' | 'streamReplayWindowSeconds'> {
  const stallExitMs = v.PROCESS_STALL_EXIT_MS;
  if (stallExitMs !== 0 && stallExitMs < STALL_EXIT_MIN_MS)
    p.add(`PROCESS_STALL_EXIT_MS must be 0 (no watchdog) or at least ${STALL_EXIT_MIN_MS}, got ${stallExitMs}`);
  return {
    health: { maxIngestAgeSeconds: v.HEALTH_MAX_INGEST_AGE_SECONDS },
    shutdownTimeoutMs: v.SHUTDOWN_TIMEOUT_MS,
    stallExitMs,
    freshnessRefreshMs: v.FRESHNESS_REFRESH_MS,
    // Resumable live streams (Last-Event-ID): how far back a reconnecting client is replayed.
    streamReplayWindowSeconds: v.STREAM_REPLAY_WINDOW_SECONDS,
  };
}

/** `longestSilenceSeconds`: the engine time limits (SQL, analytics), the longest an answer is legitimately silent. */
export function httpSection(v: EnvVars, p: Problems, longestSilenceSeconds: number): Config['http'] {
  const requestTimeoutMs = v.REQUEST_TIMEOUT_MS;
  // The longest a legitimate answer keeps a connection silent: a SQL query or an analytics
  // read running to its engine time limit.
  const sqlTimeoutMs = longestSilenceSeconds * 1000;
  const connectionTimeoutMs = v.CONNECTION_TIMEOUT_MS ?? Math.max(CONNECTION_TIMEOUT_FLOOR_MS, 2 * sqlTimeoutMs, 2 * requestTimeoutMs);
  // A connection silent for less than the longest legitimate silence would cut answers.
  if (connectionTimeoutMs !== 0 && connectionTimeoutMs <= Math.max(sqlTimeoutMs, requestTimeoutMs)) {
    p.add(
      `CONNECTION_TIMEOUT_MS must be 0 or more than SQL_TIMEOUT_SECONDS and ANALYTICS_TIMEOUT_SECONDS (${sqlTimeoutMs} ms) and REQUEST_TIMEOUT_MS (${requestTimeoutMs} ms), got ${connectionTimeoutMs}`,
    );
  }
  return { requestTimeoutMs, connectionTimeoutMs, corsOrigins: corsOrigins(v, p) };
}

/** CORS_ORIGINS: unset or `*` any origin; `none` no cross-origin access; else a comma list of exact origins. */
function corsOrigins(v: EnvVars, p: Problems): '*' | readonly string[] {
  const raw = v.CORS_ORIGINS;
  if (raw === undefined || raw === '*') return '*';
  if (raw.toLowerCase() === 'none') return [];
  const origins: string[] = [];
  for (const item of raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')) {
    let origin: string | undefined;
    try {
      const u = new URL(item);
      // An origin is scheme, host and port only: what a browser sends in the Origin header.
      if ((u.protocol === 'http:' || u.protocol === 'https:') && u.origin === item.replace(/\/$/, '')) origin = u.origin;
    } catch {
      /* reported below */
    }
    if (origin === undefined)
      p.add(
        `CORS_ORIGINS must be *, none, or a comma-separated list of origins like https://app.example.com (scheme, host, optional port; no path), got "${item.slice(0, QUOTED_CHARS)}"`,
      );
    else origins.push(origin);
  }
  if (origins.length === 0 && p.list.length === 0) p.add('CORS_ORIGINS lists no origin; use none for no cross-origin access');
  return origins;
}

export function exportsSection(v: EnvVars, p: Problems, dataDir: string, sqlTimeoutSeconds: number): ExportConfig {
  const dir = path.resolve(v.EXPORT_DIR ?? path.join(dataDir, '..', `${path.basename(dataDir)}-exports`));
  // Not inside the engine's data directory: the engine owns that tree.
  if (dir === dataDir || dir.startsWith(`${dataDir}${path.sep}`)) p.add('EXPORT_DIR must not be inside DATA_DIR');
  // A job's statements obey the same time-out as a client query: lowering is allowed, raising is not.
  const statementTimeoutSeconds = v.EXPORT_STATEMENT_TIMEOUT_SECONDS ?? sqlTimeoutSeconds;
  if (statementTimeoutSeconds > sqlTimeoutSeconds)
    p.add(`EXPORT_STATEMENT_TIMEOUT_SECONDS must be between 1 and ${sqlTimeoutSeconds}, got ${statementTimeoutSeconds}`);
  return {
    dir,
    retentionHours: v.EXPORT_RETENTION_HOURS,
    diskBudgetBytes: v.EXPORT_DISK_BUDGET_BYTES,
    fileMaxRows: v.EXPORT_FILE_MAX_ROWS,
    ingestReserveBytes: v.EXPORT_INGEST_RESERVE_BYTES,
    quotas: { jobBytes: { ...PLAN_EXPORT_JOB_BYTES }, keyBytes: { ...PLAN_EXPORT_KEY_BYTES }, planShare: { ...PLAN_EXPORT_DISK_SHARE } },
    maxRows: { free: v.EXPORT_MAX_ROWS_FREE, x402: v.EXPORT_MAX_ROWS_X402, enterprise: v.EXPORT_MAX_ROWS_ENTERPRISE },
    maxJobs: { free: v.EXPORT_MAX_JOBS_FREE, x402: v.EXPORT_MAX_JOBS_X402, enterprise: v.EXPORT_MAX_JOBS_ENTERPRISE },
    workers: v.EXPORT_WORKERS,
    maxThreads: v.EXPORT_MAX_THREADS,
    statementTimeoutSeconds,
    linkTtlSeconds: v.EXPORT_LINK_TTL_SECONDS,
  };
}

export function dashboardSection(v: EnvVars): Config['dashboard'] {
  return {
    signup: v.DASHBOARD_SIGNUP,
    sessionTtlMs: v.SESSION_TTL_HOURS * 3_600_000,
    cookieSecure: v.SESSION_COOKIE_SECURE,
    signinFailuresPerAccount: v.SIGNIN_FAILURES_PER_ACCOUNT,
    signinAttemptsPerAddress: v.SIGNIN_ATTEMPTS_PER_ADDRESS,
  };
}
