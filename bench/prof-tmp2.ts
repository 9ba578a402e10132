import { startBenchServices } from './bench-server.ts';
import { freshBodies } from './ingest-support.ts';
const services = await startBenchServices();
const { wh } = services;
const body = await freshBodies(wh, 3)();
console.log(body.split('\n')[0]);
for (const q of process.argv.slice(2)) console.log(await wh.queryText(q, 'TSV'));
await services.cleanup();
