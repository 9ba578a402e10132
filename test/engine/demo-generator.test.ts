import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDemoRecordsArgs, USAGE } from '../../ingest/demo-records-cli.ts';
import { demoRecordsNdjson, insertDemoRows } from '../../ingest/demo-generator.ts';
import { checkRecord, protocolLookup, type IngestRecord } from '../../ingest/record-schema.ts';
import { PROTOCOL_PROFILES } from '../../ingest/protocol-profiles.ts';
import { FIXTURE_END, FIXTURE_START } from '../support/fixtures.ts';
import { startServices } from '../support/services.ts';

let s: Awaited<ReturnType<typeof startServices>>;
beforeAll(async () => {
  s = await startServices();
});
afterAll(async () => s.cleanup());

const window = (seed: number, count: number, offset = 0) => ({ seed, total: 20_000, offset, count, startTime: FIXTURE_START, endTime: FIXTURE_END });
const parse = (text: string): IngestRecord[] =>
  text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as IngestRecord);

const q = async <T>(sql: string) => (await s.wh.query<T>(sql))[0]!;

describe('demo generator', () => {
  it('is deterministic for a seed, and a slice equals the same rows of the whole', async () => {
    const a = await demoRecordsNdjson(s.wh, window(42, 2000));
    const b = await demoRecordsNdjson(s.wh, window(42, 2000));
    expect(a).toBe(b);
    const slice = await demoRecordsNdjson(s.wh, window(42, 500, 1000));
    expect(parse(slice)).toEqual(parse(a).slice(1000, 1500));
    const other = await demoRecordsNdjson(s.wh, window(43, 2000));
    expect(other).not.toBe(a);
  });

  it('writes records the ingest schema accepts', async () => {
    const known = protocolLookup(PROTOCOL_PROFILES.map((p) => ({ protocolName: p.protocol, programId: p.programId })));
    const records = parse(await demoRecordsNdjson(s.wh, window(1, 3000)));
    for (const r of records) expect(checkRecord(r, known)).toMatchObject({ ok: true });
    expect(new Set(records.map((r) => `${r.signature}#${r.instruction_index}`)).size).toBe(records.length);
  });

  it('seeds inside the engine with realistic, skewed distributions', async () => {
    await insertDemoRows(s.wh, { seed: 5, total: 200_000, offset: 0, count: 200_000, startTime: FIXTURE_START, endTime: FIXTURE_END });
    const q = async <T>(sql: string) => (await s.wh.query<T>(sql))[0]!;
    const total = Number((await q<{ n: string }>('SELECT count() n FROM transactions')).n);
    expect(total).toBe(200_000);
    // A few protocols dominate.
    const top2 = await q<{ share: number }>(
      `SELECT sum(c) / 200000 share FROM (SELECT count() c FROM transactions GROUP BY protocol_name ORDER BY c DESC LIMIT 2)`,
    );
    expect(top2.share).toBeGreaterThan(0.45);
    // Swaps dominate instruction mixes.
    const swaps = await q<{ share: number }>(
      `SELECT countIf(instruction_type ILIKE '%swap%' OR instruction_type ILIKE '%route%' OR instruction_type IN ('buy', 'sell', 'buyExactSolIn')) / count() share FROM transactions`,
    );
    expect(swaps.share).toBeGreaterThan(0.7);
    // Fees: 5000-lamport base plus a heavy-tailed priority fee.
    const fees = await q<{ mn: string; med: number; p99: number; mean: number }>(
      'SELECT min(fee) mn, median(fee) med, quantile(0.99)(fee) p99, avg(fee) mean FROM transactions',
    );
    expect(Number(fees.mn)).toBe(5000);
    expect(fees.p99 / fees.med).toBeGreaterThan(20);
    expect(fees.mean).toBeGreaterThan(fees.med);
    // A few percent fail, with program-style errors and logs.
    const fail = await q<{ rate: number; withMsg: number }>(
      `SELECT countIf(NOT success) / count() rate, countIf(NOT success AND error_message LIKE 'Program % failed: %' AND log_messages LIKE '%consumed%') / countIf(NOT success) withMsg FROM transactions`,
    );
    expect(fail.rate).toBeGreaterThan(0.02);
    expect(fail.rate).toBeLessThan(0.08);
    expect(fail.withMsg).toBe(1);
    // Compute units depend on the instruction type.
    const cu = await q<{ route: number; buy: number }>(
      `SELECT avgIf(compute_units, instruction_type = 'route' AND success) route, avgIf(compute_units, instruction_type = 'buy' AND success) buy FROM transactions`,
    );
    expect(cu.route).toBeGreaterThan(cu.buy * 2);
    // Account popularity is Zipf-like: the hottest address appears far more than the median one.
    const hot = await q<{ top: string; med: number }>(
      `SELECT max(c) top, median(c) med FROM (SELECT arrayJoin(accounts) AS address, count() c FROM transactions WHERE address NOT IN (SELECT program_id FROM protocols) GROUP BY address)`,
    );
    expect(Number(hot.top) / hot.med).toBeGreaterThan(100);
  });

  it('never logs more compute units consumed than the instruction had left ("consumed X of Y", X <= Y), over the seeded sample', async () => {
    // Reads the 200,000 rows seeded above. Y is what was left of the transaction's CU limit when
    // the instruction started: a second instruction (about one record in ten) gets the limit
    // less what the first consumed, and the limit covers both.
    const logged = await q<{ failed: string; above: string; mismatched: string; second: string; exhausted: string }>(`SELECT count() failed,
      countIf(x > y) above, countIf(x != compute_units) mismatched, countIf(instruction_index = 1) second, countIf(x = y) exhausted
      FROM (SELECT compute_units, instruction_index, toUInt64(extract(log_messages, ' consumed (\\d+) of ')) x, toUInt64(extract(log_messages, ' of (\\d+) compute units')) y
            FROM transactions WHERE NOT success)`);
    expect(Number(logged.failed)).toBeGreaterThan(5000);
    expect(Number(logged.second)).toBeGreaterThan(300);
    expect(Number(logged.exhausted), 'CU-exceeded failures consume all that is left').toBeGreaterThan(0);
    expect(Number(logged.mismatched)).toBe(0);
    expect(Number(logged.above)).toBe(0);
  });

  it('differs per protocol the way the programs do (ingest/protocol-profiles.ts), over accounts of realistic pools', async () => {
    // Reads the 200,000 rows the test above seeded.
    type P = { p: string; avg_fee: number; p95: number; cu: number; acc: number; fail: number };
    const rows = await s.wh.query<P>(`SELECT protocol_name p, avg(fee) avg_fee, quantile(0.95)(fee) p95, avgIf(compute_units, success) cu,
      avg(accounts_count) acc, countIf(NOT success) / count() fail FROM transactions GROUP BY p`);
    const of = Object.fromEntries(rows.map((r) => [r.p, r]));
    // Memecoin venues pay the highest priority fees, order books the lowest; no common level any more.
    expect(of.pump_fun!.avg_fee).toBeGreaterThan(of.jupiter_v6!.avg_fee * 2);
    expect(of.jupiter_v6!.avg_fee).toBeGreaterThan(of.whirlpool!.avg_fee * 3);
    expect(of.phoenix_v1!.p95).toBeLessThan(of.pump_fun!.p95 / 50);
    // Aggregator routes cost most CU and touch most accounts; the classic Raydium AMM swap is cheapest of the AMMs.
    expect(of.jupiter_v6!.cu).toBeGreaterThan(of.whirlpool!.cu * 2);
    expect(of.raydium_amm_v4!.cu).toBeLessThan(of.whirlpool!.cu);
    expect(of.jupiter_v6!.acc).toBeGreaterThan(of.whirlpool!.acc * 1.8);
    expect(of.pump_fun!.fail).toBeGreaterThan(of.whirlpool!.fail * 2);
    // The fee is the transaction's: 5,000 lamports per signature plus the priority fee, the same on each of its instructions.
    const tx = await q<{ split: string; below: string }>(`SELECT countIf(fees > 1 OR outcomes > 1) split, (SELECT countIf(fee < 5000) FROM transactions) below
      FROM (SELECT signature, uniqExact(fee) fees, uniqExact(success) outcomes FROM transactions GROUP BY signature)`);
    expect(Number(tx.split)).toBe(0);
    expect(Number(tx.below)).toBe(0);
    // Every record names the token program (classic or 2022); wrapped SOL is in most; pump.fun mints end in "pump".
    const acc = await q<{ tokenProgram: number; wsol: number; pumpMint: number }>(`SELECT
      countIf(has(accounts, 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA') OR has(accounts, 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb')) / count() tokenProgram,
      countIf(has(accounts, 'So11111111111111111111111111111111111111112')) / count() wsol,
      countIf(protocol_name = 'pump_fun' AND arrayExists(a -> endsWith(a, 'pump'), accounts)) / countIf(protocol_name = 'pump_fun') pumpMint FROM transactions`);
    expect(acc.tokenProgram).toBe(1);
    expect(acc.wsol).toBeGreaterThan(0.6);
    expect(acc.pumpMint).toBe(1);
  });
});

