// The input boundaries as pure functions, without an engine or a server: the JSON-RPC
// envelope (against a stub method table), parameter validation, the ingest record check
// and the pagination-token codec. The same behaviour is asserted end to end elsewhere;
// here a regression shows in milliseconds (npm run test:fast).
import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { listingFingerprint, PageTokens } from '../../api/analytics/paging/page-token.ts';
import { handleBody, parseRpcBody, PARSE_FAILED, type MethodTable } from '../../api/doors/rpc/json-rpc.ts';
import { validateParams } from '../../api/services/positional/param-checks.ts';
import { AppError, Errors, hint, param, worded, wordMessage } from '../../core/errors.ts';
import { checkRecord, protocolLookup } from '../../ingest/record-schema.ts';

const methods: MethodTable = {
  has: (name) => name === 'echo' || name === 'fail',
  call: async (name, params) => {
    if (name === 'fail') throw new Error('engine exploded');
    return params;
  },
};
const ctx = { reference: 'ref-1', onInternalError: () => undefined, budget: null };
const answer = async (text: string) => {
  const out = await handleBody(parseRpcBody(text), methods, ctx);
  return out === undefined ? undefined : (JSON.parse(out) as unknown);
};

describe('JSON-RPC envelope', () => {
  it('answers a call, skips a notification, and answers a batch in order', async () => {
    expect(await answer('{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]}')).toEqual({ jsonrpc: '2.0', id: 1, result: [1] });
    expect(await answer('{"jsonrpc":"2.0","method":"echo"}')).toBeUndefined();
    expect(await answer('[{"jsonrpc":"2.0","id":"a","method":"echo"},{"jsonrpc":"2.0","method":"echo"},{"jsonrpc":"2.0","id":2,"method":"nope"}]')).toEqual([
      { jsonrpc: '2.0', id: 'a', result: [] },
      { jsonrpc: '2.0', id: 2, error: expect.objectContaining({ code: -32601 }) },
    ]);
  });

  it('maps every malformed envelope to its standard code', async () => {
    expect(parseRpcBody('{').value).toBe(PARSE_FAILED);
    expect(await answer('{')).toMatchObject({ id: null, error: { code: -32700 } });
    expect(await answer('[]')).toMatchObject({ id: null, error: { code: -32600 } });
    expect(await answer('{"jsonrpc":"1.0","id":1,"method":"echo"}')).toMatchObject({ id: 1, error: { code: -32600 } });
    expect(await answer('{"jsonrpc":"2.0","id":{},"method":"echo"}')).toMatchObject({ id: null, error: { code: -32600 } });
    expect(await answer(`[${Array.from({ length: 101 }, () => '{"jsonrpc":"2.0","id":1,"method":"echo"}').join(',')}]`)).toMatchObject({
      id: null,
      error: { code: -32600 },
    });
    expect(await answer('{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1}}')).toMatchObject({ id: 1, error: { code: -32602 } });
  });

  it('keeps ids and numbers exact, or refuses them', async () => {
    expect(await answer('{"jsonrpc":"2.0","id":9007199254740993,"method":"echo"}')).toMatchObject({ id: null, error: { code: -32600 } });
    expect(await answer('{"jsonrpc":"2.0","id":"9007199254740993","method":"echo"}')).toMatchObject({ id: '9007199254740993' });
    expect(await answer('{"jsonrpc":"2.0","id":1,"method":"echo","params":[1793999934.0000001]}')).toMatchObject({ error: { code: -32602 } });
    expect(await answer('{"jsonrpc":"2.0","id":1,"method":"echo","params":[0.5, 1e3]}')).toMatchObject({ result: [0.5, 1000] });
  });

  it('bounds nesting before anything recurses, and hides internal failures behind a reference', async () => {
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    expect(await answer(`{"jsonrpc":"2.0","id":1,"method":"echo","params":${deep}}`)).toMatchObject({ error: { code: -32602 } });
    const failed = (await answer('{"jsonrpc":"2.0","id":1,"method":"fail"}')) as { error: { code: number; data: string } };
    expect(failed.error.code).toBe(-32603);
    expect(failed.error.data).toContain('ref-1');
    expect(failed.error.data).not.toContain('exploded');
  });
});

