import { writeFileSync } from 'node:fs';
import { startAppWithData } from './test/support/services.ts';
const { t, headers } = await startAppWithData(2000);
const url = await t.app.listen({ port: 0, host: '127.0.0.1' });
writeFileSync('/tmp/mcp-serve.json', JSON.stringify({ url, key: headers['x-api-key'] }));
setTimeout(async () => { await t.cleanup(); process.exit(0); }, 240_000);
