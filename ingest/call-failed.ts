// What the caller of an ingest call is told when one of its writes failed.
import { AppError, Errors } from '../core/errors.ts';
import { INGEST_STORAGE_FULL_RETRY_AFTER_SECONDS } from '../core/limits/ingest.ts';
import { isStorageFull } from '../warehouse/warehouse.ts';

/** A call's write failed: a full disk is the operator's to fix, not a bug, said as such with what was kept. */
export function callFailed(err: unknown): never {
  if (isStorageFull(err)) {
    throw new AppError(
      Errors.storageFull,
      'the store is out of disk space: this write was not completed (earlier batches of it stay stored, ' +
        'and the views are repaired before the next write); send it again once space is freed',
      { cause: err, retryAfterSeconds: INGEST_STORAGE_FULL_RETRY_AFTER_SECONDS },
    );
  }
  throw err;
}
