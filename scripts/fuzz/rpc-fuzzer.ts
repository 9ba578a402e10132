// Property-based fuzzing of JSON-RPC from its contract: calls generated from each method's
// params schema (the catalog's, api/catalog/): valid, at the boundaries, and invalid (one
// mutation of a valid call), plus envelope faults (ids of every type, batches,
// notifications, wrong versions). Every answer must be a JSON-RPC 2.0 envelope with the
// caller's id, never an internal error (-32603) or a 5xx, and every result must match the
// method's result schema (the catalog's too). A seed makes a run replayable.
import { Ajv, type ValidateFunction } from 'ajv';
import { CATALOG, rpcMethodsOf } from '../../api/catalog/catalog.ts';
import { NUMBER_FORMATS } from '../../core/vocabulary/primitives.ts';

const RPC_METHODS = rpcMethodsOf(CATALOG);
type MethodName = string;
/** A method's params schema and result schema, as the catalog declares them. */
const methodOf = (name: MethodName) => RPC_METHODS.get(name)!;

export interface RpcFuzzOptions {
  url: string;
  /** Keys used in turn: each plan allows so many requests a minute, and a fuzzer is fast. */
  keys: string[];
  seed: number;
  /** Stop after this many requests or this many milliseconds, whichever comes first. */
  maxRequests: number;
  maxMs: number;
  /** Real values the generator draws from, so valid calls reach real data. */
  samples: { protocols: string[]; signatures: string[]; addresses: string[]; blockTime: { gte: number; lte: number } };
}

export interface RpcFuzzFailure {
  check: 'not_a_server_error' | 'envelope' | 'result_schema' | 'transport';
  detail: string;
  /** The request body sent, to replay it. */
  request: string;
  status: number;
  response: string;
}

export interface RpcFuzzReport {
  seed: number;
  requests: number;
  calls: number;
  /** How the calls were answered: result, or the error code. */
  outcomes: Record<string, number>;
  byMode: Record<Mode, number>;
  failures: RpcFuzzFailure[];
}

type Mode = 'valid' | 'boundary' | 'invalid' | 'envelope';
const ALLOWED_CODES = new Set([-32700, -32600, -32601, -32602, -32000]);

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Schema {
  type?: string | string[];
  enum?: readonly unknown[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  items?: Schema | readonly Schema[];
  properties?: Record<string, Schema>;
  required?: readonly string[];
  uniqueItems?: boolean;
}

const HOSTILE_STRINGS = [
  '',
  ' ',
  '\u0000',
  "' OR '1'='1",
  '"; DROP TABLE transactions; --',
  '../../etc/passwd',
  '\u202e\u0301',
  '😀'.repeat(50),
  'a'.repeat(10_000),
  '{{7*7}}',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a log-injection payload, sent as written
  '${jndi:ldap://x}',
  '%00',
  '\\',
  'null',
  'NaN',
  '-1',
  '1e309',
  '0x10',
];
const HOSTILE_VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  -0,
  1e308,
  Number.MAX_SAFE_INTEGER,
  2 ** 53 + 2,
  [],
  {},
  [[[[]]]],
  { __proto__: { a: 1 } },
  { constructor: { prototype: { polluted: true } } },
  ...HOSTILE_STRINGS,
];

class Generator {
  constructor(
    private readonly rnd: () => number,
    private readonly samples: RpcFuzzOptions['samples'],
  ) {}

