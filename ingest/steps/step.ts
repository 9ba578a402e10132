// The contract every ingest step keeps (after PostHog's ingestion pipeline): a step does one
// thing to a record and answers with a result, never by throwing for the record's sake:
//  - ok: the value goes on to the next step;
//  - drop: the record is valid but changes nothing (a duplicate); counted with its code;
//  - dead-letter: the record is refused; its code and reason go to the dead-letter sink
//    (ingest/steps/dead-letter.ts) and back to the caller.
// A step throws only when it cannot do its work at all (the store is down, the disk is
// full): that stops the call, and its source retries; de-duplication makes a retry safe.
// Codes are stable machine codes (metric labels, the Kafka dead-letter kind header, what a
// client branches on): rejection codes in ingest/rejection.ts, drop codes here.
import type { RejectionCode } from '../rejection.ts';

export const DROP_CODES = [
  /** The same identity (signature, instruction_index) earlier in the same batch. */
  'duplicate_in_batch',
  /** The identity is already in the store. */
  'already_stored',
  /** Sent without transaction_index to a slot whose counter is used up (65,536 transactions: ingest/record-id.ts). */
  'no_position',
] as const;
export type DropCode = (typeof DROP_CODES)[number];

export type Ok<T> = { kind: 'ok'; value: T };
export type Drop = { kind: 'drop'; code: DropCode };
export type DeadLetter = { kind: 'dead-letter'; code: RejectionCode; reason: string };
export type StepResult<T> = Ok<T> | Drop | DeadLetter;
/** What a record step answers: it passes a record on or refuses it. Dropping needs the
 *  batch or the store, so it is the writer's steps' alone. */
export type RecordResult<T> = Ok<T> | DeadLetter;

export const ok = <T>(value: T): Ok<T> => ({ kind: 'ok', value });
export const drop = (code: DropCode): Drop => ({ kind: 'drop', code });
export const deadLetter = (code: RejectionCode, reason: string): DeadLetter => ({ kind: 'dead-letter', code, reason });

/** A step of the writer over a whole batch (it needs to see the others, or the store): one
 *  result per item, in the items' order. It passes a record on or drops it; refusing one
 *  belongs to the record steps, which know where the record came from. */
export type BatchStep<T> = (items: T[]) => Promise<(Ok<T> | Drop)[]> | (Ok<T> | Drop)[];

/** Where results that are not ok go: dropped records are counted with their code, refused
 *  ones go to the dead-letter sink with their code and reason. */
export interface StepSink<T> {
  drop(item: T, code: DropCode): void;
  deadLetter(item: T, code: RejectionCode, reason: string): void;
}

/** Run batch steps in order, each over what the one before passed on; returns what the last passed on. */
export async function runBatchSteps<T>(items: T[], steps: readonly BatchStep<T>[], sink: Pick<StepSink<T>, 'drop'>): Promise<T[]> {
  let next = items;
  for (const step of steps) {
    const results = await step(next);
    const passed: T[] = [];
    for (let i = 0; i < next.length; i++) {
      const r = results[i]!;
      if (r.kind === 'ok') passed.push(r.value);
      else sink.drop(next[i]!, r.code);
    }
    next = passed;
  }
  return next;
}
