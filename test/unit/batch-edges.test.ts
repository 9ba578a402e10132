// Issue 35, the review of the batch doors (docs/security-review-2026-11.md, "Review of the batch
// and stream doors"): what the batch executor (api/services/answers/answer-batch.ts) and the request
// budget (core/budget.ts) must hold at their edges, without an engine.
//  - Refusals echo their request's id, and the envelope's own errors what was sent (a method's
//    name): a batch of long ids used to build a JSON-RPC answer past its budget (34.5 MB of a
//    32 MiB budget), which the edge then replaced with a 400 that is no JSON-RPC answer.
//  - MCP carries each answer escaped in a JSON string: a text of raw control characters (a CSV
//    answer of run_sql) becomes six times itself there, so an MCP batch built 80 MB of a 64 MiB
//    budget when it counted only the text's own bytes.
//  - A request's answer bytes and in-flight slot wait for its work: a cancelled MCP call kept
//    running with its POST answered, its slot and its bytes given back meanwhile.
//  - An MCP batch refused whole (over 100 messages) is one request, as on JSON-RPC.
import { describe, expect, it } from 'vitest';
import { PlanAnswerMemory } from '../../api/services/access/answer-memory.ts';
import { AnswerBatch } from '../../api/services/answers/answer-batch.ts';
import { mcpRequestCount } from '../../api/doors/mcp/mcp-routes.ts';
import { carriedMeasure } from '../../api/doors/mcp/mcp-server.ts';
import { handleBody, parseRpcBody, type MethodTable } from '../../api/doors/rpc/json-rpc.ts';
import { Budget } from '../../core/budget.ts';
import { RPC_RESPONSE_BUDGET_BYTES } from '../../core/limits/answers.ts';
import { MCP_CARRY_FACTOR } from '../../core/limits/mcp.ts';

/** Methods answering `big` (3,000,000 characters of result), `mid` (480,000) or `small`. */
const methods: MethodTable = {
  has: (name) => name === 'big' || name === 'mid' || name === 'small',
  call: async (name) => (name === 'big' ? 'x'.repeat(3_000_000) : name === 'mid' ? 'x'.repeat(480_000) : 'ok'),
};

const ctx = { onInternalError: () => {}, reference: 'r', budget: null };
const call = (id: unknown, method: string) => ({ jsonrpc: '2.0', id, method, params: [] });

describe('a JSON-RPC batch stays within its budget whatever its requests echo', () => {
  // Eleven answers of 3 MB and one of 480 KB fill the 32 MiB budget to within some 20 KB.
  const head = [...Array.from({ length: 11 }, (_, i) => call(i, 'big')), call(11, 'mid')];

  it('long ids on the calls refused for the budget', async () => {
    const body = [...head, ...Array.from({ length: 88 }, (_, i) => call(`${'i'.repeat(10_000)}${i}`, 'big'))];
    const out = await handleBody(parseRpcBody(JSON.stringify(body)), methods, ctx);
    expect(Buffer.byteLength(out!)).toBeLessThanOrEqual(RPC_RESPONSE_BUDGET_BYTES);
    const answers = JSON.parse(out!) as { id: unknown; error?: { code: number } }[];
    expect(answers).toHaveLength(body.length);
    expect(answers.at(-1)!.error?.code).toBe(-32000);
  });

  it("long method names echoed by the envelope's errors", async () => {
    const body = [...head, ...Array.from({ length: 88 }, (_, i) => call(100 + i, `m${'x'.repeat(10_000)}`))];
    const out = await handleBody(parseRpcBody(JSON.stringify(body)), methods, ctx);
    expect(Buffer.byteLength(out!)).toBeLessThanOrEqual(RPC_RESPONSE_BUDGET_BYTES);
    const answers = JSON.parse(out!) as { error?: { code: number } }[];
    expect(answers.filter((a) => a.error?.code === -32601)).toHaveLength(88);
  });
});

describe('an MCP answer is counted as it is carried', () => {
  it('JSON text counts its own bytes; text of raw control characters half of what it becomes escaped', () => {
    const json = JSON.stringify({ data: [{ s: 'a"b\\c' }] });
    expect(carriedMeasure(json)).toBe(Buffer.byteLength(json));
    const csv = `"s"\r\n"${'\u0001'.repeat(1000)}"\r\n`;
    const carried = Buffer.byteLength(JSON.stringify(csv)) - 2;
    expect(carried).toBeGreaterThan(5 * csv.length);
    expect(carriedMeasure(csv)).toBe(Math.ceil(carried / MCP_CARRY_FACTOR));
  });

  it('a batch of such answers refuses the members whose carried text would pass the budget', async () => {
    const text = '\u0001'.repeat(1000);
    const batch = new AnswerBatch({ budget: null, answerBytes: 16 * 1024, members: 6, setAside: 300, firstBytes: 1000, measure: carriedMeasure });
    const outcomes = await Promise.all(Array.from({ length: 6 }, () => batch.run(async () => text)));
    // 3,000 bytes of budget each (6,000 carried), not 1,000: five fit 16 KiB less what is set aside, not six.
    expect(outcomes.map((o) => ('text' in o ? 'ok' : 'refused' in o ? o.refused : 'thrown'))).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'overBudget']);
  });
});

describe("a request's answer bytes and in-flight slot wait for its work", () => {
  it('the bytes a member holds go back only once it ends, though its request ended first', async () => {
    const memory = new PlanAnswerMemory();
    const budget = new Budget('free', 'mcp');
    budget.answerMemory = memory;
    const batch = new AnswerBatch({ budget, answerBytes: 1024 * 1024, members: 1 });
    let finish!: (text: string) => void;
    let signal: AbortSignal | undefined;
    const cancel = new AbortController();
    const running = batch.run(async (member) => {
      signal = member?.signal;
      return new Promise<string>((r) => (finish = r));
    }, cancel.signal);
    await new Promise((r) => setImmediate(r));
    expect(memory.heldBy('free')).toBeGreaterThan(0);
    // The member is cancelled and its POST answered without it: its own statements are told to stop.
    cancel.abort();
    expect(signal?.aborted).toBe(true);
    let slotFree = false;
    budget.releaseAnswers();
    budget.whenIdle(() => (slotFree = true));
    expect(slotFree).toBe(false);
    expect(memory.heldBy('free')).toBeGreaterThan(0);
    finish('x'.repeat(100));
    await running;
    expect(slotFree).toBe(true);
    expect(memory.heldBy('free')).toBe(0);
  });

  it('a member of a request that already ended is told to stop as it starts', () => {
    const budget = new Budget('free', 'rpc');
    budget.releaseAnswers();
    expect(budget.member(1024).signal?.aborted).toBe(true);
    // A request's own budget carries no signal: only a member's statements of its own stop.
    expect(new Budget('free', 'rpc').signal).toBeUndefined();
  });
});

describe('an MCP batch refused whole is one request', () => {
  const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'getProtocols', arguments: {} } });
  it('101 requests count one; 100 count 100', () => {
    expect(mcpRequestCount(Array.from({ length: 101 }, (_, i) => call(i)))).toBe(1);
    expect(mcpRequestCount(Array.from({ length: 100 }, (_, i) => call(i)))).toBe(100);
  });
});
