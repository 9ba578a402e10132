// The shipped Grafana board says why its Kafka panels are empty when no Kafka consumer runs
// (embedded mode without KAFKA_BROKERS), instead of leaving a reader with blank graphs.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../core/metrics.ts';

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { y: number };
  targets?: { expr?: string }[];
  fieldConfig?: { defaults?: { noValue?: string } };
  options?: { content?: string };
}
const board = JSON.parse(readFileSync(path.join(import.meta.dirname, '..', '..', 'deploy/grafana/dashboards/tx-analytics.json'), 'utf8')) as {
  panels: Panel[];
};

describe('Grafana board', () => {
  it('notes under the Kafka row why its panels can be empty, and each Kafka panel says so when it has no value', () => {
    const row = board.panels.findIndex((p) => p.type === 'row' && p.title === 'Kafka ingest');
    const note = board.panels[row + 1]!;
    expect(note.type).toBe('text');
    expect(note.options?.content).toMatch(/KAFKA_BROKERS/);
    expect(note.options?.content).toMatch(/embedded mode/);
    const kafka = board.panels.filter((p) => (p.targets ?? []).some((t) => (t.expr ?? '').includes('txa_ingest_kafka')));
    expect(kafka.length).toBeGreaterThan(3);
    for (const p of kafka) expect(p.fieldConfig?.defaults?.noValue, p.title).toMatch(/KAFKA_BROKERS unset/);
    expect(new Set(board.panels.map((p) => p.id)).size).toBe(board.panels.length);
  });

  it('shows the ingest pipeline of every source: freshness by lane, time per stage, dead letters by code, backfill progress, batch size', async () => {
    const row = board.panels.findIndex((p) => p.type === 'row' && p.title === 'Ingest pipeline (every source)');
    expect(row).toBeGreaterThan(0);
    const exprs = board.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr ?? ''));
    for (const series of [
      'txa_ingest_freshness_seconds_bucket',
      'txa_ingest_stage_seconds_bucket',
      'txa_ingest_dead_letters_total',
      'txa_ingest_backfill_done_records',
      'txa_ingest_backfill_total_records',
      'txa_ingest_batch_rows_bucket',
    ]) {
      expect(
        exprs.some((e) => e.includes(series)),
        series,
      ).toBe(true);
    }
    // Every series the board names is one the process exports (a renamed metric would leave a blank panel).
    const exported = new Set((await new Metrics().registry.getMetricsAsJSON()).map((m) => m.name));
    for (const name of new Set(exprs.flatMap((e) => e.match(/txa_[a-z_]+/g) ?? []))) {
      expect(exported.has(name.replace(/_(bucket|sum|count)$/, '')), name).toBe(true);
    }
  });
});
