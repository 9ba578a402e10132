// How the contract fuzzers are started (scripts/fuzz/): the suite's runs are a fixed set of cases
// (one seed, a count of cases per operation, no example database carried between runs), so a run
// that passed passes again; a time budget, and a random seed, belong to `npm run fuzz`.
import { describe, expect, it } from 'vitest';
import { FUZZ_SEED, schemathesisArgs } from '../../scripts/fuzz/schemathesis.ts';

const base = { location: 'http://127.0.0.1:1/api/v1/openapi.json', headers: { 'x-api-key': 'k' }, seed: FUZZ_SEED, ratePerMinute: 1800 };
const flagValue = (args: string[], flag: string): string | undefined => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);

describe('schemathesis runs', () => {
  it('a fixed set of cases: the seed, a count per operation, no example database, no time budget', () => {
    const args = schemathesisArgs({ ...base, examples: 15 });
    expect(flagValue(args, '--seed')).toBe(String(FUZZ_SEED));
    expect(flagValue(args, '--max-examples')).toBe('15');
    expect(flagValue(args, '--generation-database')).toBe('none');
    expect(args).not.toContain('--max-time');
  });

  it('a long run: a time budget from a seed (npm run fuzz, --random draws it)', () => {
    const args = schemathesisArgs({ ...base, seed: 42, seconds: 300 });
    expect(flagValue(args, '--seed')).toBe('42');
    expect(flagValue(args, '--max-time')).toBe('300');
    expect(args).not.toContain('--max-examples');
  });
});
