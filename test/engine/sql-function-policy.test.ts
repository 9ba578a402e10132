// The function allow-list is complete for this engine: every function the engine knows is
// classified (allowed as pure computation, or denied with a reason), so an engine upgrade
// that adds a function cannot slip a new reader of files or settings past the guard: it
// stays refused, and this test names it until someone classifies it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALLOWED_FUNCTIONS, CATALOG_SQL, DENIED_FUNCTIONS, FunctionPolicy, type CatalogEntry } from '../../api/services/sql/function-policy.ts';
import { startApp } from '../support/services.ts';

let t: Awaited<ReturnType<typeof startApp>>;
let catalog: (CatalogEntry & { categories?: string })[];
let policy: FunctionPolicy;

beforeAll(async () => {
  t = await startApp({ DEMO_ROWS: '0' });
  catalog = await t.services.wh.query(`SELECT name, alias_to, case_insensitive, is_aggregate, categories FROM system.functions`);
  policy = new FunctionPolicy(await t.services.wh.query<CatalogEntry>(CATALOG_SQL));
});
afterAll(async () => t.cleanup());

describe('function policy', () => {
  it('classifies every function of the engine (a new one fails here until it is reviewed)', () => {
    const unclassified = catalog
      .filter((f) => f.alias_to === '' && !ALLOWED_FUNCTIONS.has(f.name) && !DENIED_FUNCTIONS.has(f.name))
      .map((f) => `${f.name} (${f.categories || 'no category'})`);
    expect(unclassified, 'add these to api/services/sql/function-policy.json, allowed or denied with a reason').toEqual([]);
  });

  it('names no function twice and none the engine lacks', () => {
    const both = [...ALLOWED_FUNCTIONS].filter((n) => DENIED_FUNCTIONS.has(n));
    expect(both).toEqual([]);
    const known = new Set(catalog.map((f) => f.name));
    expect([...ALLOWED_FUNCTIONS, ...DENIED_FUNCTIONS.keys()].filter((n) => !known.has(n))).toEqual([]);
  });

  it('refuses every reader of files, settings, identity, dictionaries and other tables, under any alias', () => {
    const readers = [
      'file',
      'getSetting',
      'getServerSetting',
      'hostName',
      'currentUser',
      'currentDatabase',
      'version',
      'dictGet',
      'dictGetString',
      'joinGet',
      'hasColumnInTable',
      'sleep',
      'sleepEachRow',
      'getMacro',
      'filesystemAvailable',
      'serverUUID',
      'queryID',
      'initialQueryID',
      'addressToSymbol',
      'logTrace',
      'generateSerialID',
      'aiGenerate',
      'formatRow',
      'getClientHTTPHeader',
    ];
    for (const name of readers) expect(policy.judge(name).allowed, name).toBe(false);
    // Aliases resolve to what they name: DATABASE() is currentDatabase(), user() is currentUser().
    const aliasesOfDenied = catalog.filter((f) => f.alias_to !== '' && DENIED_FUNCTIONS.has(f.alias_to));
    expect(aliasesOfDenied.length).toBeGreaterThan(0);
    for (const a of aliasesOfDenied) expect(policy.judge(a.name).allowed, a.name).toBe(false);
  });

  it('resolves case-insensitive names and aggregate combinators to their base function', () => {
    expect(policy.judge('COUNT')).toEqual({ allowed: true, canonical: 'count' });
    expect(policy.judge('sumIf')).toEqual({ allowed: true, canonical: 'sum' });
    expect(policy.judge('uniqExactArrayStateIf')).toMatchObject({ allowed: true, canonical: 'uniqExact' });
    expect(policy.judge('quantilesTDigestMerge')).toMatchObject({ allowed: true });
    // A combinator on a function that is not an aggregate, or on a denied one, stays refused.
    expect(policy.judge('fileIf').allowed).toBe(false);
    expect(policy.judge('hostNameOrNull').allowed).toBe(false);
    // Names the engine is case-sensitive about are judged exactly as the engine would call them.
    expect(policy.judge('FILE').allowed).toBe(false);
    expect(policy.judge('noSuchFunction').allowed).toBe(false);
  });
});