  int(lo: number, hi: number): number {
    return lo + Math.floor(this.rnd() * (hi - lo + 1));
  }

  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.rnd() * xs.length)]!;
  }

  chance(p: number): boolean {
    return this.rnd() < p;
  }

  private string(s: Schema, path: string): string {
    if (s.pattern?.includes('{64,88}')) return this.pick(this.samples.signatures);
    if (s.pattern?.includes('{32,44}')) return this.pick(this.samples.addresses);
    if (s.pattern !== undefined || /protocol/i.test(path)) return this.pick(this.samples.protocols);
    if (/paginationToken/.test(path)) return 'not-a-token';
    return this.pick(['swap', 'route', 'buy', 'sell', 'x']);
  }

  private number(s: Schema, path: string, boundary: boolean): number {
    if (/gte|lte/.test(path)) {
      const { gte, lte } = this.samples.blockTime;
      if (boundary) return this.pick([s.minimum ?? 0, s.maximum ?? 0, gte, lte]);
      return path.endsWith('gte') ? this.int(gte, gte + (lte - gte) / 2) : this.int(gte + (lte - gte) / 2, lte);
    }
    const lo = s.minimum ?? 0;
    const hi = s.maximum ?? 1000;
    return boundary ? this.pick([lo, hi]) : this.int(lo, Math.min(hi, lo + 50));
  }

  /** A value that satisfies `s` (as far as the schema can say). */
  valid(s: Schema, path: string, boundary = false): unknown {
    if (s.enum) return this.pick(s.enum);
    const types = Array.isArray(s.type) ? s.type : [s.type];
    const type = types.includes('object') ? 'object' : (types[0] ?? 'string');
    switch (type) {
      case 'string':
        return this.string(s, path);
      case 'integer':
      case 'number':
        return this.number(s, path, boundary);
      case 'boolean':
        return this.chance(0.5);
      case 'null':
        return null;
      case 'array': {
        if (s.items === undefined) return [];
        if (Array.isArray(s.items)) {
          const n = this.int(s.minItems ?? 0, s.maxItems ?? s.items.length);
          return (s.items as Schema[]).slice(0, n).map((item, i) => this.valid(item, `${path}[${i}]`, boundary));
        }
        const lo = s.minItems ?? 0;
        const n = boundary && s.maxItems !== undefined && s.maxItems <= 100 ? this.pick([lo, s.maxItems]) : this.int(lo, Math.max(lo, 3));
        const out: unknown[] = [];
        for (let i = 0; i < n; i++) {
          const v = this.valid(s.items as Schema, `${path}[${i}]`, boundary);
          if (s.uniqueItems && out.some((x) => JSON.stringify(x) === JSON.stringify(v))) continue;
          out.push(v);
        }
        return out.length < lo ? [this.valid(s.items as Schema, `${path}[0]`)] : out;
      }
      default: {
        const out: Record<string, unknown> = {};
        for (const [k, sub] of Object.entries(s.properties ?? {})) {
          if (s.required?.includes(k) || this.chance(0.4)) out[k] = this.valid(sub, `${path}.${k}`, boundary);
        }
        const range = out.blockTime as { gte?: number; lte?: number } | undefined;
        if (range?.gte !== undefined && range.lte !== undefined && range.gte > range.lte && !boundary) [range.gte, range.lte] = [range.lte, range.gte];
        return out;
      }
    }
  }

  /** A copy of `v` with one thing wrong: a value of the wrong type, out of range, an unknown field, … */
  mutate(v: unknown, depth = 0): unknown {
    if (depth > 0 && this.chance(0.35)) return this.pick(HOSTILE_VALUES);
    if (Array.isArray(v)) {
      if (v.length === 0 || this.chance(0.2)) return this.chance(0.5) ? [...v, this.pick(HOSTILE_VALUES)] : this.pick(HOSTILE_VALUES);
      const i = this.int(0, v.length - 1);
      const out = [...v];
      out[i] = this.mutate(v[i], depth + 1);
      return out;
    }
    if (v !== null && typeof v === 'object') {
      const o = { ...(v as Record<string, unknown>) };
      const keys = Object.keys(o);
      if (keys.length === 0 || this.chance(0.2)) {
        o[this.pick(['extra', 'limit', 'blockTime', '__proto__', 'filters', 'protocolName'])] = this.pick(HOSTILE_VALUES);
        return o;
      }
      const k = this.pick(keys);
      if (this.chance(0.15)) delete o[k];
      else o[k] = this.mutate(o[k], depth + 1);
      return o;
    }
    return this.pick(HOSTILE_VALUES);
  }
}

const METHODS: MethodName[] = [...RPC_METHODS.keys()];

