// The operator's view of the x402 plan: revenue and calls per payer (GET /admin/x402/payers,
// behind the operator token like every /admin route). The calls themselves, with their cost
// and errors, are in the usage of the key id "x402:<payer>" (GET /admin/keys/.../usage).
import type { FastifyInstance } from 'fastify';
import { AppError, Errors } from '../../../core/errors.ts';
import type { Warehouse } from '../../../warehouse/warehouse.ts';
import { X402PaymentStore } from '../../../warehouse/x402-payment-store.ts';
import { OPERATOR_REPORT_DEFAULT_DAYS } from '../../../core/limits/access.ts';

const DAY_MS = 86_400_000;

function instant(v: unknown, def: number, name: string): number {
  if (v === undefined || v === '') return def;
  const ms = Date.parse(String(v));
  if (!Number.isFinite(ms)) throw new AppError(Errors.invalidParams, `${name} must be an ISO 8601 date or time`, { field: name });
  return ms;
}

export async function x402AdminRoutes(app: FastifyInstance, opts: { wh: Warehouse }): Promise<void> {
  const store = new X402PaymentStore(opts.wh);
  app.get<{ Querystring: { from?: string; to?: string } }>('/admin/x402/payers', async (req) => {
    const to = instant(req.query.to, Date.now() + 1, 'to');
    const from = instant(req.query.from, to - OPERATOR_REPORT_DEFAULT_DAYS * DAY_MS, 'from');
    return { from: new Date(from).toISOString(), to: new Date(to).toISOString(), data: await store.perPayer(from, to) };
  });
}
