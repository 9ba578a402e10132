// A parse worker that cannot start (test/engine/ingest-parse-workers.test.ts): its module throws.
throw new Error('this parse worker cannot start');