interface Call {
  body: unknown;
  /** The ids answered calls must echo, in order; undefined for a notification. */
  ids: unknown[];
  methods: (MethodName | undefined)[];
}

function makeCall(g: Generator, mode: Mode, n: number): Call {
  const id = g.pick<unknown>([n, `c-${n}`, null, n + 0.5, -n]);
  if (mode === 'envelope') {
    const method = g.pick(METHODS);
    const params = g.valid(methodOf(method).schema as Schema, 'params');
    const variants: Call[] = [
      { body: { jsonrpc: '1.0', id: n, method, params }, ids: [n], methods: [undefined] },
      { body: { id: n, method, params }, ids: [n], methods: [undefined] },
      { body: { jsonrpc: '2.0', id: { a: 1 }, method, params }, ids: [null], methods: [undefined] },
      { body: { jsonrpc: '2.0', id: n, method: g.pick(['getNothing', '', 'constructor', '__proto__', 'toString']), params }, ids: [n], methods: [undefined] },
      { body: { jsonrpc: '2.0', id: n, method, params: g.pick(HOSTILE_VALUES) }, ids: [n], methods: [undefined] },
      { body: [], ids: [null], methods: [undefined] },
      { body: g.pick(HOSTILE_VALUES), ids: [null], methods: [undefined] },
      { body: '{"jsonrpc":"2.0","id":1,"method":', ids: [null], methods: [undefined] },
    ];
    const batchSize = g.int(2, 6);
    const batch = Array.from({ length: batchSize }, (_, i) => {
      const m = g.pick(METHODS);
      const notify = g.chance(0.2);
      return { m, notify, call: { jsonrpc: '2.0', ...(notify ? {} : { id: n * 10 + i }), method: m, params: g.valid(methodOf(m).schema as Schema, 'params') } };
    });
    variants.push({
      body: batch.map((b) => b.call),
      ids: batch.filter((b) => !b.notify).map((b) => (b.call as { id?: number }).id),
      methods: batch.filter((b) => !b.notify).map((b) => b.m),
    });
    return g.pick(variants);
  }
  const method = g.pick(METHODS);
  const schema = methodOf(method).schema as Schema;
  let params = g.valid(schema, 'params', mode === 'boundary');
  if (mode === 'invalid') params = g.mutate(params);
  return { body: { jsonrpc: '2.0', id, method, params }, ids: [id], methods: [method] };
}

const ajv = new Ajv({ strict: false, allErrors: false });
for (const [name, format] of Object.entries(NUMBER_FORMATS)) ajv.addFormat(name, format);
const resultValidators = new Map<MethodName, ValidateFunction>(METHODS.map((m) => [m, ajv.compile(methodOf(m).result)]));

export function checkAnswer(answer: unknown, expectedId: unknown, method: MethodName | undefined, outcomes: Record<string, number>): string | undefined {
  if (typeof answer !== 'object' || answer === null) return 'answer is not an object';
  const a = answer as { jsonrpc?: unknown; id?: unknown; result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } };
  if (a.jsonrpc !== '2.0') return 'jsonrpc is not "2.0"';
  if ('result' in a === 'error' in a) return 'exactly one of result and error must be present';
  if (a.error !== undefined) {
    const code = a.error.code;
    outcomes[String(code)] = (outcomes[String(code)] ?? 0) + 1;
    if (code === -32603) return `internal error: ${JSON.stringify(a.error).slice(0, 300)}`;
    if (typeof code !== 'number' || !ALLOWED_CODES.has(code)) return `error code ${String(code)} is not one the SPEC lists`;
    if (typeof a.error.message !== 'string') return 'error.message is not a string';
    // An id the server could not read is answered with null (JSON-RPC 2.0 section 5).
    if (a.id !== expectedId && a.id !== null) return `id ${JSON.stringify(a.id)} does not echo ${JSON.stringify(expectedId)}`;
    return undefined;
  }
  outcomes.result = (outcomes.result ?? 0) + 1;
  if (a.id !== expectedId) return `id ${JSON.stringify(a.id)} does not echo ${JSON.stringify(expectedId)}`;
  if (method !== undefined) {
    const validate = resultValidators.get(method)!;
    if (!validate(a.result)) return `result of ${method} does not match its schema: ${ajv.errorsText(validate.errors)}`;
  }
  return undefined;
}

