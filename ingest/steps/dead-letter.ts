// The dead-letter sink: records a step refused, with their code, reason, where they came
// from and their text, kept in the dead-letter table (and reported to the caller).
import { INGEST_DEAD_LETTER_PAYLOAD_CHARS } from '../../core/limits/ingest.ts';
import type { Logger } from '../../core/logger.ts';
import { TABLES } from '../../warehouse/tables.ts';
import type { Warehouse } from '../../warehouse/warehouse.ts';
import { positionText, type Rejection, type RejectionCode } from '../rejection.ts';
import { recordText } from './parse.ts';
import type { RawRecord } from './records.ts';
import type { StepSink } from './step.ts';

type Dead = Rejection & { payload: string };

/** One ingest call's refused records. */
export class DeadLetters implements Pick<StepSink<RawRecord>, 'deadLetter'> {
  private readonly dead: Dead[] = [];

  get count(): number {
    return this.dead.length;
  }

  deadLetter(rec: RawRecord, code: RejectionCode, reason: string): void {
    this.dead.push({ code, detail: reason, position: rec.position, payload: payloadOf(rec.value, code) });
  }

  /** Refused records by code (the dead-letter metric). */
  countsByCode(): Map<RejectionCode, number> {
    const out = new Map<RejectionCode, number>();
    for (const d of this.dead) out.set(d.code, (out.get(d.code) ?? 0) + 1);
    return out;
  }

  /** What the caller is told: the payloads stay in the table. */
  rejections(): Rejection[] {
    return this.dead.map(({ code, detail, position }) => ({ code, detail, position }));
  }

  /** Keep the refused records in the dead-letter table; a failed write is logged, never thrown. */
  async write(wh: Warehouse, source: string, log: Logger): Promise<void> {
    if (this.dead.length === 0) return;
    try {
      await wh.insert(
        TABLES.deadLetters,
        this.dead.map((d) => ({ source, position: positionText(d.position), code: d.code, reason: d.detail, payload: d.payload })),
        {
          columns: ['source', 'position', 'code', 'reason', 'payload'],
        },
      );
    } catch (err) {
      // The rejection is still reported to the caller; losing the copy is logged loudly.
      log.error({ err, count: this.dead.length, source }, 'dead-letter write failed');
    }
  }
}

/** What the dead-letter table keeps of a refused record: its text (the first 4 KiB of an oversized one). */
function payloadOf(value: RawRecord['value'], code: RejectionCode): string {
  if (typeof value === 'string' || value instanceof Uint8Array) {
    const text = recordText(value);
    return code === 'oversized' ? text.slice(0, INGEST_DEAD_LETTER_PAYLOAD_CHARS) : text;
  }
  return JSON.stringify(value);
}
