// Strings that break SQL text written by hand: quotes, escapes, NUL, comment and statement
// ends, placeholders, unicode of every width, and a long one. The literal-parameter renderer
// (warehouse/literal-params.ts) must write each so that the engine reads back the same text.
export const HOSTILE_STRINGS: readonly string[] = [
  '',
  "'",
  "''",
  "O'Brien",
  '\\',
  "\\'",
  "\\' OR 1=1 --",
  "'); DROP TABLE tx_by_rid; --",
  "' UNION SELECT record FROM tx_by_rid --",
  '"double" `back` $$dollar$$',
  '\0',
  'a\0b',
  '\n\r\t\b\f\v',
  '{addr:String}',
  "{x:UInt64} '{y:String}'",
  '/* comment */ -- line # hash',
  ';',
  'ключ 🔑 中文 العربية \u200b\u202e\ufeff',
  '\u{10ffff}\u{1f600}',
  "unhex('41')",
  "x'41' 0x41 1e308",
  'A'.repeat(10_000),
  "'\\".repeat(3_000),
];