export async function fuzzRpc(opts: RpcFuzzOptions): Promise<RpcFuzzReport> {
  const g = new Generator(prng(opts.seed), opts.samples);
  const report: RpcFuzzReport = {
    seed: opts.seed,
    requests: 0,
    calls: 0,
    outcomes: {},
    byMode: { valid: 0, boundary: 0, invalid: 0, envelope: 0 },
    failures: [],
  };
  const deadline = Date.now() + opts.maxMs;
  const modes: Mode[] = ['valid', 'valid', 'boundary', 'invalid', 'invalid', 'invalid', 'envelope'];
  for (let n = 1; n <= opts.maxRequests && Date.now() < deadline; n++) {
    const mode = g.pick(modes);
    const call = makeCall(g, mode, n);
    const text = typeof call.body === 'string' ? call.body : JSON.stringify(call.body);
    report.requests++;
    report.byMode[mode]++;
    let status = 0;
    let body = '';
    try {
      const key = opts.keys[n % opts.keys.length]!;
      const res = await fetch(`${opts.url}/v1/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: text });
      status = res.status;
      body = await res.text();
    } catch (err) {
      report.failures.push({ check: 'transport', detail: String(err), request: text.slice(0, 2000), status, response: '' });
      continue;
    }
    const fail = (check: RpcFuzzFailure['check'], detail: string) =>
      report.failures.push({ check, detail, request: text.slice(0, 2000), status, response: body.slice(0, 2000) });
    if (status === 429) continue; // the plan's limit: not a finding (the runner paces itself)
    if (status >= 500) {
      fail('not_a_server_error', `HTTP ${status}`);
      continue;
    }
    if (status !== 200 && status !== 204) {
      fail('envelope', `HTTP ${status} (JSON-RPC answers 200 except for auth and rate limits)`);
      continue;
    }
    // Only notifications: no content at all.
    if (call.ids.length === 0 && Array.isArray(call.body) && (call.body as unknown[]).length > 0) {
      if (body !== '') fail('envelope', 'a batch of notifications was answered with content');
      continue;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      fail('envelope', 'answer is not JSON');
      continue;
    }
    const answers = Array.isArray(parsed) ? parsed : [parsed];
    const batched = Array.isArray(call.body) && (call.body as unknown[]).length > 0 && call.methods.some((m) => m !== undefined);
    report.calls += answers.length;
    if (batched && answers.length !== call.ids.length) {
      fail('envelope', `batch of ${call.ids.length} calls with ids was answered with ${answers.length} answers`);
      continue;
    }
    answers.forEach((answer, i) => {
      const problem = checkAnswer(answer, batched ? call.ids[i] : call.ids[0], batched ? call.methods[i] : call.methods[0], report.outcomes);
      if (problem) fail(problem.startsWith('internal') ? 'not_a_server_error' : problem.startsWith('result') ? 'result_schema' : 'envelope', problem);
    });
  }
  return report;
}

/** Real values from the service itself, so generated calls reach real records. */
export async function rpcSamples(url: string, key: string): Promise<RpcFuzzOptions['samples']> {
  const call = async (method: string, params: unknown[]): Promise<unknown> => {
    const res = await fetch(`${url}/v1/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const body = (await res.json()) as { result?: unknown; error?: unknown };
    if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
    return body.result;
  };
  const protocols = (await call('getProtocols', [])) as string[];
  const page = (await call('getTransactions', [{ limit: 50 }])) as { data: { signature: string; programId: string; blockTime: number }[] };
  const times = page.data.map((t) => t.blockTime);
  const lte = times.length ? Math.max(...times) : 1_735_689_600;
  return {
    protocols,
    signatures: page.data.map((t) => t.signature).concat(['1'.repeat(88)]),
    addresses: [...new Set(page.data.map((t) => t.programId))],
    blockTime: { gte: lte - 3 * 86_400, lte },
  };
}
