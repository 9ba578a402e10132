// Schemathesis (PyPI, in the project's own .venv) run against a started service: the REST
// interface from its OpenAPI document, GraphQL from its schema. The checks are the issue's:
// no server error, responses matching their schema, status codes and content types the
// document declares.
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The venv's bin directory, creating the venv on first use (scripts/fuzz/python-venv.sh). */
export function schemathesisBin(): string {
  const bin = execFileSync('bash', [path.join(ROOT, 'scripts/fuzz/python-venv.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
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

export const CHECKS = ['not_a_server_error', 'status_code_conformance', 'content_type_conformance', 'response_schema_conformance'];

export async function runSchemathesis(opts: {
  /** The schema's URL: an OpenAPI document or a GraphQL endpoint. */
  location: string;
  headers: Record<string, string>;
  seconds: number;
  seed?: string;
  /** Requests per minute the run may send (stay under the key's plan). */
  ratePerMinute: number;
  phases?: string[];
  extraArgs?: string[];
}): Promise<SchemathesisRun> {
  const args = [
    'run', opts.location,
    '--checks', CHECKS.join(','),
    '--max-time', String(opts.seconds),
    '--workers', '1',
    '--rate-limit', `${opts.ratePerMinute}/m`,
    '--request-timeout', '35',
    '--no-color',
    ...(opts.seed === undefined ? [] : ['--seed', opts.seed]),
    ...(opts.phases === undefined ? [] : ['--phases', opts.phases.join(',')]),
    ...Object.entries(opts.headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]),
    ...(opts.extraArgs ?? []),
  ];
  const child = spawn(schemathesisBin(), args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PYTHONUNBUFFERED: '1' } });
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
