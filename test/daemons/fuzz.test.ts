// A short run of the contract fuzzers against a started service (npm run fuzz runs them
// long): schemathesis with every check over the REST OpenAPI document and the GraphQL
// schema, and the JSON-RPC fuzzer over every method's params schema. Target: no failure of
// any check (valid requests accepted, invalid ones refused, undeclared methods 405 with
// Allow, every status and header as documented, no server error). Every run here is a fixed
// set of cases: one seed (FUZZ_SEED), a count of cases rather than a time budget, no example
// database carried between runs; random seeds belong to `npm run fuzz -- --random`. A failure
// prints the request to replay; it then becomes a regression case in the matching hostile
// corpus under test/fixtures/ (or a test of its own).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkAnswer, fuzzRpc, rpcSamples } from '../../scripts/fuzz/rpc-fuzzer.ts';
import { FUZZ_SEED, FUZZ_SERVICE_ENV, GRAPHQL_EXCLUDED_CHECKS, runSchemathesis } from '../../scripts/fuzz/schemathesis.ts';
import { startApiService, type ApiService } from '../../scripts/daemons/api-service.ts';

let service: ApiService;
let keys: string[];

beforeAll(async () => {
  service = await startApiService({ demoRows: 20_000, env: { ...FUZZ_SERVICE_ENV } });
  keys = await Promise.all([1, 2, 3].map((i) => service.createKey('enterprise', `fuzz-${i}`).then((k) => k.key)));
}, 240_000);
afterAll(async () => {
  await service?.stop();
});

describe('the JSON-RPC fuzzer', () => {
  it('finds what it is meant to find: an internal error, a wrong id, a result off its schema', () => {
    const outcomes: Record<string, number> = {};
    expect(checkAnswer({ jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'Internal error' } }, 1, 'getProtocols', outcomes)).toMatch(/internal error/);
    expect(checkAnswer({ jsonrpc: '2.0', id: 2, result: [] }, 1, 'getProtocols', outcomes)).toMatch(/does not echo/);
    expect(checkAnswer({ jsonrpc: '2.0', id: 1, result: [{ protocolName: 'x' }] }, 1, 'getTopProtocols', outcomes)).toMatch(/does not match its schema/);
    expect(checkAnswer({ jsonrpc: '2.0', id: 1, result: ['jupiter_v6'] }, 1, 'getProtocols', outcomes)).toBeUndefined();
  });

  it('answers every generated call with a JSON-RPC envelope, no internal error, every result on its schema', async () => {
    const report = await fuzzRpc({
      url: service.url,
      keys: keys.slice(1),
      seed: FUZZ_SEED,
      maxRequests: 1500,
      // A count, not a time budget: the same 1,500 calls every run (the test's time-out bounds it).
      maxMs: Number.POSITIVE_INFINITY,
      samples: await rpcSamples(service.url, keys[1]!),
    });
    expect(report.failures, JSON.stringify(report.failures.slice(0, 3), null, 1)).toEqual([]);
    // The run reached every kind of answer: results, invalid params, malformed requests.
    expect(report.outcomes.result ?? 0).toBeGreaterThan(100);
    expect(report.outcomes['-32602'] ?? 0).toBeGreaterThan(50);
    expect(report.outcomes['-32600'] ?? 0).toBeGreaterThan(10);
  }, 120_000);
});

describe('schemathesis', () => {
  it('REST: every schemathesis check passes (no server error, answers as documented, valid requests accepted, invalid ones refused, 405 with Allow)', async () => {
    const run = await runSchemathesis({
      location: `${service.url}/api/v1/openapi.json`,
      headers: { 'x-api-key': keys[0]! },
      seed: FUZZ_SEED,
      examples: 15,
      ratePerMinute: 1800,
    });
    expect(run.exitCode, run.output.slice(-6000)).toBe(0);
    expect(run.generated).toBeGreaterThan(100);
  }, 240_000);

  it('GraphQL: every schemathesis check but positive_data_acceptance passes, from queries generated from the schema', async () => {
    const run = await runSchemathesis({
      location: `${service.url}/graphql`,
      excludeChecks: GRAPHQL_EXCLUDED_CHECKS,
      headers: { 'x-api-key': keys[1]! },
      seed: FUZZ_SEED,
      examples: 40,
      ratePerMinute: 1800,
    });
    expect(run.exitCode, run.output.slice(-6000)).toBe(0);
    expect(run.generated).toBeGreaterThan(20);
  }, 240_000);
});
