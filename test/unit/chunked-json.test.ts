// The chunked JSON writer (api/services/answers/chunked-json.ts) and the GraphQL answer stream on it
// (api/doors/graphql/answer-stream.ts): the same text JSON.stringify writes, in bounded chunks,
// a turn of the event loop apart; an answer cut at its byte budget field by field.
import { describe, expect, it } from 'vitest';
import { chunkedStringify, jsonChunks } from '../../api/services/answers/chunked-json.ts';
import { answerStream, rememberedStream, type Answer } from '../../api/doors/graphql/answer-stream.ts';
import { ANSWER_CHUNK_BYTES } from '../../core/limits/answers.ts';

const read = async (s: NodeJS.ReadableStream): Promise<string> => {
  let out = '';
  for await (const chunk of s) out += String(chunk);
  return out;
};

/** About `n` time-series points, as the GraphQL timeSeries field answers them. */
const points = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ timestamp: 1_733_443_200 + i * 3600, value: i * 1.5, label: `raydium_amm_v3/swap:P95_FEE${i % 7}` }));

describe('jsonChunks', () => {
  it.each([
    ['scalars', [1, -0, 1.5e300, 'a"\\\n\u2028', true, null, NaN, Infinity]],
    ['undefined, functions and symbols', { a: undefined, b: () => 1, c: Symbol('x'), d: [undefined, () => 1], e: 1 }],
    ['toJSON (dates)', { at: new Date(0), nested: { toJSON: (k: string) => `key ${k}` } }],
    ['unicode and emoji keys', { 'ключ 🙂': ['é', '\u0000'], '': {} }],
    ['nesting', { data: { a: [{ x: { y: [[], {}, [1, [2, { z: null }]]] } }], b: 'text' } }],
    [
      'a connection',
      {
        edges: Array.from({ length: 50 }, (_, i) => ({ node: { fee: i, ok: i % 2 === 0 }, cursor: `c${i}` })),
        pageInfo: { hasNextPage: true, endCursor: null },
      },
    ],
  ])('writes what JSON.stringify writes: %s', async (_name, value) => {
    expect(await chunkedStringify(value, { chunkChars: 7 })).toBe(JSON.stringify(value));
  });

  it('writes undefined as null, and refuses a cycle as JSON.stringify does', async () => {
    expect(await chunkedStringify(undefined)).toBe('null');
    const o: Record<string, unknown> = { a: [1] };
    o.self = { o };
    await expect(chunkedStringify(o)).rejects.toThrow(/circular/);
  });

  it('hands out chunks of about the asked size', async () => {
    const value = points(20_000);
    const sizes: number[] = [];
    for await (const c of jsonChunks(value, { chunkChars: 16 * 1024 })) sizes.push(c.length);
    expect(sizes.length).toBeGreaterThan(50);
    // Each chunk is the asked size plus at most one piece (one point, ~80 characters).
    for (const s of sizes.slice(0, -1)) expect(s).toBeGreaterThanOrEqual(16 * 1024);
    expect(Math.max(...sizes)).toBeLessThan(16 * 1024 + 200);
  });

  it('writes about 40 MB without holding the event loop for long (JSON.stringify holds it for the whole text)', async () => {
    const value = { data: Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`a${i}`, points(100_000)])) };
    const whole = await charsBetweenTurns(
      (async function* () {
        yield JSON.stringify(value);
      })(),
    );
    const chunked = await charsBetweenTurns(jsonChunks(value));
    expect(chunked.chars).toBe(whole.chars);
    expect(whole.chars).toBeGreaterThan(35_000_000);
    // Counted in characters written between two turns of the event loop, not in milliseconds:
    // a busy machine slows both writers alike, and can neither pass nor fail this.
    expect(whole.most).toBe(whole.chars);
    expect(chunked.most).toBeLessThanOrEqual(2 * (ANSWER_CHUNK_BYTES + PIECE));
    expect(chunked.turns).toBeGreaterThan(whole.chars / (2 * (ANSWER_CHUNK_BYTES + PIECE)));
  });
});

/** The longest piece JSON.stringify writes of one point here (one array element, ~80 characters), with room to spare. */
const PIECE = 200;

/**
 * Characters written while other work waits: a probe re-arms itself at every turn of the event
 * loop (setImmediate), and the most characters consumed between two of its ticks is what a
 * request arriving meanwhile would wait for.
 */
async function charsBetweenTurns(chunks: AsyncIterable<string>): Promise<{ chars: number; most: number; turns: number }> {
  let chars = 0;
  let since = 0;
  let most = 0;
  let turns = 0;
  let on = true;
  const tick = (): void => {
    most = Math.max(most, since);
    since = 0;
    turns += 1;
    if (on) setImmediate(tick);
  };
  setImmediate(tick);
  for await (const c of chunks) {
    chars += c.length;
    since += c.length;
  }
  on = false;
  return { chars, most: Math.max(most, since), turns };
}

describe('answerStream', () => {
  const answer = (data: Record<string, unknown>): Answer => ({ data, extensions: { cost: { requested: 1, budget: 2 } } });

  it('an answer within its budget is the JSON of {data, extensions}, and its data bytes are handed to the memo', async () => {
    const data = { a: points(100), b: [1, 2, 3], c: null };
    let kept: Buffer | undefined;
    const text = await read(
      answerStream(answer(data), {
        budgetBytes: 1_000_000,
        onData: (b) => {
          kept = b;
        },
      }),
    );
    expect(JSON.parse(text)).toEqual({ data, extensions: { cost: { requested: 1, budget: 2 } } });
    expect(kept?.toString()).toBe(JSON.stringify(data));
    // The memo's bytes, written again with other extensions, are the same answer.
    expect(JSON.parse(await read(rememberedStream(kept!, { cost: 3 }, 100)))).toEqual({ data, extensions: { cost: 3 } });
  });

  it('a field that would pass the budget is null with an error at its path, as is every field after it; nothing is kept', async () => {
    const data = { small: points(10), big: points(5_000), after: [1] };
    let kept = false;
    const text = await read(
      answerStream(
        { ...answer(data), errors: [{ message: 'earlier', extensions: { code: 'X' } }] },
        {
          budgetBytes: 100_000,
          onData: () => {
            kept = true;
          },
        },
      ),
    );
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(100_000);
    const body = JSON.parse(text);
    expect(body.data).toEqual({ small: data.small, big: null, after: null });
    expect(body.errors.map((e: { path?: string[] }) => e.path)).toEqual([undefined, ['big'], ['after']]);
    expect(body.errors[1]).toEqual({
      message: expect.stringMatching(/^this field's answer would take the response past its 100000 bytes budget; ask for less/),
      path: ['big'],
      extensions: { code: 'QUERY_TOO_COMPLEX' },
    });
    expect(kept).toBe(false);
  });

  it('a request error has no data member; data null stays null', async () => {
    const refused = JSON.parse(
      await read(answerStream({ errors: [{ message: 'no', extensions: { code: 'BAD_USER_INPUT' } }], extensions: {} }, { budgetBytes: 1000 })),
    );
    expect(refused).toEqual({ errors: [{ message: 'no', extensions: { code: 'BAD_USER_INPUT' } }], extensions: {} });
    expect(JSON.parse(await read(answerStream({ data: null, extensions: {} }, { budgetBytes: 1000 })))).toEqual({ data: null, extensions: {} });
  });
});
