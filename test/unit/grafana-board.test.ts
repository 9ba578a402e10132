// The shipped Grafana board says why its Kafka panels are empty when no Kafka consumer runs
// (embedded mode without KAFKA_BROKERS), instead of leaving a reader with blank graphs.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

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
});
