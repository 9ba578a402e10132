// The start-up banner: where to reach the service, and commands that work as printed
// (copied into another terminal, where ADMIN_TOKEN and TXA_URL are not set).
import type { Config } from '../core/config.ts';

/** The keys CLI's default service URL (scripts/keys-cli.ts, core/config.ts loadClientConfig). */
const CLI_DEFAULT_URL = 'http://127.0.0.1:8080';

/** A value as one shell word (single-quoted unless it is plainly safe). */
const shellWord = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** The command that creates a first API key against this process, as one line a shell runs. */
export function createKeyCommand(address: string, adminToken: string): string {
  const env = [`ADMIN_TOKEN=${shellWord(adminToken)}`];
  if (address !== CLI_DEFAULT_URL) env.push(`TXA_URL=${shellWord(address)}`);
  return `${env.join(' ')} npm run keys -- create --plan free --name me`;
}

export function startupBanner(config: Config, address: string, kafka: string | undefined): string {
  return `\nSolana DeFi analytics service listening on ${address}\n` +
    `  health:      ${address}/health\n` +
    `  dashboard:   ${address}/dashboard (sign up, then create API keys)\n` +
    `  metrics:     ${address}/metrics (Authorization: Bearer <METRICS_TOKEN or admin token>)\n` +
    `  API key:     ${createKeyCommand(address, config.adminToken)}\n` +
    (kafka ? `  kafka:       ${kafka}\n` : '') +
    `  admin token: ${config.adminToken}${config.adminTokenGenerated ? '  (generated; set ADMIN_TOKEN to fix it)' : ''}\n\n`;
}
