// A small ClickHouse-aware tokenizer. It never decides what a query reads (the engine's
// parser does, see sql-guard.ts); it only answers questions about the text's surface that
// the AST dump cannot: is there a semicolon outside strings and comments, is a string or
// comment left open (which would swallow the LIMIT/SETTINGS we append), where is the
// outermost LIMIT, which names do WITH clauses declare. It follows ClickHouse's lexer:
// '…' strings with backslash escapes and doubled quotes, "…" and `…` quoted identifiers,
// $tag$…$tag$ heredocs, -- and # line comments, and nestable /* */ comments.
import { DOLLAR_TAG_MAX_CHARS } from '../../../core/limits/sql.ts';

export type TokenType = 'word' | 'number' | 'string' | 'quoted' | 'punct';

export interface Token {
  type: TokenType;
  /** For strings and quoted identifiers: the unescaped value; otherwise the raw text. */
  text: string;
  /** Parenthesis depth at the token (the outermost query is depth 0). */
  depth: number;
  /** Offset of the token in the source. */
  pos: number;
  /** For strings and quoted identifiers: the value had backslash escapes in the source. */
  escaped?: boolean;
}

export class LexError extends Error {}

export interface Lexed {
  tokens: Token[];
  /** Offsets of semicolons outside strings, identifiers and comments. */
  semicolons: number[];
}

const isWordStart = (c: string): boolean => /[A-Za-z_\u0080-\uffff]/.test(c);
const isWordChar = (c: string): boolean => /[A-Za-z0-9_$\u0080-\uffff]/.test(c);
const isDigit = (c: string): boolean => c >= '0' && c <= '9';

/** A string literal or quoted identifier from its opening quote at `start`: its text (quotes
 *  doubled or backslash-escaped inside), whether a backslash escape was used, and the position after it. */
function readQuoted(src: string, start: number, q: string, type: 'string' | 'quoted'): { text: string; escaped: boolean; end: number } {
  const unterminated = (): LexError =>
    new LexError(`unterminated ${type === 'string' ? 'string literal' : 'quoted identifier'} starting at position ${start + 1}`);
  let i = start + 1;
  let text = '';
  let escaped = false;
  for (;;) {
    if (i >= src.length) throw unterminated();
    const c = src[i]!;
    if (c === '\\') {
      if (i + 1 >= src.length) throw unterminated();
      text += src[i + 1];
      escaped = true;
      i += 2;
    } else if (c === q && src[i + 1] === q) {
      text += q;
      i += 2;
    } else if (c === q) {
      return { text, escaped, end: i + 1 };
    } else {
      text += c;
      i += 1;
    }
  }
}

/** The position after a block comment (nested ones included) opened at `start`. */
function blockCommentEnd(src: string, start: number): number {
  let i = start;
  let level = 0;
  while (i < src.length) {
    if (src[i] === '/' && src[i + 1] === '*') {
      level += 1;
      i += 2;
    } else if (src[i] === '*' && src[i + 1] === '/') {
      level -= 1;
      i += 2;
      if (level === 0) return i;
    } else {
      i += 1;
    }
  }
  throw new LexError(`unterminated comment starting at position ${start + 1}`);
}

export function lex(src: string): Lexed {
  const tokens: Token[] = [];
  const semicolons: number[] = [];
  let depth = 0;
  let i = 0;
  const n = src.length;

  const quoted = (q: string, type: 'string' | 'quoted'): void => {
    const r = readQuoted(src, i, q, type);
    tokens.push({ type, text: r.text, depth, pos: i, ...(r.escaped ? { escaped: true } : {}) });
    i = r.end;
  };

  while (i < n) {
    const c = src[i]!;
    const next = src[i + 1];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f' || c === '\v') {
      i += 1;
    } else if ((c === '-' && next === '-') || c === '#') {
      while (i < n && src[i] !== '\n') i += 1;
    } else if (c === '/' && next === '*') {
      i = blockCommentEnd(src, i);
    } else if (c === "'") {
      quoted("'", 'string');
    } else if (c === '"' || c === '`') {
      quoted(c, 'quoted');
    } else if (c === '$' && /^\$[A-Za-z0-9_]*\$/.test(src.slice(i, i + DOLLAR_TAG_MAX_CHARS))) {
      // Heredoc string: $tag$ … $tag$ (the tag may be empty).
      const tag = /^\$[A-Za-z0-9_]*\$/.exec(src.slice(i, i + DOLLAR_TAG_MAX_CHARS))![0];
      const end = src.indexOf(tag, i + tag.length);
      if (end < 0) throw new LexError(`unterminated heredoc string starting at position ${i + 1}`);
      tokens.push({ type: 'string', text: src.slice(i + tag.length, end), depth, pos: i });
      i = end + tag.length;
    } else if (isDigit(c) || (c === '.' && next !== undefined && isDigit(next))) {
      const start = i;
      while (i < n && /[0-9A-Za-z_.]/.test(src[i]!)) {
        // Exponent signs belong to the number (1e-5).
        if ((src[i] === 'e' || src[i] === 'E') && (src[i + 1] === '-' || src[i + 1] === '+') && !/^0x/i.test(src.slice(start, i))) i += 2;
        else i += 1;
      }
      tokens.push({ type: 'number', text: src.slice(start, i), depth, pos: start });
    } else if (isWordStart(c)) {
      const start = i;
      while (i < n && isWordChar(src[i]!)) i += 1;
      tokens.push({ type: 'word', text: src.slice(start, i), depth, pos: start });
    } else {
      if (c === ';') semicolons.push(i);
      if (c === '(' || c === '[') {
        tokens.push({ type: 'punct', text: c, depth, pos: i });
        depth += 1;
      } else if (c === ')' || c === ']') {
        depth = Math.max(0, depth - 1);
        tokens.push({ type: 'punct', text: c, depth, pos: i });
      } else {
        tokens.push({ type: 'punct', text: c, depth, pos: i });
      }
      i += 1;
    }
  }
  return { tokens, semicolons };
}

