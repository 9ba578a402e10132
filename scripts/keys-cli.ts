// Operator CLI for API keys: a thin client of the running service's operator API
// (POST/GET/PATCH /admin/keys), so it works against any deployment it can reach.
//
//   npm run keys -- create --plan free --name ci       prints the secret (only time shown)
//   npm run keys -- list
//   npm run keys -- revoke <id>
//   npm run keys -- set-status <id> active|inactive
//   npm run keys -- set-plan <id> free|x402|enterprise
//   npm run keys -- usage <id> [--from ISO] [--to ISO] [--granularity minute|hour|day]
//
// Service URL: --url or TXA_URL (default http://127.0.0.1:8080); token: --token or ADMIN_TOKEN.
import { parseArgs } from 'node:util';
import { ConfigError, loadClientConfig, type ClientConfig } from '../core/config/load-config.ts';

const USAGE = `usage: npm run keys -- <command> [options]

commands:
  create --name <name> --plan <free|x402|enterprise>   create a key; prints its secret once
  list [--json]                                          list keys (never their secrets)
  revoke <id>                                            revoke a key for good
  set-status <id> <active|inactive|revoked>              change a key's status
  set-plan <id> <free|x402|enterprise>                   change a key's plan
  usage <id> [--from <ISO>] [--to <ISO>] [--granularity minute|hour|day]

options:
  --url <url>      service base URL (env TXA_URL; default http://127.0.0.1:8080)
  --token <token>  operator token (env ADMIN_TOKEN)
`;

class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

interface KeyView {
  id: string;
  name: string;
  plan: string;
  status: string;
  keyPrefix?: string;
  createdAt: string;
  lastUsedAt?: string | null;
}

async function call<T>(cfg: ClientConfig, method: string, path: string, body?: object): Promise<T> {
  if (cfg.adminToken === undefined) throw new CliError('no operator token: pass --token or set ADMIN_TOKEN', 2);
  let res: Response;
  try {
    res = await fetch(`${cfg.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${cfg.adminToken}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  } catch (err) {
    throw new CliError(`cannot reach ${cfg.url}: ${(err as Error).message}`, 1);
  }
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = text;
  }
  if (!res.ok) {
    const msg = typeof parsed === 'object' && parsed !== null && 'message' in parsed ? String((parsed as { message: unknown }).message) : text;
    throw new CliError(`${method} ${path} failed: ${res.status} ${msg}`, 1);
  }
  return parsed as T;
}

function table(rows: KeyView[]): string {
  const cols: [string, (k: KeyView) => string][] = [
    ['ID', (k) => k.id],
    ['NAME', (k) => k.name],
    ['PLAN', (k) => k.plan],
    ['STATUS', (k) => k.status],
    ['PREFIX', (k) => k.keyPrefix ?? ''],
    ['CREATED', (k) => k.createdAt],
    ['LAST USED', (k) => k.lastUsedAt ?? '-'],
  ];
  const cells = [cols.map(([h]) => h), ...rows.map((r) => cols.map(([, f]) => f(r)))];
  const widths = cols.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  return cells
    .map((row) =>
      row
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

async function run(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      url: { type: 'string' },
      token: { type: 'string' },
      name: { type: 'string' },
      plan: { type: 'string' },
      json: { type: 'boolean' },
      from: { type: 'string' },
      to: { type: 'string' },
      granularity: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, ...args] = positionals;
  if (values.help || command === undefined) {
    process.stdout.write(USAGE);
    if (command === undefined && !values.help) throw new CliError('no command given', 2);
    return;
  }
  const cfg = loadClientConfig({ url: values.url, token: values.token });
  const need = (n: number, what: string): string[] => {
    if (args.length !== n) throw new CliError(`${command} takes ${what}`, 2);
    return args;
  };
  const enc = encodeURIComponent;

  switch (command) {
    case 'create': {
      if (values.name === undefined || values.plan === undefined) throw new CliError('create needs --name and --plan', 2);
      const k = await call<KeyView & { key: string }>(cfg, 'POST', '/admin/keys', { name: values.name, plan: values.plan });
      if (values.json) {
        process.stdout.write(`${JSON.stringify(k)}\n`);
      } else {
        process.stdout.write(
          `created key ${k.id} (${k.name}, plan ${k.plan})\n\n  ${k.key}\n\nStore this secret now: it is shown only once and cannot be recovered.\n`,
        );
      }
      return;
    }
    case 'list': {
      const { data } = await call<{ data: KeyView[] }>(cfg, 'GET', '/admin/keys');
      process.stdout.write(values.json ? `${JSON.stringify(data)}\n` : `${table(data)}\n`);
      return;
    }
    case 'revoke': {
      const [id] = need(1, 'one key id');
      const k = await call<KeyView>(cfg, 'POST', `/admin/keys/${enc(id!)}/revoke`);
      process.stdout.write(`key ${k.id} is now ${k.status}\n`);
      return;
    }
    case 'set-status': {
      const [id, status] = need(2, 'a key id and a status');
      const k = await call<KeyView>(cfg, 'PATCH', `/admin/keys/${enc(id!)}`, { status });
      process.stdout.write(`key ${k.id} is now ${k.status}\n`);
      return;
    }
    case 'set-plan': {
      const [id, plan] = need(2, 'a key id and a plan');
      const k = await call<KeyView>(cfg, 'PATCH', `/admin/keys/${enc(id!)}`, { plan });
      process.stdout.write(`key ${k.id} is now on plan ${k.plan}\n`);
      return;
    }
    case 'usage': {
      const [id] = need(1, 'one key id');
      const q = new URLSearchParams();
      if (values.from) q.set('from', values.from);
      if (values.to) q.set('to', values.to);
      if (values.granularity) q.set('granularity', values.granularity);
      const u = await call<object>(cfg, 'GET', `/admin/keys/${enc(id!)}/usage?${q.toString()}`);
      process.stdout.write(`${JSON.stringify(u, null, 2)}\n`);
      return;
    }
    default:
      throw new CliError(`unknown command "${command}"\n\n${USAGE}`, 2);
  }
}

run(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof CliError || err instanceof ConfigError) {
    process.stderr.write(`keys: ${err.message}\n`);
    process.exit(err instanceof CliError ? err.exitCode : 2);
  }
  // parseArgs rejects unknown options with a TypeError carrying a readable message.
  process.stderr.write(`keys: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
});