describe('npm run demo-records', () => {
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'ingest/demo-records-cli.ts', ...args], { cwd: new URL('../..', import.meta.url), encoding: 'utf8' });

  it('--help prints the usage and exits 0, writing no record', () => {
    for (const flag of ['--help', '-h']) {
      const r = cli(flag);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toBe(`${USAGE}\n`);
      expect(r.stdout).not.toMatch(/^\{/m);
    }
  });

  it('refuses an unknown or malformed flag with the usage on stderr (exit 2), writing no record', () => {
    for (const args of [['--cuont', '5'], ['--count', 'x'], ['--count', '0'], ['stray']]) {
      const r = cli(...args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stdout, args.join(' ')).toBe('');
      expect(r.stderr).toMatch(/^demo-records: .+\n\nusage: /);
    }
  });

  it('parses the flags, with the defaults the usage names', () => {
    expect(parseDemoRecordsArgs(['--count', '5', '--seed', '0', '--days', '2', '--end', '1735689600'])).toEqual({
      help: false,
      flags: { count: 5, seed: 0, days: 2, end: 1_735_689_600 },
    });
    expect(parseDemoRecordsArgs([], Date.UTC(2025, 0, 1, 12, 34))).toEqual({
      help: false,
      flags: { count: 1000, seed: 7, days: 30, end: Date.UTC(2025, 0, 1, 12) / 1000 },
    });
    expect(parseDemoRecordsArgs(['--count', '3', '--help'])).toEqual({ help: true });
  });
});
