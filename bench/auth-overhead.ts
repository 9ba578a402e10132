// What authentication + rate limiting cost per request: autocannon against one cached
// endpoint served three ways in the same run, on the same engine and machine:
//   baseline  request metrics only, no access control
//   memory    + access control, in-process rate-limit store
//   redis     + access control, Redis rate-limit store (a redis-server started here)
//
//   npm run bench:auth -- [--seconds 3] [--connections 10] [--rounds 2]
//
// The cases run interleaved, --rounds times, and each reports its best round: on a shared
// machine a neighbour's burst then hits all cases alike instead of one of them.
//
// The limiter's clock runs 1000x fast so windows turn over every 60 ms: every request
// still pays for a real key lookup and counter increment, but the enterprise limit
// (2000/min) is never reached, so all answers are 200s and the cases compare like for like.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { installAccessControl } from '../api/services/access/access-control.ts';
import { keyed } from '../api/services/access/route-policy.ts';
import { installAnswerEdge } from '../api/services/answers/answer-edge.ts';
import { createAccess, type Access } from '../api/services/access/access.ts';
import { Metrics } from '../core/metrics.ts';
import { installRequestMetrics } from '../api/services/access/request-metrics.ts';
import { createServices, type Services } from '../api/server/services.ts';
import { loadConfig } from '../core/config/load-config.ts';
import { createLogger } from '../core/logger.ts';
import { startRedisServer } from '../scripts/daemons/redis-server.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '2' },
  },
});
const rounds = Math.max(1, Number(values.rounds));
const seconds = Number(values.seconds);
const connections = Number(values.connections);

const fastClock = (): number => Date.now() * 1000;
const ROUTE = '/api/v1/__bench';

/** The app under test: the same route and the same hooks buildApp() installs, in order. */
async function benchApp(services: Services, metrics: Metrics, access: Access | undefined): Promise<FastifyInstance> {
  const app = Fastify({ loggerInstance: services.logger as FastifyBaseLogger, genReqId: () => crypto.randomUUID() });
  installRequestMetrics(app, metrics);
  // Its answer-edge step too (X-RateLimit-*, the in-flight slot), as buildApp's edge runs it.
  if (access) installAnswerEdge(app, [installAccessControl(app, access)]);
  // A cached aggregate: the first call computes it in the engine, later ones hit the cache.
  // Declared as a REST route is (api/doors/rest/rest-api.ts): keyed, the REST door, an in-flight slot.
  app.get(ROUTE, { config: keyed('rest', 'rest') }, async () => services.operatorAnalytics.topProtocols({}, 'transactions', 10));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return app;
}

interface Row {
  case: string;
  reqPerSec: number;
  p50ms: number;
  p99ms: number;
  non2xx: number;
}

async function measure(name: string, app: FastifyInstance, headers: Record<string, string>): Promise<Row> {
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
  const url = `http://127.0.0.1:${port}${ROUTE}`;
  // Warm-up: JIT, key cache, result cache.
  await autocannon({ url, connections, duration: 1, headers });
  const r = await autocannon({ url, connections, duration: seconds, headers });
  return { case: name, reqPerSec: Math.round(r.requests.average), p50ms: r.latency.p50, p99ms: r.latency.p99, non2xx: r.non2xx };
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'txa-bench-'));
  const redis = await startRedisServer();
  const config = loadConfig({ DATA_DIR: dataDir, DEMO_ROWS: '0', LOG_LEVEL: 'silent', ADMIN_TOKEN: 'bench-admin-token-0123456789' });
  const services = await createServices(config, createLogger('silent'), { now: fastClock });
  const { secret } = await services.access.keys.create('bench', 'enterprise').then((k) => ({ secret: k.secret }));
  const redisAccess = await createAccess({
    config: { ...config, redisUrl: redis.url },
    wh: services.wh,
    logger: services.logger,
    metrics: new Metrics(),
    now: fastClock,
  });
  const apps: FastifyInstance[] = [];
  const rows: Row[] = [];
  try {
    const baseline = await benchApp(services, new Metrics(), undefined);
    const memory = await benchApp(services, services.metrics, services.access);
    const shared = await benchApp(services, redisAccess.metrics, redisAccess);
    apps.push(baseline, memory, shared);
    const auth = { 'x-api-key': secret };
    const cases: [string, FastifyInstance, Record<string, string>][] = [
      ['baseline (no access control)', baseline, {}],
      ['auth + rate limit, in-process store', memory, auth],
      ['auth + rate limit, Redis store', shared, auth],
    ];
    for (let round = 0; round < rounds; round++) {
      for (const [i, [name, app, headers]] of cases.entries()) {
        const r = await measure(name, app, headers);
        if (rows[i] === undefined || r.reqPerSec > rows[i]!.reqPerSec) rows[i] = r;
      }
    }
  } finally {
    for (const a of apps) await a.close();
    await redisAccess.close();
    await services.close();
    await redis.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const base = rows[0]!.reqPerSec;
  process.stdout.write(
    `auth overhead: best of ${rounds} rounds of ${seconds}s per case, ${connections} connections, node ${process.version}, ` +
      `load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}\n\n`,
  );
  process.stdout.write('| case | req/s | vs baseline | p50 ms | p99 ms | non-2xx |\n|---|---|---|---|---|---|\n');
  for (const r of rows) {
    const rel = base > 0 ? `${((r.reqPerSec / base) * 100).toFixed(0)}%` : '-';
    process.stdout.write(`| ${r.case} | ${r.reqPerSec} | ${rel} | ${r.p50ms} | ${r.p99ms} | ${r.non2xx} |\n`);
  }
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