describe('parameter validation', () => {
  const refuses = (method: Parameters<typeof validateParams>[0], params: unknown[]): string => {
    try {
      validateParams(method, params);
    } catch (err) {
      if (err instanceof AppError) return err.message;
      throw err;
    }
    throw new Error('accepted');
  };

  it('names the offending option in the positional parameter', () => {
    expect(refuses('getTransactions', [{ limit: 10_001 }])).toMatch(/^options\.limit/);
    expect(refuses('getTransactions', [{ sortOrder: 'up' }])).toMatch(/^options\.sortOrder/);
    expect(refuses('getTransactions', [{ filters: { blockTime: { gte: 10, lte: 5 } } }])).toMatch(/blockTime/);
    expect(refuses('getTransactions', [{ filters: { blockTime: { gte: 4294967296 } } }])).toMatch(/blockTime\.gte/);
    expect(refuses('getTransaction', ['not base58 0OIl'])).toMatch(/signature/);
    expect(() => validateParams('getTransactions', [{ limit: 10, filters: { status: 'failed' } }])).not.toThrow();
  });
});

describe('ingest record check', () => {
  const registry = protocolLookup([
    { protocolName: 'jupiter_v6', programId: 'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4' },
    { protocolName: 'pump_fun', programId: '6EF8rrecthR5Dkzon8Nwu78hRvfCKubJ14M5uBEwF6P' },
  ]);
  const good = {
    signature: '5'.repeat(88),
    slot: '123',
    block_time: 1_700_000_000,
    program_id: 'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4',
    protocol_name: 'jupiter_v6',
    instruction_type: 'route',
    fee: 5000,
    compute_units: 1000,
    accounts: ['JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4'],
    success: true,
  };

  it('normalises a good record (decimal-string slot, accounts_count from accounts, log lines joined)', () => {
    const check = checkRecord({ ...good, log_messages: ['a', 'b'] }, registry);
    expect(check).toMatchObject({ ok: true, row: { slot: '123', accounts_count: 1, log_messages: 'a\nb', instruction_index: 0 } });
  });

  it('answers every refusal with its machine code and a detail', () => {
    const cases: [unknown, string][] = [
      [[1], 'not_object'],
      [{ ...good, fee: -1 }, 'schema'],
      [{ ...good, protocol_name: 'uniswap_v3' }, 'unknown_protocol'],
      [{ ...good, program_id: '6EF8rrecthR5Dkzon8Nwu78hRvfCKubJ14M5uBEwF6P' }, 'program_mismatch'],
      [{ ...good, program_id: 'So11111111111111111111111111111111111111112' }, 'program_unregistered'],
      [{ ...good, accounts: undefined }, 'accounts_count_missing'],
      [{ ...good, slot: '99999999999999999999' }, 'slot_out_of_range'],
    ];
    for (const [value, code] of cases) {
      const check = checkRecord(value, registry);
      expect(check, code).toMatchObject({ ok: false, code, detail: expect.any(String) });
    }
  });
});

