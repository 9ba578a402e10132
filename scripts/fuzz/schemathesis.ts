// Schemathesis (PyPI, in the project's own .venv) run against a started service: the REST
// interface from its OpenAPI document, GraphQL from its schema, with every check schemathesis
// has (`--checks all`: server errors, status codes, content types, response headers and
// schemas, valid data accepted and invalid data refused, undeclared methods answered 405 with
// Allow, authentication enforced …). The repository's schemathesis.toml is read (it loads
// schemathesis_hooks.py, which applies the document's x-cross-field-rules to the requests
// generated as valid); the GraphQL run leaves out GRAPHQL_EXCLUDED_CHECKS. The service
// under test lets requests without a key through at a rate the run cannot reach
// (ANONYMOUS_RATE_LIMIT, see FUZZ_SERVICE_ENV), so the unauthenticated probes of the
// ignored_auth check are answered 401, not 429.
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { FUZZ_ANONYMOUS_RATE_LIMIT } from '../../core/limits/http.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The venv's bin directory, creating the venv on first use (scripts/python/venv.sh). */
export function schemathesisBin(): string {
  const bin = execFileSync('bash', [path.join(ROOT, 'scripts/python/venv.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  return path.join(bin, 'schemathesis');
}

export interface SchemathesisRun {
  target: string;
  exitCode: number;
  generated: number;
  passed: number;
  failed: number;
  seed: string;
  output: string;
}

export const CHECKS = ['all'];

/**
 * The seed of every fuzz run in the test suite (test/daemons/fuzz.test.ts), and of `npm run fuzz` unless
 * it is given --seed N or --random: the suite's runs are a fixed set of cases (a seed and a count
 * of cases per operation, never a time budget, and no example database carried between runs), so
 * a run that passed passes again and a failure is a finding, not luck. Random seeds are for the
 * longer run (`npm run fuzz -- --random`); what it finds becomes a fixed case (docs/reliability.md).
 */
export const FUZZ_SEED = 20261122;

/**
 * Checks left out of the GraphQL run: positive_data_acceptance takes every query its
 * generator builds from the SDL as valid, but the SDL types dates, signatures and
 * addresses as String, so most generated values are refused (BAD_USER_INPUT) by rules the
 * SDL cannot state. Custom scalars in the SDL (a Date, a Signature) would let it in.
 */
export const GRAPHQL_EXCLUDED_CHECKS = ['positive_data_acceptance'];

/** The repository's schemathesis settings (hooks), read whatever the caller's directory. */
export const CONFIG_FILE = path.join(ROOT, 'schemathesis.toml');

/** Environment of the service a fuzz run targets: requests without a key (the ignored_auth
 *  check's probes, one per authenticated request) must not be throttled, or they would be
 *  answered 429 rather than 401. */
export const FUZZ_SERVICE_ENV: Readonly<Record<string, string>> = Object.freeze({ ANONYMOUS_RATE_LIMIT: String(FUZZ_ANONYMOUS_RATE_LIMIT) });

/** One schemathesis run: either a fixed set of cases (`examples`: the suite's) or a time budget
 *  (`seconds`: npm run fuzz), always from a seed. */
export type SchemathesisOptions = {
  /** The schema's URL: an OpenAPI document or a GraphQL endpoint. */
  location: string;
  headers: Record<string, string>;
  seed: number;
  /** Requests per minute the run may send (stay under the key's plan). */
  ratePerMinute: number;
  phases?: string[];
  /** Checks to leave out (GRAPHQL_EXCLUDED_CHECKS for the GraphQL run); none by default. */
  excludeChecks?: string[];
  extraArgs?: string[];
} /** At most this many cases per operation and phase, no time budget, no example database. */ & (
  | { examples: number; seconds?: undefined }
  /** Fuzzing and stateful testing repeat until the budget is spent; the example database kept. */
  | { seconds: number; examples?: undefined }
);

/** The command line of a run (after the executable). */
export function schemathesisArgs(opts: SchemathesisOptions): string[] {
  return [
    '--config-file',
    CONFIG_FILE,
    'run',
    opts.location,
    '--checks',
    CHECKS.join(','),
    ...(opts.excludeChecks === undefined || opts.excludeChecks.length === 0 ? [] : ['--exclude-checks', opts.excludeChecks.join(',')]),
    '--seed',
    String(opts.seed),
    // A fixed set: no database, which would replay examples an earlier run happened to store.
    ...(opts.examples === undefined ? ['--max-time', String(opts.seconds)] : ['--max-examples', String(opts.examples), '--generation-database', 'none']),
    '--workers',
    '1',
    '--rate-limit',
    `${opts.ratePerMinute}/m`,
    '--request-timeout',
    '35',
    '--no-color',
    ...(opts.phases === undefined ? [] : ['--phases', opts.phases.join(',')]),
    ...Object.entries(opts.headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]),
    ...(opts.extraArgs ?? []),
  ];
}

export async function runSchemathesis(opts: SchemathesisOptions): Promise<SchemathesisRun> {
  const args = schemathesisArgs(opts);
  const child = spawn(schemathesisBin(), args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PYTHONUNBUFFERED: '1' } });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exitCode = await new Promise<number>((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
  const cases = /(\d+) generated(?:, (\d+) passed)?(?:, (\d+) failed)?/.exec(output.replace(/\n/g, ' '));
  const failedMatch = /(\d+) failed/.exec(/Test cases:[^\n]*/.exec(output)?.[0] ?? '');
  return {
    target: opts.location,
    exitCode,
    generated: Number(cases?.[1] ?? 0),
    passed: Number(cases?.[2] ?? 0),
    failed: Number(failedMatch?.[1] ?? 0),
    seed: /Seed: (\d+)/.exec(output)?.[1] ?? '',
    output,
  };
}
