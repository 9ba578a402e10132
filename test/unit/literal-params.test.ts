// The literal-parameter renderer (warehouse/literal-params.ts), without the engine: what
// reaches the SQL text is hex, checked digits and the renderer's own words; anything it does
// not know fails. test/support/warehouse-contract.ts reads the literals back through both
// transports.
import { describe, expect, it } from 'vitest';
import { withLiteralParams } from '../../warehouse/literal-params.ts';
import { HOSTILE_STRINGS } from '../support/hostile-strings.ts';

describe('withLiteralParams', () => {
  it.each(HOSTILE_STRINGS.map((s) => [s.length > 40 ? `${s.slice(0, 20)}… (${s.length} chars)` : JSON.stringify(s), s]))(
    'writes the string %s as the hex of its UTF-8 bytes, and nothing else',
    (_label, s) => {
      const sql = withLiteralParams('SELECT {s:String} AS s', { s });
      const m = /^SELECT unhex\('([0-9A-F]*)'\) AS s$/.exec(sql);
      expect(m).not.toBeNull();
      expect(Buffer.from(m![1]!, 'hex').toString('utf8')).toBe(s);
    },
  );

  it('writes an array of strings as a typed array of hex literals (an empty one too)', () => {
    expect(withLiteralParams('x IN {p:Array(String)}', { p: ["a'", '\\'] })).toBe("x IN CAST([unhex('6127'), unhex('5C')] AS Array(String))");
    expect(withLiteralParams('x IN {p:Array(String)}', { p: [] })).toBe('x IN CAST([] AS Array(String))');
  });

  it('writes an array of whole numbers as bare checked digits in a typed array (an empty one too)', () => {
    expect(withLiteralParams('n NOT IN {d:Array(UInt32)}', { d: [1, '4294967295', 7n] })).toBe('n NOT IN CAST([1, 4294967295, 7] AS Array(UInt32))');
    expect(withLiteralParams('{d:Array(UInt8)}', { d: [] })).toBe('CAST([] AS Array(UInt8))');
  });

  it('writes whole numbers as checked digits cast to their type, up to the type maximum', () => {
    expect(withLiteralParams('LIMIT {lim:UInt32}', { lim: 101 })).toBe("LIMIT CAST('101' AS UInt32)");
    expect(withLiteralParams('rid > {after:UInt64}', { after: '18446744073709551615' })).toBe("rid > CAST('18446744073709551615' AS UInt64)");
    expect(withLiteralParams('{a:UInt64}', { a: 9007199254740993n })).toBe("CAST('9007199254740993' AS UInt64)");
    expect(withLiteralParams('{a:UInt8}, {b:UInt16}', { a: 255, b: '00065535' })).toBe("CAST('255' AS UInt8), CAST('65535' AS UInt16)");
    expect(withLiteralParams('{ a : UInt32 }', { a: 0 })).toBe("CAST('0' AS UInt32)");
  });

  it.each([
    ['a negative number', 'UInt32', -1],
    ['a fraction', 'UInt32', 1.5],
    ['NaN', 'UInt32', Number.NaN],
    ['Infinity', 'UInt64', Number.POSITIVE_INFINITY],
    ['past 2^53 as a number', 'UInt64', 2 ** 53 + 2],
    ['past the UInt32 range', 'UInt32', 2 ** 32],
    ['past the UInt8 range', 'UInt8', '256'],
    ['past the UInt64 range', 'UInt64', '18446744073709551616'],
    ['a negative bigint', 'UInt64', -1n],
    ['digits with a sign', 'UInt64', '-1'],
    ['digits with a plus', 'UInt64', '+1'],
    ['an exponent', 'UInt64', '1e3'],
    ['hex digits', 'UInt64', '0x10'],
    ['spaces', 'UInt32', ' 1'],
    ['a trailing newline', 'UInt32', '1\n'],
    ['an injection', 'UInt64', "1') OR 1=1 --"],
    ['the empty string', 'UInt32', ''],
    ['a boolean', 'UInt8', true],
    ['an array', 'UInt32', [1]],
    ['null', 'UInt32', null],
    ['a number as a string parameter', 'String', 1],
    ['an array as a string parameter', 'String', ['a']],
    ['a string as an array parameter', 'Array(String)', 'a'],
    ['a number inside a string array', 'Array(String)', ['a', 1]],
    ['a string as an array of numbers', 'Array(UInt32)', '1'],
    ['an injection inside an array of numbers', 'Array(UInt32)', [1, '1]) OR 1=1 --']],
    ['a negative item', 'Array(UInt64)', [-1]],
    ['an item past the type', 'Array(UInt8)', [256]],
    ['an array of signed numbers', 'Array(Int32)', [1]],
  ])('refuses %s', (_label, type, value) => {
    expect(() => withLiteralParams(`SELECT {v:${type}}`, { v: value })).toThrow(/parameter v/);
  });

  it.each([
    'Int32',
    'Int64',
    'Float64',
    'Decimal(18, 2)',
    'DateTime',
    'Bool',
    'UUID',
    'Nullable(String)',
    'Array(UInt64)',
    'Identifier',
    'FixedString(4)',
    'LowCardinality(String)',
  ])('refuses the type %s, which it does not write', (type) => {
    expect(() => withLiteralParams(`SELECT {v:${type}}`, { v: '1' })).toThrow(/parameter v/);
  });

  it('refuses a placeholder without a value', () => {
    expect(() => withLiteralParams('SELECT {v:String}', {})).toThrow(/parameter v: no value/);
    expect(() => withLiteralParams('SELECT {v:String}', { v: undefined })).toThrow(/parameter v: no value/);
    // An inherited name is no value either.
    expect(() => withLiteralParams('SELECT {toString:String}', {})).toThrow(/no value/);
  });

  it('replaces each placeholder once: a value never becomes a placeholder', () => {
    expect(withLiteralParams('{a:String} {b:String}', { a: '{b:String}', b: 'x' })).toBe("unhex('7B623A537472696E677D') unhex('78')");
  });
});
