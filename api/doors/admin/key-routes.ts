// Operator API for API keys and their usage (DESIGN.md section 4), behind the admin token.
// The secret appears in exactly one answer: the 201 of POST /admin/keys.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, Errors, invalidParams, notFound } from '../../../core/errors.ts';
import { OPERATOR_KEY_NAME_MAX_LENGTH } from '../../../core/limits/access.ts';
import { MAX_BLOCK_DATE, MAX_BLOCK_TIME, MIN_BLOCK_DATE, MIN_BLOCK_TIME } from '../../../core/limits/questions.ts';
import { isPlan, PLANS, type Plan } from '../../../core/plans.ts';
import { isKeyStatus, KEY_STATUSES, RevokedKeyError, type ApiKeyRecord, type KeyStatus } from '../../../warehouse/api-key-store.ts';
import type { Access } from '../../services/access/access.ts';
import { USAGE_RANGE_END_SLACK_MS } from '../../../core/limits/dashboard.ts';

const DAY_MS = 86_400_000;
const GRANULARITIES = ['minute', 'hour', 'day'] as const;
type Granularity = (typeof GRANULARITIES)[number];

const publicKey = (r: ApiKeyRecord, lastUsedAt: string | null) => ({
  id: r.id,
  name: r.name,
  plan: r.plan,
  status: r.status,
  keyPrefix: r.keyPrefix,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
  lastUsedAt,
});

function parseTime(value: unknown, field: string, fallback: number): number {
  if (value === undefined) return fallback;
  const ms = typeof value === 'string' ? Date.parse(value) : NaN;
  if (Number.isNaN(ms)) throw invalidParams(`${field} must be an ISO 8601 date or time`, field);
  // Usage is stored per minute as a DateTime (1970-01-01 .. 2106-02-07): a time outside it
  // cannot match anything, and the engine would refuse to parse it (a 500 before).
  if (ms < MIN_BLOCK_TIME * 1000 || ms > MAX_BLOCK_TIME * 1000) {
    throw invalidParams(`${field} must lie between ${MIN_BLOCK_DATE} and ${MAX_BLOCK_DATE}`, field);
  }
  return ms;
}

interface UsageQuerystring {
  from?: string;
  to?: string;
  granularity?: string;
}

/** The range and granularity of a usage query: a day up to now unless given. */
function usageRange(q: UsageQuerystring): { fromMs: number; toMs: number; granularity: Granularity } {
  const toMs = parseTime(q.to, 'to', Date.now() + USAGE_RANGE_END_SLACK_MS);
  const fromMs = parseTime(q.from, 'from', toMs - DAY_MS);
  const granularity = q.granularity ?? 'hour';
  if (!(GRANULARITIES as readonly string[]).includes(granularity)) {
    throw invalidParams(`granularity must be one of ${GRANULARITIES.join(', ')}`, 'granularity');
  }
  if (fromMs >= toMs) throw invalidParams('from must be before to', 'from');
  return { fromMs, toMs, granularity: granularity as Granularity };
}

/** The change a PATCH /admin/keys/:id asks for: a status, a plan, or both. */
function keyUpdateOf(body: { status?: unknown; plan?: unknown }): { status?: KeyStatus; plan?: Plan } {
  const update: { status?: KeyStatus; plan?: Plan } = {};
  if (body.status !== undefined) {
    if (!isKeyStatus(body.status)) throw invalidParams(`status must be one of ${KEY_STATUSES.join(', ')}`, 'status');
    update.status = body.status;
  }
  if (body.plan !== undefined) {
    if (!isPlan(body.plan)) throw invalidParams(`plan must be one of ${PLANS.join(', ')}`, 'plan');
    update.plan = body.plan;
  }
  if (update.status === undefined && update.plan === undefined) {
    throw invalidParams('body must carry "status" and/or "plan"');
  }
  return update;
}

