// What a Prometheus scraping GET /v1/metrics once a minute would store, computed from ingest
// records (the demo generator's, in test/daemons/promtool.test.ts), written as a `promtool test rules`
// file: the shipped alert rules can then be replayed over days of the demo's own shape in a
// second. The figures are the ones the rules read (the all-time counter, the window counts,
// the 5-minute success ratio, the 1-hour p95 fee) and the data's age.
import type { IngestRecord } from '../../ingest/record-schema.ts';

const MINUTE = 60;
const HOUR = 3600;
const FIVE_MINUTES = 300;

export interface Scrape {
  total: number;
  count1h: number;
  count5m: number;
  /** Absent (null) for a window without records, as the exposition leaves them out. */
  p95Fee1h: number | null;
  successRatio5m: number | null;
  /** Seconds since the newest stored block time; absent before anything is stored. */
  dataAge: number | null;
}

/** The 95th percentile with linear interpolation between the closest ranks (what a t-digest approximates). */
function p95(sorted: Float64Array): number {
  const pos = 0.95 * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/**
 * One scrape a minute from `from` to `to` (Unix seconds) for one protocol's records. `ingestedAt`
 * gives when a record was stored (the counter counts those stored by the scrape): its block time
 * for a store ingesting live, a moment before `from` for a store seeded before Prometheus started.
 */
export function scrapes(records: readonly IngestRecord[], from: number, to: number, ingestedAt: (r: IngestRecord) => number): Scrape[] {
  const byTime = [...records].sort((a, b) => a.block_time - b.block_time);
  const stored = records.map((r) => ({ at: ingestedAt(r), blockTime: r.block_time })).sort((a, b) => a.at - b.at);
  const out: Scrape[] = [];
  let lo1h = 0,
    lo5m = 0,
    hi = 0,
    storedUpTo = 0,
    newest: number | null = null;
  for (let t = from; t <= to; t += MINUTE) {
    while (hi < byTime.length && byTime[hi]!.block_time <= t) hi++;
    while (lo1h < hi && byTime[lo1h]!.block_time <= t - HOUR) lo1h++;
    while (lo5m < hi && byTime[lo5m]!.block_time <= t - FIVE_MINUTES) lo5m++;
    for (; storedUpTo < stored.length && stored[storedUpTo]!.at <= t; storedUpTo++) newest = Math.max(newest ?? 0, stored[storedUpTo]!.blockTime);
    const hour = byTime.slice(lo1h, hi);
    const five = byTime.slice(lo5m, hi);
    out.push({
      total: storedUpTo,
      count1h: hour.length,
      count5m: five.length,
      p95Fee1h: hour.length === 0 ? null : p95(Float64Array.from(hour, (r) => r.fee).sort()),
      successRatio5m: five.length === 0 ? null : five.filter((r) => r.success).length / five.length,
      dataAge: newest === null ? null : Math.max(0, t - newest),
    });
  }
  return out;
}

/** The series a scrape of each protocol stores, in promtool's input_series form. */
export function inputSeries(perProtocol: ReadonlyMap<string, readonly Scrape[]>): { series: string; values: string }[] {
  const values = (xs: readonly (number | null)[]): string => xs.map((x) => (x === null ? '_' : String(Math.round(x * 1e6) / 1e6))).join(' ');
  const out: { series: string; values: string }[] = [];
  for (const [protocol, s] of perProtocol) {
    const l = (extra: string): string => `{job="txa",instance="api",protocol="${protocol}"${extra}}`;
    out.push(
      { series: `txa_protocol_transactions_total${l('')}`, values: values(s.map((x) => x.total)) },
      { series: `txa_protocol_window_transactions${l(',window="1h"')}`, values: values(s.map((x) => x.count1h)) },
      { series: `txa_protocol_window_transactions${l(',window="5m"')}`, values: values(s.map((x) => x.count5m)) },
      { series: `txa_protocol_fee_lamports${l(',window="1h",quantile="0.95"')}`, values: values(s.map((x) => x.p95Fee1h)) },
      { series: `txa_protocol_success_ratio${l(',window="5m"')}`, values: values(s.map((x) => x.successRatio5m)) },
      { series: `txa_protocol_data_age_seconds${l('')}`, values: values(s.map((x) => x.dataAge)) },
    );
  }
  return out;
}

export interface RulesTest {
  name: string;
  series: { series: string; values: string }[];
  /** PromQL at a time (minutes from the first scrape) and the samples it must answer (labels text, value). */
  expect: { expr: string; atMinutes: number; samples: { labels: string; value: number }[] }[];
}

/** A `promtool test rules` file (JSON is YAML) of `tests` over the rules in `rulesFile`, one scrape a minute. */
export function rulesTestFile(rulesFile: string, tests: readonly RulesTest[]): string {
  return JSON.stringify({
    rule_files: [rulesFile],
    evaluation_interval: '1m',
    tests: tests.map((t) => ({
      name: t.name,
      interval: '1m',
      input_series: t.series,
      promql_expr_test: t.expect.map((e) => ({ expr: e.expr, eval_time: `${e.atMinutes}m`, exp_samples: e.samples })),
    })),
  });
}
