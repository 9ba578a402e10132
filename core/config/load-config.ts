// The one place that reads process.env. Every variable is declared once, with its type and
// default, in env-schema.ts; readEnv converts and checks each, the sections check what spans
// variables (engine-sections.ts: where data lives and how it arrives; service-sections.ts: how
// the service serves; x402-section.ts), and the shape they build is types.ts. Every problem
// is collected and reported at once, so an operator fixes a bad deployment in one go rather
// than one restart per mistake.
import { engineSection, ingestSection, kafkaSection, listenSection, sqlSection } from './engine-sections.ts';
import { ConfigError, type Env, Problems, readEnv } from './env-reader.ts';
import { CLIENT_ENV_SCHEMA, ENV_SCHEMA } from './env-schema.ts';
import { accessSection, dashboardSection, exportsSection, httpSection, lifecycleSection, operatorSection } from './service-sections.ts';
import type { ClientConfig, Config } from './types.ts';
import { x402Section } from './x402-section.ts';

export { ConfigError, type Env } from './env-reader.ts';
export { ENV_SCHEMA, type EnvVars } from './env-schema.ts';
export type { ClientConfig, Config, ExportConfig, ExportQuotas, LogFormat, LogLevel, X402Config } from './types.ts';

export function loadConfig(env: Env = process.env): Config {
  const p = new Problems();
  const v = readEnv(ENV_SCHEMA, env, p);
  const engine = engineSection(v, p);
  const kafka = kafkaSection(v, p);
  const sql = sqlSection(v, p, engine.clickhouse.url);
  const access = accessSection(v, p);
  const lifecycle = lifecycleSection(v, p);
  const http = httpSection(v, p, Math.max(sql.sql.timeoutSeconds, sql.analyticsTimeoutSeconds));
  const exports = exportsSection(v, p, engine.dataDir, sql.sql.timeoutSeconds);
  const x402 = x402Section(v, p);
  if (p.list.length > 0) throw new ConfigError(p.list);
  return {
    ...listenSection(v),
    ...engine,
    kafka,
    redisUrl: v.REDIS_URL,
    ...operatorSection(v),
    ingest: ingestSection(v, engine.clickhouse.url),
    analyticsTimeoutSeconds: sql.analyticsTimeoutSeconds,
    sql: sql.sql,
    access,
    http,
    dashboard: dashboardSection(v),
    ...lifecycle,
    exports,
    x402,
  };
}

/** The configuration of this process's environment with some variables set over it (a CLI's flags). */
export function loadConfigWith(overrides: Env): Config {
  return loadConfig({ ...process.env, ...overrides });
}

/** The CLI's settings: --url / --token flags win over TXA_URL / ADMIN_TOKEN. */
export function loadClientConfig(flags: { url?: string; token?: string; key?: string }, env: Env = process.env): ClientConfig {
  const p = new Problems();
  const v = readEnv(CLIENT_ENV_SCHEMA, env, p);
  const url = (flags.url ?? v.TXA_URL).replace(/\/+$/, '');
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') p.add(`service URL must be http(s), got "${url}"`);
  } catch {
    p.add(`service URL is not valid: "${url}"`);
  }
  if (p.list.length > 0) throw new ConfigError(p.list);
  return { url, adminToken: flags.token ?? v.ADMIN_TOKEN, apiKey: flags.key ?? v.TXA_API_KEY };
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
