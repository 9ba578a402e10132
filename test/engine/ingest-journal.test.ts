// An insert that stopped part-way (the base table committed, a view did not) is repaired
// from the journal before the next insert, so replaying its records duplicates nothing.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../../core/logger.ts';
import { IngestJournal } from '../../ingest/ingest-journal.ts';
import { IngestPipeline } from '../../ingest/pipeline.ts';
import type { IngestRecord } from '../../ingest/record-schema.ts';
import { demoRecords, ingest, tableCounts } from '../support/fixtures.ts';
import { startServices } from '../support/services.ts';

let s: Awaited<ReturnType<typeof startServices>>;
let records: IngestRecord[];

beforeAll(async () => {
  s = await startServices();
  records = await demoRecords(s, 3000, 3);
});
afterAll(async () => s.cleanup());

it('rebuilds the views of an unfinished insert, and the replay then adds nothing', async () => {
  const first = records.slice(0, 2000);
  const second = records.slice(2000);
  expect((await ingest(s, first)).rejected).toEqual([]);
  const good = await tableCounts(s);

  // Simulate a crash inside the insert of `second`: journal 'begin', base rows stored,
  // but the view rows of those records never committed.
  const journal = new IngestJournal(s.wh, s.config.ingest.writerId, createLogger('silent'));
  await journal.begin(second.map((r) => ({ protocol_name: r.protocol_name, block_time: r.block_time })));
  await ingest(s, second);
  const sigs = second.map((r) => r.signature);
  await s.wh.exec('DELETE FROM tx_rid_by_sig WHERE sig_key IN (SELECT cityHash64(arrayJoin({sigs:Array(String)})))', { params: { sigs } });
  await s.wh.exec('DELETE FROM protocol_hourly WHERE hour_start >= toDateTime({t:UInt32})', { params: { t: second[0]!.block_time } });
  const broken = await tableCounts(s);
  expect(broken.tx_rid_by_sig).toBeLessThan(broken.transactions!);

  // A fresh pipeline (the restarted process) repairs before it stores anything.
  const restarted = new IngestPipeline(s.wh, s.registry, s.dataVersion, createLogger('silent'), {
    maxRecordBytes: s.config.ingest.maxRecordBytes,
    batchRows: 700,
    writerId: s.config.ingest.writerId,
  });
  const report = await ingest({ pipeline: restarted }, records);
  expect(report.duplicates).toBe(records.length);
  const counts = await tableCounts(s);
  expect(counts.transactions).toBe(good.transactions! + second.length);
  expect(counts.tx_rid_by_sig).toBe(counts.transactions);
  expect(counts.protocol_hourly).toBe(counts.transactions);
  expect(counts.instruction_hourly).toBe(counts.transactions);
});
