// Hostile corpus for the operator boundary (test/fixtures/hostile-admin.json) and for the
// ingest record check (test/fixtures/hostile-ingest.json), run case by case: each gets the
// status or outcome it lists, never a 5xx, never a stack trace, and every error is
// exactly {error, message}.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HTTP_TITLES } from '../../core/errors.ts';
import { countStored } from '../support/oracle.ts';
import { ADMIN_TOKEN, startApp } from '../support/services.ts';

type Body = string | { json: unknown } | { base64: string } | { repeat: string; times: number; prefix?: string; suffix?: string };

interface AdminCase {
  name: string;
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE' | 'OPTIONS';
  url: string;
  auth: string | null;
  contentType?: string;
  headers?: Record<string, string>;
  body?: Body;
  status: number;
  message?: string;
  answer?: Record<string, unknown>;
}

interface IngestCase {
  name: string;
  line?: string;
  lineBase64?: string;
  record?: Record<string, unknown>;
  padRawData?: number;
  expect: 'accepted' | 'duplicate' | 'rejected' | 'skipped';
  reason?: string;
}

const fixture = <T>(name: string): T => JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8')) as T;
const adminCases = fixture<{ cases: AdminCase[] }>('hostile-admin.json').cases;
const ingestCases = fixture<{ lines: IngestCase[] }>('hostile-ingest.json').lines;

let ctx: Awaited<ReturnType<typeof startApp>>;

beforeAll(async () => {
  // Every body through the checks in the engine, however few its lines (INGEST_ENGINE_MIN_RECORDS).
  ctx = await startApp({ INGEST_MAX_BODY_BYTES: String(2 * 1024 * 1024), INGEST_CHECKS: 'engine', INGEST_ENGINE_MIN_RECORDS: '1' });
});
afterAll(async () => ctx?.cleanup());

function payloadOf(body: Body | undefined): { payload?: string | Buffer; contentType?: string } {
  if (body === undefined) return {};
  if (typeof body === 'string') return { payload: body };
  if ('json' in body) return { payload: JSON.stringify(body.json), contentType: 'application/json' };
  if ('base64' in body) return { payload: Buffer.from(body.base64, 'base64') };
  return { payload: `${body.prefix ?? ''}${body.repeat.repeat(body.times)}${body.suffix ?? ''}` };
}

/** What no answer may ever contain: a stack frame, a source path, an engine error. */
function expectNoInternals(text: string): void {
  expect(text).not.toMatch(/\n\s+at |\.ts:\d+|node_modules|\/work\/|DB::Exception|Code: \d+/);
}

function expectErrorBody(status: number, text: string): { error: string; message: string } {
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['error', 'message']);
  expect(body.error).toBe(HTTP_TITLES[status]);
  expect(typeof body.message).toBe('string');
  expect((body.message as string).length).toBeGreaterThan(0);
  return body as { error: string; message: string };
}

describe('hostile operator requests (fixtures/hostile-admin.json)', () => {
  it.each(adminCases.map((c, i) => [c.name, c, i] as const))('%s', async (_name, c, i) => {
    const { payload, contentType } = payloadOf(c.body);
    const headers: Record<string, string> = { ...c.headers };
    if (c.auth === 'admin') headers.authorization = `Bearer ${ADMIN_TOKEN}`;
    else if (c.auth !== null) headers.authorization = c.auth;
    const type = c.contentType ?? contentType;
    if (type !== undefined) headers['content-type'] = type;
    const res = await ctx.app.inject({
      method: c.method,
      url: c.url,
      headers,
      ...(payload === undefined ? {} : { payload }),
      // One address per case: wrong tokens must not spend one shared budget here.
      remoteAddress: `10.77.${Math.floor(i / 250)}.${(i % 250) + 1}`,
    });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(c.status);
    expect(res.statusCode).toBeLessThan(500);
    expectNoInternals(res.body);
    for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-ratelimit-plan']) {
      expect(res.headers[h], h).toBeDefined();
    }
    if (c.status >= 400) {
      const body = expectErrorBody(c.status, res.body);
      if (c.message !== undefined) expect(body.message).toContain(c.message);
    } else if (c.answer !== undefined) {
      expect(res.json()).toMatchObject(c.answer);
    }
  });

  it('left Object.prototype alone', () => {
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('hostile ingest lines (fixtures/hostile-ingest.json)', () => {
  const lineOf = (c: IngestCase): Buffer => {
    if (c.lineBase64 !== undefined) return Buffer.from(c.lineBase64, 'base64');
    if (c.record !== undefined) return Buffer.from(JSON.stringify({ ...c.record, raw_data: 'x'.repeat(c.padRawData ?? 0) }));
    return Buffer.from(c.line ?? '');
  };

  it('each line gets its listed outcome, in one body', async () => {
    const body = Buffer.concat(ingestCases.flatMap((c, i) => (i === 0 ? [lineOf(c)] : [Buffer.from('\n'), lineOf(c)])));
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/admin/ingest',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
      payload: body,
    });
    expect(res.statusCode).toBe(200);
    expectNoInternals(res.body);
    const answer = res.json<{ accepted: number; rejected: number; duplicates: number; errors: { line: number; code: string; reason: string }[] }>();
    const count = (e: IngestCase['expect']) => ingestCases.filter((c) => c.expect === e).length;
    const reasons = new Map(answer.errors.map((e) => [e.line, e.reason]));
    ingestCases.forEach((c, i) => {
      const reason = reasons.get(i + 1);
      if (c.expect === 'rejected') {
        expect(reason, `line ${i + 1}: ${c.name}`).toBeDefined();
        expect(reason, `line ${i + 1}: ${c.name}`).toContain(c.reason!);
        expectNoInternals(reason!);
      } else {
        expect(reason, `line ${i + 1}: ${c.name}`).toBeUndefined();
      }
    });
    expect(answer).toMatchObject({ accepted: count('accepted'), rejected: count('rejected'), duplicates: count('duplicate') });
    // Every rejected line is kept in the dead-letter table with the code the answer gave it,
    // and counted under that code on /metrics (issue 40); nothing refused is silently coerced.
    const kept = new Set(
      (await ctx.services.wh.query<{ position: string; code: string }>("SELECT position, code FROM dead_letters WHERE source = 'http'")).map(
        (d) => `${d.position}|${d.code}`,
      ),
    );
    const byCode = new Map<string, number>();
    for (const e of answer.errors) {
      expect(kept.has(`line ${e.line}|${e.code}`), `line ${e.line} (${e.code}) in dead_letters`).toBe(true);
      byCode.set(e.code, (byCode.get(e.code) ?? 0) + 1);
    }
    const metric = await ctx.services.metrics.registry.getSingleMetric('txa_ingest_dead_letters_total')!.get();
    for (const [code, n] of byCode) {
      const counted = metric.values.find((v) => v.labels.code === code && v.labels.source === 'http')?.value ?? 0;
      expect(counted, code).toBeGreaterThanOrEqual(n);
    }
    // What was accepted is stored exactly once, free text byte for byte.
    expect(await countStored(ctx.services, "signature LIKE 'HHHH%'")).toBe(count('accepted'));
    const withText = ingestCases.find((c) => c.name.startsWith('control characters'))!;
    const record = JSON.parse(withText.line!) as { signature: string; error_message: string };
    const [row] = await ctx.services.wh.query<{ error_message: string }>('SELECT error_message FROM transactions WHERE signature = {s:String}', {
      params: { s: record.signature },
    });
    expect(row?.error_message).toBe(record.error_message);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
