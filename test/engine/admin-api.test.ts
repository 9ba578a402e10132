import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startApp } from '../support/services.ts';
import { demoRecords } from '../support/fixtures.ts';
import { countStored } from '../support/oracle.ts';
import { apiKeyHeaders } from '../support/api-key.ts';

let ctx: Awaited<ReturnType<typeof startApp>>;
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

beforeAll(async () => {
  ctx = await startApp({ INGEST_MAX_BODY_BYTES: String(2 * 1024 * 1024) });
});
afterAll(async () => ctx.cleanup());

describe('GET /health', () => {
  it('answers without authentication, with each check', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.status).toBe('ok');
    expect(body.checks.engine).toMatchObject({ ok: true, transport: 'embedded' });
    expect(body.checks.migrations.ok).toBe(true);
    expect(body.checks.migrations.applied).toBe(body.checks.migrations.expected);
  });
});

describe('POST /admin/ingest', () => {
  it('requires the admin token', async () => {
    const none = await ctx.app.inject({ method: 'POST', url: '/admin/ingest', payload: '' });
    expect(none.statusCode).toBe(401);
    expect(none.json()).toEqual({ error: 'Unauthorized', message: expect.stringContaining('Bearer') });
    const wrong = await ctx.app.inject({ method: 'POST', url: '/admin/ingest', payload: '', headers: { authorization: 'Bearer nope' } });
    expect(wrong.statusCode).toBe(403);
  });

  it('stores valid lines, reports each bad line with its number and reason, and the records are queryable at once', async () => {
    const records = await demoRecords(ctx.services, 50, 99);
    const pump = records.find((r) => r.protocol_name === 'pump_fun')!;
    const lines = [
      JSON.stringify(records[0]),
      '',
      'not json at all',
      JSON.stringify({ ...records[1], fee: -5 }),
      ...records.slice(2).map((r) => JSON.stringify(r)),
      JSON.stringify({ ...records[3], protocol_name: 'sushiswap_v9' }),
    ];
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/admin/ingest',
      headers: { ...auth, 'content-type': 'application/x-ndjson' },
      payload: lines.join('\n'),
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      accepted: 49,
      rejected: 3,
      duplicates: 0,
      errors: [
        { line: 3, code: 'not_json', reason: expect.stringMatching(/^not valid JSON/) },
        { line: 4, code: 'schema', reason: 'fee must be >= 0' },
        { line: lines.length, code: 'unknown_protocol', reason: 'unknown protocol_name "sushiswap_v9"' },
      ],
      errorsOmitted: 0,
    });
    expect(await ctx.services.operatorAnalytics.transaction(pump.signature)).toMatchObject({ signature: pump.signature, protocolName: 'pump_fun' });

    const again = await ctx.app.inject({ method: 'POST', url: '/admin/ingest', headers: auth, payload: lines.join('\n') });
    // `accepted` counts newly stored records only: a re-sent body stores nothing.
    expect(again.json()).toMatchObject({ accepted: 0, duplicates: 49, rejected: 3 });
  });

  const ingest = (body: string) =>
    ctx.app.inject({ method: 'POST', url: '/admin/ingest', headers: { ...auth, 'content-type': 'application/x-ndjson' }, payload: body });

  it('counts a record repeated in the body, or already stored, as a duplicate and not as accepted', async () => {
    const [a, b, c] = await demoRecords(ctx.services, 3, 123);
    expect((await ingest(JSON.stringify(c))).json()).toMatchObject({ accepted: 1, duplicates: 0 });
    const res = await ingest([a, b, a, c, { ...b }].map((r) => JSON.stringify(r)).join('\n'));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ accepted: 2, rejected: 0, duplicates: 3, errors: [], errorsOmitted: 0 });
  });

  it('ignores a UTF-8 byte-order mark before line 1', async () => {
    const [a, b] = await demoRecords(ctx.services, 2, 124);
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`${JSON.stringify(a)}\n${JSON.stringify(b)}\n`)]);
    const res = await ctx.app.inject({ method: 'POST', url: '/admin/ingest', headers: auth, payload: body });
    expect(res.json()).toEqual({ accepted: 2, rejected: 0, duplicates: 0, errors: [], errorsOmitted: 0 });
    expect(await countStored(ctx.services, 'signature = {s:String}', { s: a!.signature })).toBe(1);
  });

  it("rejects a record whose program_id is another protocol's, or unknown to the registry, naming both", async () => {
    const [r] = await demoRecords(ctx.services, 1, 125);
    const jupiter = { ...r!, protocol_name: 'jupiter_v6', instruction_type: 'route' };
    const lines = [
      JSON.stringify({ ...jupiter, program_id: 'CAMMCzo5YL8w4VFF8KVHrK22GGUsp5VTaW7grrKgrWqK' }),
      JSON.stringify({ ...jupiter, program_id: '11111111111111111111111111111111' }),
      JSON.stringify({ ...jupiter, program_id: 'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4' }),
    ];
    const res = await ingest(lines.join('\n'));
    expect(res.json()).toEqual({
      accepted: 1,
      rejected: 2,
      duplicates: 0,
      errors: [
        {
          line: 1,
          code: 'program_mismatch',
          reason: 'program_id "CAMMCzo5YL8w4VFF8KVHrK22GGUsp5VTaW7grrKgrWqK" is the program of raydium_amm_v3, not of jupiter_v6',
        },
        {
          line: 2,
          code: 'program_unregistered',
          reason:
            'program_id "11111111111111111111111111111111" is not in the protocol registry; the program of jupiter_v6 is JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4',
        },
      ],
      errorsOmitted: 0,
    });
    expect(await ctx.services.operatorAnalytics.transaction(r!.signature)).toMatchObject({
      protocolName: 'jupiter_v6',
      programId: 'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4',
    });
  });

  it('refuses an oversized body as a whole with 413 and stores nothing from it', async () => {
    const before = await countStored(ctx.services);
    const big = `${JSON.stringify((await demoRecords(ctx.services, 1, 5))[0])}\n`.repeat(1);
    const res = await ctx.app.inject({ method: 'POST', url: '/admin/ingest', headers: auth, payload: big + 'x'.repeat(3 * 1024 * 1024) });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ error: 'Payload Too Large', message: expect.stringContaining('larger than the limit') });
    expect(await countStored(ctx.services)).toBe(before);
  });
});