export const isKeyword = (t: Token | undefined, word: string): boolean => t !== undefined && t.type === 'word' && t.text.toUpperCase() === word;

export interface OuterLimit {
  /** The outermost query's LIMIT row count, when it has one. */
  length: number | undefined;
  /** True when a LIMIT exists but is not a plain integer literal. */
  nonLiteral: boolean;
  /** True when an OFFSET clause stands without a LIMIT. */
  offsetOnly: boolean;
}

/**
 * The outermost LIMIT of a query in the engine's canonical form (formatQuerySingleLine):
 * `LIMIT n`, `LIMIT off, n`, `LIMIT n OFFSET off`, possibly `WITH TIES`. `LIMIT n BY …`
 * is a per-group limit, not the result limit, and is skipped.
 */
export function outerLimit(canonical: string): OuterLimit {
  const top = lex(canonical).tokens.filter((t) => t.depth === 0);
  let found: OuterLimit = { length: undefined, nonLiteral: false, offsetOnly: false };
  let sawOffset = false;
  for (let k = 0; k < top.length; k++) {
    const t = top[k]!;
    if (isKeyword(t, 'OFFSET')) sawOffset = true;
    if (!isKeyword(t, 'LIMIT')) continue;
    // Collect the clause up to the next clause keyword.
    const clause: Token[] = [];
    let j = k + 1;
    while (j < top.length && !['LIMIT', 'SETTINGS', 'FORMAT', 'UNION', 'EXCEPT', 'INTERSECT', 'INTO'].includes(top[j]!.text.toUpperCase())) {
      clause.push(top[j]!);
      j += 1;
    }
    if (clause.some((c) => isKeyword(c, 'BY'))) continue;
    const offsetAt = clause.findIndex((c) => isKeyword(c, 'OFFSET'));
    const head = offsetAt >= 0 ? clause.slice(0, offsetAt) : clause.filter((c) => !isKeyword(c, 'WITH') && !isKeyword(c, 'TIES'));
    // `off, n` or `n`
    const parts = head.length === 3 && head[1]!.text === ',' ? [head[0]!, head[2]!] : head;
    const lengthTok = parts.length === 2 ? parts[1] : parts.length === 1 ? parts[0] : undefined;
    if (lengthTok && lengthTok.type === 'number' && /^\d+$/.test(lengthTok.text)) {
      found = { length: Number(lengthTok.text), nonLiteral: false, offsetOnly: false };
    } else {
      found = { length: undefined, nonLiteral: true, offsetOnly: false };
    }
  }
  if (found.length === undefined && !found.nonLiteral && sawOffset) found.offsetOnly = true;
  return found;
}

/** Names declared by `WITH name AS (…)` anywhere in the canonical text. */
export function cteNames(canonical: string): string[] {
  const toks = lex(canonical).tokens;
  const names: string[] = [];
  for (let k = 0; k + 2 < toks.length; k++) {
    const name = toks[k]!;
    if ((name.type === 'word' || name.type === 'quoted') && isKeyword(toks[k + 1], 'AS') && toks[k + 2]!.text === '(' && toks[k + 2]!.type === 'punct') {
      const prev = toks[k - 1];
      if (prev && (isKeyword(prev, 'WITH') || isKeyword(prev, 'RECURSIVE') || (prev.type === 'punct' && prev.text === ','))) names.push(name.text);
    }
  }
  return names;
}
