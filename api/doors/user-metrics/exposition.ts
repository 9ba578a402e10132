// The Prometheus text exposition format (version 0.0.4) of the protocol figures: HELP and
// TYPE once per family, label values escaped (backslash, double quote, line feed), one
// sample per line. Metric names and help texts are documented in docs/user-metrics.md.
// Fee and compute-unit percentiles are summaries, as Prometheus defines them (its `quantile`
// label is reserved for summaries; `promtool check metrics` passes): quantiles over a sliding
// window (here each `window`), `_sum` and `_count` over every observation (all stored records).
import type { MetricsSeries } from '../../analytics/presets/protocol-metrics.ts';
import type { FreshnessFigures } from '../../services/freshness.ts';

export const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const QUANTILES = ['0.5', '0.95', '0.99'] as const;

const escapeLabel = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const labels = (l: Record<string, string | undefined>): string =>
  `{${Object.entries(l)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}="${escapeLabel(v!)}"`)
    .join(',')}}`;
const value = (n: number): string => (Number.isFinite(n) ? String(n) : Number.isNaN(n) ? 'NaN' : n > 0 ? '+Inf' : '-Inf');

interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'summary';
  help: string;
  samples: string[];
}

/** One summary's samples: its quantiles (none for a window without records), then `_sum` and `_count`. */
function summary(f: Family, l: Record<string, string | undefined>, quantiles: readonly number[] | null, sum: number, count: number): void {
  if (quantiles !== null) f.samples.push(...QUANTILES.map((q, i) => `${f.name}${labels({ ...l, quantile: q })} ${value(quantiles[i]!)}`));
  f.samples.push(`${f.name}_sum${labels(l)} ${value(sum)}`, `${f.name}_count${labels(l)} ${value(count)}`);
}

export function exposition(series: readonly MetricsSeries[], freshness: (protocol: string) => FreshnessFigures, now: number): string {
  const family = (name: string, type: Family['type'], help: string): Family => ({ name, type, help, samples: [] });
  const f = {
    tx: family('txa_protocol_transactions_total', 'counter', 'Instruction records stored, all time'),
    failed: family('txa_protocol_failed_transactions_total', 'counter', 'Failed instruction records stored, all time'),
    fees: family('txa_protocol_fees_lamports_total', 'counter', 'Fees of the stored records in lamports, all time'),
    cu: family('txa_protocol_compute_units_total', 'counter', 'Compute units of the stored records, all time'),
    wTx: family('txa_protocol_window_transactions', 'gauge', 'Records with a block time in the window ending now'),
    wFailed: family('txa_protocol_window_failed_transactions', 'gauge', 'Failed records with a block time in the window ending now'),
    ratio: family('txa_protocol_success_ratio', 'gauge', 'Successful over all records in the window (0-1); absent for a window without records'),
    fee: family(
      'txa_protocol_fee_lamports',
      'summary',
      'Fee per record, lamports: quantiles (t-digest) in the window, absent for a window without records; _sum and _count over all stored records',
    ),
    wCu: family(
      'txa_protocol_compute_units',
      'summary',
      'Compute units per record: quantiles (t-digest) in the window, absent for a window without records; _sum and _count over all stored records',
    ),
    newest: family('txa_protocol_newest_block_time_seconds', 'gauge', 'Newest stored block time, Unix seconds'),
    ingested: family('txa_protocol_ingested_at_seconds', 'gauge', 'When records of the protocol last arrived, Unix seconds'),
    age: family('txa_protocol_data_age_seconds', 'gauge', 'Seconds between now and the newest stored block time'),
  };
  const freshOnce = new Set<string>();
  for (const s of series) {
    const base = { protocol: s.protocol, instruction_type: s.instructionType };
    const l = labels(base);
    f.tx.samples.push(`${f.tx.name}${l} ${value(s.total.count)}`);
    f.failed.samples.push(`${f.failed.name}${l} ${value(s.total.failed)}`);
    f.fees.samples.push(`${f.fees.name}${l} ${value(s.total.fees)}`);
    f.cu.samples.push(`${f.cu.name}${l} ${value(s.total.computeUnits)}`);
    for (const [window, w] of Object.entries(s.windows)) {
      const wl = labels({ ...base, window });
      f.wTx.samples.push(`${f.wTx.name}${wl} ${value(w.count)}`);
      f.wFailed.samples.push(`${f.wFailed.name}${wl} ${value(w.failed)}`);
      if (w.successRatio !== null) f.ratio.samples.push(`${f.ratio.name}${wl} ${value(w.successRatio)}`);
      summary(f.fee, { ...base, window }, w.fee, s.total.fees, s.total.count);
      summary(f.wCu, { ...base, window }, w.computeUnits, s.total.computeUnits, s.total.count);
    }
    // Freshness is per protocol: once, whatever the instruction types.
    if (freshOnce.has(s.protocol)) continue;
    freshOnce.add(s.protocol);
    const fr = freshness(s.protocol);
    const pl = labels({ protocol: s.protocol });
    if (fr.newestBlockTime !== null) {
      f.newest.samples.push(`${f.newest.name}${pl} ${value(fr.newestBlockTime)}`);
      f.age.samples.push(`${f.age.name}${pl} ${value(Math.max(0, now - fr.newestBlockTime))}`);
    }
    if (fr.ingestedAtMs !== null) f.ingested.samples.push(`${f.ingested.name}${pl} ${value(fr.ingestedAtMs / 1000)}`);
  }
  return Object.values(f)
    .map((x) => `# HELP ${x.name} ${x.help}\n# TYPE ${x.name} ${x.type}\n${x.samples.map((s) => `${s}\n`).join('')}`)
    .join('');
}
