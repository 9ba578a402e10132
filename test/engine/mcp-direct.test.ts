// The MCP door's direct answer (McpDoor.direct, StatelessJsonTransport.answerDirectly: a single
// plain tools/call answered past the SDK's per-request machinery) against the reference, a door
// without it (the SDK's Server answers everything): the corpus in
// test/fixtures/mcp-direct-differential.json, hostile and odd bodies and headers, must get the
// same status, headers, body text, usage labels, budget charge and answer memory from both, and
// through HTTP the app's door must answer what the reference answers.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PlanAnswerMemory } from '../../api/services/access/answer-memory.ts';
import { McpDoor, type CallHooks } from '../../api/doors/mcp/mcp-server.ts';
import { mcpRequestCount } from '../../api/doors/mcp/mcp-routes.ts';
import type { ToolCaller } from '../../api/doors/mcp/mcp-tools.ts';
import { Budget } from '../../core/budget.ts';
import { createKey } from '../support/api-key.ts';
import { ingestDemo } from '../support/fixtures.ts';
import { startApp } from '../support/services.ts';

interface Case {
  name: string;
  /** The body as sent (JSON text: duplicate keys, -0 and 1e21 read as a parser reads them). */
  raw: string;
  /** Header overrides; null: the header is absent. */
  headers?: { accept?: string | null; contentType?: string | null; protocolVersion?: string | null };
  /** The request's budget: the enterprise plan's (default), none bound, the free plan's, 200 answer bytes, 64 KiB or 16 MiB of answer, or a full answer memory. */
  budget?: 'enterprise' | 'none' | 'free' | 'tight' | 'wire64k' | 'wire16m' | 'memoryFull';
  /** Through HTTP: the status the app answers before the door sees the body. */
  edge?: number;
  /** The answer names the caller's own figures (rate limit): through HTTP only its status is compared. */
  perCaller?: boolean;
}

/** {{repeat:TEXT:N}}: TEXT N times (deep and long bodies, kept short in the file). */
const expanded = (raw: string): string => raw.replace(/\{\{repeat:(.+?):(\d+)\}\}/g, (_m, text: string, n: string) => text.repeat(Number(n)));
const CASES = (JSON.parse(readFileSync(new URL('../fixtures/mcp-direct-differential.json', import.meta.url), 'utf8')) as { cases: Case[] }).cases.map((c) => ({
  ...c,
  raw: expanded(c.raw),
}));

let t: Awaited<ReturnType<typeof startApp>>;
let doors: { direct: McpDoor; server: McpDoor };
let key: string;
/** Signatures of different records, for calls that must each get their own answer. */
let signatures: string[];

beforeAll(async () => {
  t = await startApp();
  signatures = [...new Set((await ingestDemo(t.services, 300)).map((r) => r.signature))].slice(0, 8);
  key = (await createKey(t.app, 'enterprise', 'mcp-direct')).key;
  const deps = {
    analytics: t.services.analytics,
    sandbox: t.services.sqlSandbox,
    registry: t.services.registry,
    freshness: t.services.freshness,
    usage: t.services.access.usageStore,
  };
  doors = { direct: new McpDoor(deps, '1.0.0'), server: new McpDoor(deps, '1.0.0', false) };
}, 120_000);

afterAll(async () => {
  await t?.cleanup();
});

/** A plan's answer memory, as the HTTP edge gives each budget (api/services/access/answer-memory.ts). */
function budgetOf(kind: Case['budget']): { budget: Budget | null; memory: PlanAnswerMemory } {
  const memory = new PlanAnswerMemory();
  const bound = (b: Budget): { budget: Budget; memory: PlanAnswerMemory } => {
    b.answerMemory = memory;
    return { budget: b, memory };
  };
  switch (kind ?? 'enterprise') {
    case 'none':
      return { budget: null, memory };
    case 'free':
      return bound(new Budget('free', 'mcp'));
    case 'tight':
      return bound(Object.assign(new Budget('free', 'mcp'), { answerBytes: 200 }));
    case 'wire64k':
      return bound(Object.assign(new Budget('free', 'mcp'), { answerBytes: 64 * 1024 }));
    case 'wire16m':
      return bound(Object.assign(new Budget('enterprise', 'mcp'), { answerBytes: 16 * 1024 * 1024 }));
    case 'memoryFull': {
      // A pool of 10 bytes, already holding some: any answer of this plan is refused.
      const full = new PlanAnswerMemory({ free: 10, x402: 10, enterprise: 10 });
      full.reserve('enterprise', 5);
      const budget = new Budget('enterprise', 'mcp');
      budget.answerMemory = full;
      return { budget, memory: full };
    }
    default:
      return bound(new Budget('enterprise', 'mcp'));
  }
}

