// GET /health (no authentication): 200 when every check passes, 503 naming the one that
// failed. Checks: the engine answers, migrations are current, ingest freshness (failing
// only when HEALTH_MAX_INGEST_AGE_SECONDS is set and exceeded: demo data is old by
// design), and the shared rate-limit store when Redis is configured.
import type { FastifyInstance } from 'fastify';
import { readFreshness } from '../../../warehouse/ingest-freshness.ts';
import { checkIntegrity } from '../../../warehouse/integrity.ts';
import { migrationStatus } from '../../../warehouse/migrate.ts';
import type { Warehouse } from '../../../warehouse/warehouse.ts';
import type { RateLimitStore } from '../../services/access/rate-limit-store.ts';
import { open } from '../../services/access/route-policy.ts';

interface Check {
  ok: boolean;
  [detail: string]: unknown;
}

export interface HealthOptions {
  wh: Warehouse;
  maxIngestAgeSeconds?: number | undefined;
  rateLimitStore?: RateLimitStore;
}

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export async function healthRoutes(app: FastifyInstance, opts: HealthOptions): Promise<void> {
  app.get('/health', { config: open() }, async (_req, reply) => {
    const checks: Record<string, Check> = {};
    const t0 = Date.now();
    try {
      await opts.wh.query('SELECT 1');
      checks.engine = { ok: true, transport: opts.wh.transport, latencyMs: Date.now() - t0 };
    } catch (err) {
      checks.engine = { ok: false, transport: opts.wh.transport, error: errorText(err) };
    }
    if (checks.engine.ok) {
      try {
        const m = await migrationStatus(opts.wh);
        checks.migrations = { ok: m.applied >= m.expected, ...m };
      } catch (err) {
        checks.migrations = { ok: false, error: errorText(err) };
      }
      try {
        // Reported, never failing: the service works around untrusted rows (integrity.ts).
        // A count only: /health needs no key, and which rows they are is the operator's to
        // read (the start-up log names each).
        checks.integrity = { ok: true, untrustedRows: (await checkIntegrity(opts.wh)).length };
      } catch (err) {
        checks.integrity = { ok: true, error: errorText(err) };
      }
      try {
        const f = await readFreshness(opts.wh);
        const now = Date.now() / 1000;
        const ingestAge = f.newestIngestedAt === null ? null : Math.max(0, Math.floor(now - f.newestIngestedAt));
        const max = opts.maxIngestAgeSeconds;
        checks.ingest = {
          ok: max === undefined || (ingestAge !== null && ingestAge <= max),
          newestBlockTime: f.newestBlockTime,
          freshnessSeconds: f.newestBlockTime === null ? null : Math.max(0, Math.floor(now - f.newestBlockTime)),
          secondsSinceLastIngest: ingestAge,
          ...(max === undefined ? {} : { maxIngestAgeSeconds: max }),
        };
      } catch (err) {
        checks.ingest = { ok: false, error: errorText(err) };
      }
    }
    if (opts.rateLimitStore?.kind === 'redis') {
      try {
        await opts.rateLimitStore.ping();
        checks.rateLimitStore = { ok: true, kind: 'redis' };
      } catch (err) {
        checks.rateLimitStore = { ok: false, kind: 'redis', error: errorText(err) };
      }
    }
    const failing = Object.entries(checks).find(([, c]) => !c.ok);
    reply.code(failing ? 503 : 200);
    return { status: failing ? 'unavailable' : 'ok', ...(failing ? { failing: failing[0] } : {}), checks };
  });
}
