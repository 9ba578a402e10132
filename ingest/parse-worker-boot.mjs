// Starts a parse worker (ingest/parse-pool.ts). A worker thread does not inherit tsx's
// loader from `npx tsx` (nor vitest's transform): when the worker's module is TypeScript,
// tsx's loader is registered in this thread first. Any failure is reported to the pool,
// which then parses on the main thread.
import { parentPort, workerData } from 'node:worker_threads';

try {
  if (workerData.typescript) (await import('tsx/esm/api')).register();
  await import(workerData.entry);
} catch (err) {
  parentPort.postMessage({ failed: String((err && err.stack) || err) });
}
