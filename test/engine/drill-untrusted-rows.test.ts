// Fault drill: rows the service cannot trust in the key table and the protocol registry
// (written by hand, by another version, or damaged). Promise: the process starts, says at
// start-up which rows and what it does about each, fails closed on them (the key is refused,
// the protocol is left out), counts them on /health, and everything else keeps working.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../api/server/app.ts';
import { createServices, type Services } from '../../api/server/services.ts';
import { createLogger } from '../../core/logger.ts';
import { TABLES } from '../../warehouse/tables.ts';
import { createKey } from '../support/api-key.ts';
import { captureLog } from '../support/log-capture.ts';
import { testConfig } from '../support/services.ts';

const config = testConfig();
let services: Services;
let app: FastifyInstance;
let goodKey: string;
let badKey: string;
const log = captureLog('warn');

beforeAll(async () => {
  // A first start creates the schema and two keys; then rows are damaged behind its back.
  const first = await createServices(config, createLogger('silent'));
  const firstApp = await buildApp(first);
  goodKey = (await createKey(firstApp, 'free', 'good')).key;
  const bad = await createKey(firstApp, 'enterprise', 'bad');
  badKey = bad.key;
  await firstApp.close();
  await first.wh.exec(`ALTER TABLE ${TABLES.apiKeys} UPDATE plan = 'gold' WHERE id = {id:String}`, { params: { id: bad.id }, settings: { mutations_sync: 1 } });
  await first.wh.insert(TABLES.protocols, [{ protocol_name: 'Bad Name!', program_id: 'not base58 0OIl', active: 1, updated_at: '2026-01-01 00:00:00.000' }]);
  await first.close();
  // The second start reads them.
  services = await createServices(config, log.logger);
  app = await buildApp(services);
}, 120_000);
afterAll(async () => {
  await app?.close();
  await services?.close();
});

const rpc = (key: string) =>
  app.inject({
    method: 'POST',
    url: '/v1/rpc',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    payload: { jsonrpc: '2.0', id: 1, method: 'getProtocols', params: [] },
  });

it('starts and names each untrusted row and what it does about it', () => {
  const lines = log
    .text()
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { msg: string; table?: string });
  const msgs = lines.filter((l) => l.msg.startsWith('untrusted row')).map((l) => l.msg);
  expect(msgs).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/api_keys: plan "gold" is not a plan; the key is refused/),
      expect.stringMatching(/protocols: the name is not a lowercase snake_case protocol name; left out of the registry/),
    ]),
  );
});

it('fails closed on them: the key answers 403, the protocol is not offered', async () => {
  expect((await rpc(badKey)).statusCode).toBe(403);
  const ok = await rpc(goodKey);
  expect(ok.statusCode).toBe(200);
  expect(ok.json().result).not.toContain('Bad Name!');
  expect(ok.json().result).toContain('jupiter_v6');
});

it('counts them on /health without naming them, and stays healthy', async () => {
  const res = await app.inject({ method: 'GET', url: '/health' });
  expect(res.statusCode).toBe(200);
  expect(res.json().checks.integrity).toEqual({ ok: true, untrustedRows: 2 });
  expect(res.body).not.toContain('Bad Name');
});