const headersOf = (c: Case) => {
  const h = c.headers ?? {};
  const value = (v: string | null | undefined, dflt: string) => (v === null ? undefined : (v ?? dflt));
  return {
    accept: value(h.accept, 'application/json, text/event-stream'),
    contentType: value(h.contentType, 'application/json'),
    protocolVersion: value(h.protocolVersion, '2025-06-18'),
  };
};

/** get_usage's window starts at the call's own millisecond. */
const untimed = (body: string | undefined) => body?.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, '<time>');

/** One door's answer to a case, with what it told the request's hooks and what it charged. */
async function answer(door: McpDoor, c: Case) {
  const calls: { label: string; error: boolean }[] = [];
  let internal = 0;
  const hooks: CallHooks = { reference: 'req-1', onInternalError: () => void (internal += 1), onToolCall: (label, error) => calls.push({ label, error }) };
  const { budget, memory } = budgetOf(c.budget);
  const caller: ToolCaller = { keyId: 'mcp-direct-test', plan: budget?.plan ?? 'enterprise', budget, rateLimit: null };
  const body = JSON.parse(c.raw) as unknown;
  // As the route decides it (mcpRequestCount): only a POST of several requests is a batch.
  const a = await door.answer({ ...headersOf(c), body }, caller, hooks, mcpRequestCount(body));
  return {
    answer: { ...a, body: untimed(a.body) },
    calls,
    internal,
    spent: budget?.spent ?? 0,
    held: memory.heldBy(budget?.plan ?? 'enterprise'),
    budgetBytes: budget?.answerBytes ?? Infinity,
  };
}

const isJson = (raw: string): boolean => {
  try {
    JSON.parse(raw);
    return true;
  } catch {
    return false;
  }
};

describe("the direct MCP answer reads as the SDK Server's (test/fixtures/mcp-direct-differential.json)", () => {
  it.each(CASES.filter((c) => isJson(c.raw)).map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const want = await answer(doors.server, c);
    expect(await answer(doors.direct, c)).toEqual(want);
    // Not equal for want of a charge: a tool's answer is held in its plan's answer memory.
    if (c.budget !== 'none' && want.answer.body?.startsWith('{"result":{"content"')) expect(want.held).toBeGreaterThan(0);
    // Within the door's budget as carried (no refusal fits the tight budget's 200 bytes): the
    // edge would otherwise replace the whole answer with a 400 after it was built.
    if (c.budget !== 'tight') expect(Buffer.byteLength(want.answer.body ?? '')).toBeLessThanOrEqual(want.budgetBytes);
  });
});

describe("through HTTP, the app's door answers what the reference door answers", () => {
  it.each(CASES.filter((c) => c.budget === undefined).map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const h = headersOf(c);
    const headers: Record<string, string> = { 'x-api-key': key };
    if (h.accept !== undefined) headers.accept = h.accept;
    if (h.contentType !== undefined) headers['content-type'] = h.contentType;
    if (h.protocolVersion !== undefined) headers['mcp-protocol-version'] = h.protocolVersion;
    const res = await t.app.inject({ method: 'POST', url: '/mcp', headers, payload: c.raw });
    if (c.edge !== undefined) {
      expect(res.statusCode).toBe(c.edge);
      return;
    }
    const want = (await answer(doors.server, c)).answer;
    expect(res.statusCode).toBe(want.status);
    if (c.perCaller) return;
    // The app's answer edge names the charset of every JSON answer, whichever door answered.
    expect(res.headers['content-type']?.toString().replace('; charset=utf-8', '')).toBe(want.headers['content-type']);
    expect(untimed(res.body)).toBe(want.body ?? '');
  });
});

describe('a client that goes away mid-call', () => {
  it("starts no call and leaves nothing held in its plan's answer memory, on either door", async () => {
    const body = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'getTransactions', arguments: { options: { limit: 20 } } } };
    for (const door of [doors.direct, doors.server]) {
      const memory = new PlanAnswerMemory();
      const budget = new Budget('free', 'mcp');
      budget.answerMemory = memory;
      const calls: string[] = [];
      const hooks: CallHooks = { reference: 'req-gone', onInternalError: () => {}, onToolCall: (label) => calls.push(label) };
      const caller: ToolCaller = { keyId: 'mcp-direct-gone', plan: 'free', budget, rateLimit: null };
      const answered = door.answer({ ...headersOf({ name: '', raw: '' }), body: structuredClone(body) }, caller, hooks, 1);
      // The client goes: the edge gives back what the request held (request-budget.ts, on the response's close) while its tool still runs.
      budget.releaseAnswers();
      const a = await answered;
      // Its call had not started: it never runs (api/services/answers/answer-batch.ts), and is recorded as refused ...
      expect(JSON.parse(a.body!).result).toMatchObject({ isError: true, _meta: { 'txa/error': { code: 'ERR_QUERY_TIMEOUT' } } });
      expect(calls).toEqual(['getTransactions']);
      // ... and the answer no one will read holds nothing once its request has ended.
      expect(memory.heldBy('free')).toBe(0);
    }
  });
});

