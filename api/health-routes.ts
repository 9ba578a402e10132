// GET /health (no authentication): 200 when every check passes, 503 naming the one that failed.
import type { FastifyInstance } from 'fastify';
import { migrationStatus } from '../views/migrate.ts';
import type { Warehouse } from '../views/warehouse.ts';

interface Check {
  ok: boolean;
  [detail: string]: unknown;
}

export async function healthRoutes(app: FastifyInstance, opts: { wh: Warehouse }): Promise<void> {
  app.get('/health', async (_req, reply) => {
    const checks: Record<string, Check> = {};
    const t0 = Date.now();
    try {
      await opts.wh.query('SELECT 1');
      checks.engine = { ok: true, transport: opts.wh.transport, latencyMs: Date.now() - t0 };
    } catch (err) {
      checks.engine = { ok: false, transport: opts.wh.transport, error: (err as Error).message };
    }
    if (checks.engine.ok) {
      try {
        const m = await migrationStatus(opts.wh);
        checks.migrations = { ok: m.applied >= m.expected, ...m };
      } catch (err) {
        checks.migrations = { ok: false, error: (err as Error).message };
      }
      try {
        const [row] = await opts.wh.query<{ newest: number }>('SELECT toUInt32(max(last_seen)) AS newest FROM protocol_hourly');
        const newest = Number(row?.newest ?? 0);
        checks.ingest = { ok: true, newestBlockTime: newest || null, freshnessSeconds: newest ? Math.max(0, Math.floor(Date.now() / 1000) - newest) : null };
      } catch (err) {
        checks.ingest = { ok: false, error: (err as Error).message };
      }
    }
    const failing = Object.entries(checks).find(([, c]) => !c.ok);
    reply.code(failing ? 503 : 200);
    return { status: failing ? 'unavailable' : 'ok', ...(failing ? { failing: failing[0] } : {}), checks };
  });
}
