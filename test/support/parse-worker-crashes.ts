// A parse worker that says it is ready, then dies on its first chunk
// (test/engine/ingest-parse-workers.test.ts): the pipeline must parse that chunk itself.
import { parentPort } from 'node:worker_threads';

parentPort!.on('message', () => process.exit(3));
parentPort!.postMessage({ ready: true });