describe('run_sql in a batch', () => {
  // It ran capped at its batch's first reservation (1 MiB) and its cap surfaced as the SQL door's
  // "larger than 32 MiB" (ERR_INVALID_QUERY), never run again with more: no MCP run_sql answered
  // more than 1 MiB, where /v1/query answers up to 32 MiB.
  it.each(['json', 'csv'])("answers past its first reservation, up to the door's budget, on both doors (%s)", async (format) => {
    const body = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'run_sql', arguments: { query: "SELECT repeat('a', 700000) AS s FROM transactions LIMIT 2", format } },
    };
    for (const door of [doors.direct, doors.server]) {
      const caller: ToolCaller = { keyId: 'mcp-direct-sql', plan: 'enterprise', budget: new Budget('enterprise', 'mcp'), rateLimit: null };
      const hooks: CallHooks = { reference: 'req-sql', onInternalError: () => {}, onToolCall: () => {} };
      const a = await door.answer({ ...headersOf({ name: '', raw: '' }), body: structuredClone(body) }, caller, hooks, 1);
      const result = JSON.parse(a.body!).result as { isError?: boolean; content: { text: string }[] };
      expect(result.isError, result.content[0]!.text.slice(0, 200)).toBeUndefined();
      expect(result.content[0]!.text.length).toBeGreaterThan(1_400_000);
    }
  });
});

describe('run_sql calls of one batch', () => {
  // The sandbox lets a key have three queries running or waiting; a batch ran four calls at a
  // time, so its fourth run_sql was refused ERR_RATE_LIMITED by its own batch.
  it('are answered, however many: the batch is not refused as if the key had sent them at once', async () => {
    const body = Array.from({ length: 8 }, (_, i) => ({
      jsonrpc: '2.0',
      id: i + 1,
      method: 'tools/call',
      params: { name: 'run_sql', arguments: { query: `SELECT ${i} AS n` } },
    }));
    const caller: ToolCaller = { keyId: 'mcp-direct-sql-batch', plan: 'free', budget: new Budget('free', 'mcp'), rateLimit: null };
    const hooks: CallHooks = { reference: 'req-sql-batch', onInternalError: () => {}, onToolCall: () => {} };
    const a = await doors.direct.answer({ ...headersOf({ name: '', raw: '' }), body }, caller, hooks, body.length);
    const answers = JSON.parse(a.body!) as { id: number; result: { isError?: boolean; content: { text: string }[] } }[];
    expect(answers.map((x) => (x.result.isError ? x.result.content[0]!.text.slice(0, 60) : JSON.parse(x.result.content[0]!.text).data[0].n))).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7,
    ]);
  });
});

describe("a failure past the tool (its request's hooks throw)", () => {
  it('is the same JSON-RPC error on both doors', async () => {
    const body = { jsonrpc: '2.0', id: 'h', method: 'tools/call', params: { name: 'getProtocols', arguments: {} } };
    const answers = await Promise.all(
      [doors.direct, doors.server].map(async (door) => {
        const err = Object.assign(new Error('the usage table is gone'), { code: 'ENOENT', data: { at: 'onToolCall' } });
        const hooks: CallHooks = {
          reference: 'req-h',
          onInternalError: () => {},
          onToolCall: () => {
            throw err;
          },
        };
        const caller: ToolCaller = { keyId: 'mcp-direct-hooks', plan: 'enterprise', budget: new Budget('enterprise', 'mcp'), rateLimit: null };
        return door.answer({ ...headersOf({ name: '', raw: '' }), body: structuredClone(body) }, caller, hooks, 1);
      }),
    );
    expect(JSON.parse(answers[1]!.body!).error).toEqual({ code: -32603, message: 'the usage table is gone', data: { at: 'onToolCall' } });
    expect(answers[0]).toEqual(answers[1]);
  });
});

describe('concurrent calls, direct and through the Server, on one door', () => {
  it('each get their own answer, as one at a time on the reference door', async () => {
    // Every client's first id is 1: direct calls and calls the Server answers (a _meta makes
    // a call not plain) run side by side, each must get the answer of its own signature.
    const cases: Case[] = signatures.flatMap((signature, i) => {
      const params = { name: 'getTransaction', arguments: { signature }, ...(i % 2 === 1 && { _meta: { progressToken: i } }) };
      return [{ name: `call ${i}`, raw: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }) }];
    });
    const want: Awaited<ReturnType<typeof answer>>[] = [];
    for (const c of cases) want.push(await answer(doors.server, c));
    expect(new Set(want.map((w) => w.answer.body)).size).toBe(cases.length);
    expect(await Promise.all(cases.map((c) => answer(doors.direct, c)))).toEqual(want);
  });
});
