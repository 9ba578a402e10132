// The dashboard's calls about the signed-in account's own keys: list, create (the secret is
// in that one answer only), revoke; usage per key or for the whole account; data freshness.
// Every call needs a live session; the state-changing ones its CSRF token as well.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, Errors, invalidParams, notFound } from '../../../core/errors.ts';
import { DASHBOARD_BODY_LIMIT_BYTES, KEYS_PER_ACCOUNT_MAX, USAGE_FLUSH_REUSE_MS, USAGE_VIEWS } from '../../../core/limits/dashboard.ts';
import { PLAN_LIMITS, PLAN_QUERY_BUDGET } from '../../../core/plans.ts';
import type { ApiKeyRecord } from '../../../warehouse/api-key-store.ts';
import { readFreshness } from '../../../warehouse/ingest-freshness.ts';
import type { Warehouse } from '../../../warehouse/warehouse.ts';
import type { Access } from '../../services/access/access.ts';
import type { DashboardCaller, Sessions } from './sessions.ts';
import { summariseUsage } from './usage-summary.ts';
import { objectBody, parseEnvironment, parseKeyName } from '../../../core/vocabulary/account-input.ts';

export interface KeyRouteOptions {
  access: Access;
  sessions: Sessions;
  wh: Warehouse;
}

const publicKey = (k: ApiKeyRecord, lastUsedAt: string | null) => ({
  id: k.id,
  name: k.name,
  environment: k.environment,
  status: k.status,
  plan: k.plan,
  keyPrefix: k.keyPrefix,
  createdAt: k.createdAt,
  lastUsedAt,
});

type Granularity = keyof typeof USAGE_VIEWS;
const isGranularity = (v: unknown): v is Granularity => typeof v === 'string' && Object.hasOwn(USAGE_VIEWS, v);

const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export async function dashboardKeyRoutes(app: FastifyInstance, opts: KeyRouteOptions): Promise<void> {
  keyCalls(app, opts);
  usageCalls(app, opts);
}

/** One of the caller's own keys, or 404. */
async function ownKey(access: Access, caller: DashboardCaller, id: string): Promise<ApiKeyRecord> {
  // Someone else's key and no key at all answer alike: ids are not probed this way.
  const key = ID.test(id) ? await access.keys.get(id) : undefined;
  if (key === undefined || key.accountId !== caller.account.id) throw notFound('No such key on this account');
  return key;
}

/** List, create (the secret in that one answer only), revoke. */
function keyCalls(app: FastifyInstance, { access, sessions }: KeyRouteOptions): void {
  // Key creations of one account run one at a time in this process: the count of held keys
  // and the write are otherwise interleaved, and parallel calls all passed the cap.
  const creating = new Map<string, Promise<unknown>>();
  function inTurn<T>(accountId: string, work: () => Promise<T>): Promise<T> {
    const run = (creating.get(accountId) ?? Promise.resolve()).then(work);
    const tail = run.catch(() => undefined);
    creating.set(accountId, tail);
    void tail.then(() => {
      if (creating.get(accountId) === tail) creating.delete(accountId);
    });
    return run;
  }
  const heldKeys = async (accountId: string): Promise<number> => (await access.keys.listByAccount(accountId)).filter((k) => k.status !== 'revoked').length;
  const overCap = (): AppError =>
    new AppError(Errors.conflict, `This account already holds ${KEYS_PER_ACCOUNT_MAX} keys that are not revoked; revoke one first`);

  app.get('/dashboard/api/keys', async (req) => {
    const caller = await sessions.require(req);
    const [keys, lastUsed] = await Promise.all([access.keys.listByAccount(caller.account.id), access.usageStore.lastUsed()]);
    return { data: keys.map((k) => publicKey(k, lastUsed.get(k.id) ?? null)), plan: caller.account.plan };
  });

  app.post('/dashboard/api/keys', { bodyLimit: DASHBOARD_BODY_LIMIT_BYTES }, async (req, reply) => {
    const caller = await sessions.requireWithCsrf(req);
    const body = objectBody(req.body, '{"name": "...", "environment": "production" | "staging" | "development" | "<label>"}');
    const name = parseKeyName(body.name);
    const environment = parseEnvironment(body.environment);
    const { record, secret } = await inTurn(caller.account.id, async () => {
      if ((await heldKeys(caller.account.id)) >= KEYS_PER_ACCOUNT_MAX) throw overCap();
      const made = await access.keys.create(name, caller.account.plan, { accountId: caller.account.id, environment });
      // Another API process may have created one meanwhile: over the cap, this one is
      // withdrawn before its secret is shown (fail closed; the caller may try again).
      if ((await heldKeys(caller.account.id)) > KEYS_PER_ACCOUNT_MAX) {
        await access.keys.update(made.record.id, { status: 'revoked' });
        throw overCap();
      }
      return made;
    });
    await access.keyChanged(record.id);
    req.log.info({ keyId: record.id, accountId: caller.account.id }, 'api key created in the dashboard');
    reply.code(201);
    // The one answer that carries the secret.
    return { ...publicKey(record, null), key: secret };
  });

  app.post<{ Params: { id: string } }>('/dashboard/api/keys/:id/revoke', { bodyLimit: DASHBOARD_BODY_LIMIT_BYTES }, async (req) => {
    const caller = await sessions.requireWithCsrf(req);
    const key = await ownKey(access, caller, req.params.id);
    const updated = key.status === 'revoked' ? key : await access.keys.update(key.id, { status: 'revoked' });
    // Every process's key snapshot drops it: 403 within a second (KEY_CACHE_TTL_MS).
    await access.keyChanged(key.id);
    req.log.info({ keyId: key.id, accountId: caller.account.id }, 'api key revoked in the dashboard');
    const lastUsed = await access.usageStore.lastUsedOf(key.id);
    return publicKey(updated ?? key, lastUsed);
  });
}