describe('pagination-token codec', () => {
  const fp = listingFingerprint({ filters: { protocols: ['b', 'a'] }, sortOrder: 'desc' });
  const read = (v: unknown[]) => (v.length === 1 && typeof v[0] === 'number' ? v[0] : undefined);
  const tokens = new PageTokens('test');
  const encodeToken = (parts: readonly unknown[]) => tokens.encode(parts);
  const decodeToken = (token: string, tag: string, fingerprint: string, r: typeof read) => tokens.decode(token, tag, fingerprint, r);

  it('round-trips its own tokens; list order inside a filter does not change the fingerprint', () => {
    expect(listingFingerprint({ filters: { protocols: ['a', 'b'] }, sortOrder: 'desc' })).toBe(fp);
    expect(decodeToken(encodeToken(['t', 42, fp]), 't', fp, read)).toBe(42);
  });

  it('refuses edited, respelled, foreign and other-filter tokens', () => {
    const token = encodeToken(['t', 42, fp]);
    const parts = JSON.parse(Buffer.from(token, 'base64url').toString()) as unknown[];
    const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
    for (const bad of [b64([parts[0], 43, ...parts.slice(2)]), b64(JSON.stringify(parts).replace('42', '42.0')), 'garbage!!', b64(['x', 42, fp, parts[3]])]) {
      expect(() => decodeToken(bad, 't', fp, read)).toThrow(/not a pagination token this method issued/);
    }
    const other = listingFingerprint({ filters: {}, sortOrder: 'asc' });
    expect(() => decodeToken(token, 't', other, read)).toThrow(/other filters/);
  });

  it('refuses a token minted under another key (another deployment, or before a key change)', () => {
    const token = encodeToken(['t', 42, fp]);
    expect(() => new PageTokens('another operator token').decode(token, 't', fp, read)).toThrow(/not a pagination token/);
  });

  it('writes the token format of every deployment so far: base64url JSON of the parts and their HMAC under sha256("page-token:" + operator token)', () => {
    const parts = ['t', 42, fp];
    const key = createHash('sha256').update('page-token:test').digest();
    const mac = createHmac('sha256', key).update(JSON.stringify(parts)).digest('base64url').slice(0, 22);
    expect(encodeToken(parts)).toBe(Buffer.from(JSON.stringify([...parts, mac])).toString('base64url'));
  });

  it('accepts a token of another codec built from the same operator token (another replica)', () => {
    expect(new PageTokens('test').decode(encodeToken(['t', 42, fp]), 't', fp, read)).toBe(42);
  });
});

describe('parameter words at the edge', () => {
  it('fills each logical key and hint with the words of the interface, keeping list positions', () => {
    const words = {
      params: { protocol: 'protocol_name', protocols: 'options.protocols' },
      hints: { protocols: 'see the list', coarserBucket: 'daily buckets' },
    };
    expect(wordMessage(`${param('protocol')}: unknown (${hint('protocols')})`, words)).toBe('protocol_name: unknown (see the list)');
    expect(wordMessage(`${param('protocols', 3)} is wrong`, words)).toBe('options.protocols[3] is wrong');
    // A key the interface has no word for is left as the key itself, never as a placeholder.
    expect(wordMessage(`${param('cursor')} is bad`, words)).toBe('cursor is bad');
    expect(wordMessage(`try ${hint('coarserBucket')}`, words)).toBe('try daily buckets');
    const err = worded(new AppError(Errors.invalidParams, `${param('range')}: too long`, { field: 'range' }), {
      params: { range: 'blockTime' },
      hints: words.hints,
    });
    expect(err).toMatchObject({ kind: Errors.invalidParams, message: 'blockTime: too long', field: 'range' });
  });
});

describe('one vocabulary across the interfaces', () => {
  it("GraphQL's record and statistics types carry the vocabulary's answer fields, with the same kinds, plus only their documented additions", async () => {
    const { buildSchema, getNamedType, GraphQLObjectType } = await import('graphql');
    const { schemaSource } = await import('../../api/doors/graphql/schema.ts');
    const answers = await import('../../core/vocabulary/answers.ts');
    const schema = buildSchema(schemaSource());
    const kindOf = (t: string): string => (t === 'Boolean' ? 'boolean' : t === 'String' ? 'string' : 'number');
    const vocabKind = (s: { type?: unknown }): string => (s.type === 'boolean' ? 'boolean' : s.type === 'string' ? 'string' : 'number');
    for (const [name, shape, additions] of [
      ['Transaction', answers.Transaction, ['date', 'hour']],
      ['ProtocolStats', answers.ProtocolStats, ['uniquePrograms']],
    ] as const) {
      const type = schema.getType(name);
      expect(type, name).toBeInstanceOf(GraphQLObjectType);
      const fields = (type as InstanceType<typeof GraphQLObjectType>).getFields();
      const vocab = shape.properties as Record<string, { type?: unknown }>;
      expect(Object.keys(fields).sort(), name).toEqual([...Object.keys(vocab), ...additions].sort());
      for (const [field, s] of Object.entries(vocab)) expect(kindOf(getNamedType(fields[field]!.type).name), `${name}.${field}`).toBe(vocabKind(s));
    }
  });
});
