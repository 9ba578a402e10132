// The one place that reads process.env. Every problem is collected and reported at once,
// so an operator fixes a bad deployment in one go rather than one restart per mistake.
// The sections are read in core/config/ (engine-sections.ts: where data lives and how it
// arrives; service-sections.ts: how the service serves), the shape is core/config/types.ts.
import { ConfigError, EnvReader, type Env } from './config/env-reader.ts';
import { engineSection, ingestSection, kafkaSection, listenSection, sqlSection } from './config/engine-sections.ts';
import { accessSection, dashboardSection, exportsSection, httpSection, lifecycleSection, operatorSection } from './config/service-sections.ts';
import type { ClientConfig, Config } from './config/types.ts';
import { x402Section } from './config/x402-section.ts';

export { ConfigError } from './config/env-reader.ts';
export type { ClientConfig, Config, ExportConfig, ExportQuotas, LogFormat, LogLevel, X402Config } from './config/types.ts';

export function loadConfig(env: Env = process.env): Config {
  const r = new EnvReader(env);
  // In the order of the variables' problems in the report.
  const listen = listenSection(r);
  const engine = engineSection(r);
  const kafka = kafkaSection(r);
  const redisUrl = r.url('REDIS_URL', ['redis:', 'rediss:']);
  const operator = operatorSection(r);
  const ingest = ingestSection(r, engine.clickhouse.url);
  const sql = sqlSection(r, engine.clickhouse.url);
  const access = accessSection(r);
  const lifecycle = lifecycleSection(r);
  const http = httpSection(r, Math.max(sql.sql.timeoutSeconds, sql.analyticsTimeoutSeconds));
  const exports = exportsSection(r, engine.dataDir, sql.sql.timeoutSeconds);
  const dashboard = dashboardSection(r);
  const x402 = x402Section(r);
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return {
    ...listen,
    ...engine,
    kafka,
    redisUrl,
    ...operator,
    ingest,
    analyticsTimeoutSeconds: sql.analyticsTimeoutSeconds,
    sql: sql.sql,
    access,
    http,
    dashboard,
    ...lifecycle,
    exports,
    x402,
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