/** Usage per key or for the whole account, and data freshness. */
function usageCalls(app: FastifyInstance, { access, sessions, wh }: KeyRouteOptions): void {
  // Usage is written every USAGE_FLUSH_MS; the page wants the latest, so this process's
  // buffer is written first, at most once a second however many pages ask.
  let lastFlush = 0;
  const freshUsage = async (): Promise<void> => {
    if (Date.now() - lastFlush < USAGE_FLUSH_REUSE_MS) return;
    lastFlush = Date.now();
    await access.usage.flush();
  };

  app.get<{ Querystring: { key?: string; granularity?: string } }>(
    '/dashboard/api/usage',
    async (req: FastifyRequest<{ Querystring: { key?: string; granularity?: string } }>) => {
      const caller = await sessions.require(req);
      const granularity = req.query.granularity ?? 'minute';
      if (!isGranularity(granularity)) throw invalidParams('granularity must be minute, hour or day', 'granularity');
      const which = req.query.key ?? 'all';
      const accountKeys = await access.keys.listByAccount(caller.account.id);
      const keys = which === 'all' ? accountKeys : [await ownKey(access, caller, which)];
      await freshUsage();

      const g = USAGE_VIEWS[granularity];
      const now = Date.now();
      const toMs = Math.floor(now / g.bucketMs) * g.bucketMs + g.bucketMs;
      const fromMs = toMs - g.spanMs;
      const rows = keys.length === 0 ? [] : await access.usageStore.query({ keyIds: keys.map((k) => k.id), fromMs, toMs, granularity });

      const summary = summariseUsage(rows, keys, fromMs, toMs, g.bucketMs);
      // The current one-minute window of each key: what is left before 429.
      const windows = await Promise.all(
        keys.map(async (k) => {
          const limit = PLAN_LIMITS[k.plan];
          const d = await access.limiter.peek(`key:${k.id}`, limit);
          return { keyId: k.id, name: k.name, status: k.status, plan: k.plan, limit, remaining: d.remaining, resetAt: new Date(d.resetAt).toISOString() };
        }),
      );
      const perMinute = PLAN_LIMITS[caller.account.plan];
      return {
        key: which,
        granularity,
        from: new Date(fromMs).toISOString(),
        to: new Date(toMs).toISOString(),
        plan: caller.account.plan,
        limitPerMinute: perMinute,
        // The scale of `cost`: the plan's units are rows the engine reads (or the estimate charged
        // before running), and one request may cost at most this many (docs/access.md).
        costBudgetPerRequest: PLAN_QUERY_BUDGET[caller.account.plan],
        // The plan's limit for one key over one bucket (what the chart draws).
        limitPerBucket: perMinute * (g.bucketMs / 60_000),
        ...summary,
        windows,
      };
    },
  );

  // How fresh the stored data is (newest block_time and ingest time), for the live page when
  // the analytics answers carry no freshness headers.
  app.get('/dashboard/api/freshness', async (req) => {
    await sessions.require(req);
    return readFreshness(wh);
  });
}