describe('/admin/protocols', () => {
  it('lists the registry and toggles a protocol', async () => {
    const list = await ctx.app.inject({ method: 'GET', url: '/admin/protocols', headers: auth });
    expect(list.statusCode).toBe(200);
    const data = list.json().data as { protocolName: string; active: boolean; programId: string }[];
    expect(data).toHaveLength(12);
    expect(data.find((p) => p.protocolName === 'phoenix_v1')).toEqual({
      protocolName: 'phoenix_v1',
      programId: 'PhoeNiXZ8ByJGLkxNfZRnkUfjvmuYqLR89jjFHGqdXY',
      active: false,
    });
    expect(await ctx.services.analytics.protocols()).not.toContain('phoenix_v1');

    const on = await ctx.app.inject({ method: 'PATCH', url: '/admin/protocols/phoenix_v1', headers: auth, payload: { active: true } });
    expect(on.statusCode).toBe(200);
    expect(on.json()).toMatchObject({ protocolName: 'phoenix_v1', active: true });
    expect(await ctx.services.analytics.protocols()).toContain('phoenix_v1');

    const bad = await ctx.app.inject({ method: 'PATCH', url: '/admin/protocols/phoenix_v1', headers: auth, payload: { active: 'yes' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ error: 'Bad Request', message: 'body must be {"active": true|false}' });
    const missing = await ctx.app.inject({ method: 'PATCH', url: '/admin/protocols/uniswap_v3', headers: auth, payload: { active: true } });
    expect(missing.statusCode).toBe(404);
    await ctx.app.inject({ method: 'PATCH', url: '/admin/protocols/phoenix_v1', headers: auth, payload: { active: false } });
    expect(await ctx.services.analytics.protocols()).not.toContain('phoenix_v1');
  });

  it('answers unknown routes with the error body', async () => {
    const { 'x-api-key': key } = await apiKeyHeaders(ctx.app);
    const res = await ctx.app.inject({ method: 'GET', url: `/nope?api-key=${key}` });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'Not Found', message: 'no route for GET /nope' });
  });

  it('lists at most 1000 rejections in one answer and counts the rest (a million bad lines gave a 46 MB answer)', async () => {
    const res = await ctx.app.inject({ method: 'POST', url: '/admin/ingest', headers: auth, payload: 'x\n'.repeat(2500) });
    expect(res.statusCode).toBe(200);
    const body = res.json() as { rejected: number; errors: unknown[]; errorsOmitted: number };
    expect(body.rejected).toBe(2500);
    expect(body.errors).toHaveLength(1000);
    expect(body.errorsOmitted).toBe(1500);
  });

  it('answers usage queries with times outside what the store holds with 400 naming the field, not 500', async () => {
    for (const [url, field] of [
      ['/admin/usage?to=-271821-04-20T00:00:00Z', 'to'],
      ['/admin/usage?from=-271821-04-20T00:00:00Z&to=2020-01-01T00:00:00Z', 'from'],
      ['/admin/usage?to=%2B275760-09-13T00:00:00Z', 'to'],
    ] as const) {
      const res = await ctx.app.inject({ method: 'GET', url, headers: auth });
      expect(res.statusCode, url).toBe(400);
      expect(res.json()).toEqual({ error: 'Bad Request', message: `${field} must lie between 1970-01-01 and 2106-02-07` });
    }
  });
});