export async function keyRoutes(app: FastifyInstance, opts: { access: Access }): Promise<void> {
  const { access } = opts;

  app.post<{ Body: { name?: unknown; plan?: unknown } }>('/admin/keys', async (req, reply) => {
    const name = req.body?.name;
    const plan = req.body?.plan;
    if (typeof name !== 'string' || name.trim() === '' || name.length > OPERATOR_KEY_NAME_MAX_LENGTH) {
      throw invalidParams(`name must be a non-empty string of at most ${OPERATOR_KEY_NAME_MAX_LENGTH} characters`, 'name');
    }
    if (!isPlan(plan)) throw invalidParams(`plan must be one of ${PLANS.join(', ')}`, 'plan');
    const { record, secret } = await access.keys.create(name.trim(), plan);
    // Every process's key snapshot must learn the new key (here at once; elsewhere via
    // Redis or within the snapshot's lifetime).
    await access.keyChanged(record.id);
    // An audit trail of operator actions; never the secret.
    req.log.info({ keyId: record.id, keyName: record.name, plan: record.plan }, 'api key created');
    reply.code(201);
    return { id: record.id, key: secret, name: record.name, plan: record.plan, status: record.status, createdAt: record.createdAt };
  });

  app.get('/admin/keys', async () => {
    const [keys, lastUsed] = await Promise.all([access.keys.list(), access.usageStore.lastUsed()]);
    return { data: keys.map((k) => publicKey(k, lastUsed.get(k.id) ?? null)) };
  });

  app.get<{ Params: { id: string } }>('/admin/keys/:id', async (req) => {
    const key = await access.keys.get(req.params.id);
    if (!key) throw notFound(`no API key with id "${req.params.id}"`);
    return publicKey(key, await access.usageStore.lastUsedOf(key.id));
  });

  const change = async (req: FastifyRequest, id: string, update: { status?: KeyStatus; plan?: Plan }) => {
    let updated: ApiKeyRecord | undefined;
    try {
      updated = await access.keys.update(id, update);
    } catch (err) {
      if (err instanceof RevokedKeyError) throw new AppError(Errors.invalidParams, err.message, { field: 'status' });
      throw err;
    }
    if (!updated) throw notFound(`no API key with id "${id}"`);
    await access.keyChanged(id);
    req.log.info({ keyId: id, ...update }, 'api key changed');
    return publicKey(updated, await access.usageStore.lastUsedOf(id));
  };

  app.post<{ Params: { id: string } }>('/admin/keys/:id/revoke', async (req) => change(req, req.params.id, { status: 'revoked' }));

  app.patch<{ Params: { id: string }; Body: { status?: unknown; plan?: unknown } }>('/admin/keys/:id', async (req) => {
    const update = keyUpdateOf(req.body ?? {});
    return change(req, req.params.id, update);
  });

  // Usage of one key: rows per bucket, interface and method. Counts reach the warehouse
  // every USAGE_FLUSH_MS; ?flush=true writes this process's buffer first (for tests and
  // operators who need the very latest).
  app.get<{ Params: { id: string }; Querystring: UsageQuerystring & { flush?: string } }>('/admin/keys/:id/usage', async (req) => {
    const key = await access.keys.get(req.params.id);
    if (!key) throw notFound(`no API key with id "${req.params.id}"`);
    if (req.query.flush === 'true') await access.usage.flush();
    const range = usageRange(req.query);
    const rows = await access.usageStore.query({ keyId: key.id, ...range });
    return { keyId: key.id, from: new Date(range.fromMs).toISOString(), to: new Date(range.toMs).toISOString(), granularity: range.granularity, data: rows };
  });

  // Usage of every key in a range, same row shape.
  app.get<{ Querystring: UsageQuerystring & { flush?: string } }>('/admin/usage', async (req) => {
    if (req.query.flush === 'true') await access.usage.flush();
    const range = usageRange(req.query);
    const rows = await access.usageStore.query(range);
    return { from: new Date(range.fromMs).toISOString(), to: new Date(range.toMs).toISOString(), granularity: range.granularity, data: rows };
  });
}
