// The CSV body of a client query as the HTTP layer reads it: the engine's stream on a
// sandbox slot, released exactly once however the stream ends, cut at the answer budget
// and at the time-out when a reader never finishes.
import { AppError, Errors } from '../../../core/errors.ts';
import { formatBytes, SQL_RESPONSE_BUDGET_BYTES } from '../../../core/limits/answers.ts';
import type { Warehouse } from '../../../warehouse/warehouse.ts';
import type { Lease } from './concurrency-gate.ts';

/** Bytes one SQL answer may carry (JSON body or CSV stream); defined with the other budgets. */
export const SQL_MAX_RESPONSE_BYTES = SQL_RESPONSE_BUDGET_BYTES;

/**
 * An SQL answer over its byte budget. Over `memberCap` (a batch member's reservation, smaller
 * than the door's, that stopped it: api/services/answers/answer-batch.ts) it is the batch's "larger than
 * reserved", which the batch may run again with more; otherwise the door's refusal.
 */
export function tooLarge(cause?: unknown, memberCap?: number): AppError {
  if (memberCap !== undefined) {
    return new AppError(Errors.responseTooLarge, `the answer is larger than the ${formatBytes(memberCap)} reserved for it in its batch`, { cause });
  }
  return new AppError(
    Errors.invalidQuery,
    `the answer is larger than ${SQL_MAX_RESPONSE_BYTES / 1024 / 1024} MiB, the most one SQL answer may carry: select fewer or smaller columns, aggregate, or lower the LIMIT`,
    { cause },
  );
}

/**
 * The CSV body handed to the HTTP layer. A hand-written iterator rather than a generator:
 * return() must reach the engine's stream even when the consumer gives up before reading
 * the first chunk (a generator that never started would skip its finally), and the slot is
 * released exactly when the engine's stream is done, however it ends.
 */
export function leasedStream(
  iterator: AsyncIterator<Uint8Array>,
  first: IteratorResult<Uint8Array>,
  lease: Lease<Warehouse>,
  deadlineMs: number,
  budgeted: boolean,
): AsyncIterableIterator<Uint8Array> {
  let pending: IteratorResult<Uint8Array> | undefined = first;
  let sent = 0;
  let finished = false;
  const finish = async (): Promise<void> => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    try {
      await iterator.return?.();
    } finally {
      lease.release();
    }
  };
  // A reader that never finishes must not keep the session: cut the stream at the deadline.
  const timer = setTimeout(() => void finish(), deadlineMs);
  timer.unref();
  const body: AsyncIterableIterator<Uint8Array> = {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      if (finished) return { done: true, value: undefined };
      let r: IteratorResult<Uint8Array>;
      if (pending !== undefined) {
        r = pending;
        pending = undefined;
      } else {
        try {
          r = await iterator.next();
        } catch (err) {
          await finish();
          throw err;
        }
      }
      if (r.done) {
        await finish();
        return r;
      }
      sent += r.value.byteLength;
      if (budgeted && sent > SQL_MAX_RESPONSE_BYTES) {
        // Cut, never silently short: the error ends the HTTP response abnormally.
        await finish();
        throw tooLarge();
      }
      return r;
    },
    async return() {
      pending = undefined;
      await finish();
      return { done: true, value: undefined };
    },
  };
  return body;
}
