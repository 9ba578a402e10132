// Numbers of JSON-RPC 2.0 messages as the client wrote them, for both doors that read such
// messages (JSON-RPC's calls, MCP's tool calls): one scanner, so a number JSON.parse rounds is
// refused alike on both. JSON.parse turns 9007199254740993 into 9007199254740992 and
// 0.10000000000000000001 into 0.1, so echoing a parsed id would answer a different id, and a
// parsed argument would be a value the client did not send. Node 20's JSON.parse reviver gets no source text, and a regular
// expression over the body cannot tell an "id" member of a call from one inside params or
// inside a string; so this walks the raw text with a small string-aware scanner (text that
// JSON.parse has already accepted, so only its structure matters), iteratively (no
// recursion, whatever the nesting), and reads the source token of each call's own "id".

import { QUOTED_NUMBER_MAX_CHARS } from '../../../core/limits/questions.ts';

/** What can make JSON.parse lose digits: a fraction or an exponent (a digit before a decimal
 *  point or an exponent; a number's last integer digit never follows a quote), or 16 digits in
 *  a row (an integer past 2^53 has at least 16); strings that look alike just let the scans
 *  run. The "2.0" every message carries as its version is no number. */
export const MAYBE_INEXACT = /(?<!")\d[.eE]|\d[eE]|\d\.(?!0")|\d{16}/;

/** The words of a number refused because JSON.parse could not keep it, on every door that reads JSON-RPC messages. */
export const inexactNumberWords = (token: string): string =>
  `the number ${token.slice(0, QUOTED_NUMBER_MAX_CHARS)} cannot be represented exactly (JSON numbers are doubles) and would be read as ` +
  `${JSON.stringify(Number(token))}; send the value you mean, e.g. a whole number of seconds`;

/**
 * The source token of the "id" member of each call: index 0 for a single call (a top-level
 * object), index i for the i-th element of a batch (a top-level array). undefined where the
 * call has no numeric id. Duplicate keys resolve as in JSON.parse: the last one wins.
 * `text` must be valid JSON.
 */
export function numericIdTokens(text: string): (string | undefined)[] {
  const out: (string | undefined)[] = [];
  const stack: number[] = []; // open containers: OBJ or ARR
  let element = 0; // index of the current element of a top-level array
  let expectKey = false; // inside an object, before a member name
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (expectKey && stack.at(-1) === OBJ && isCallDepth(stack)) {
        // A member name of a call object: read it (escapes decoded by JSON.parse) and, for
        // "id", the token of its value.
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        let j = skipSpace(text, end + 1);
        j = skipSpace(text, j + 1); // past ':'
        if (key === 'id') out[stack.length === 1 ? 0 : element] = numberToken(text, j);
        expectKey = false;
        i = j;
        continue;
      }
      expectKey = false;
      i = end + 1;
      continue;
    }
    if (c === OPEN_OBJ || c === OPEN_ARR) {
      stack.push(c === OPEN_OBJ ? OBJ : ARR);
      expectKey = c === OPEN_OBJ;
    } else if (c === CLOSE_OBJ || c === CLOSE_ARR) {
      stack.pop();
      expectKey = false;
    } else if (c === COMMA) {
      if (stack.length === 1 && stack[0] === ARR) element += 1;
      expectKey = stack.at(-1) === OBJ;
    }
    i += 1;
  }
  return out;
}

/**
 * Per call (index as in numericIdTokens), the first number nested inside the call's members
 * (its params) whose source text JSON.parse could not keep exactly: 1793999934.0000001
 * parses to 1793999934 and would silently move a range bound by a second. `text` must be
 * valid JSON.
 */
export function inexactNestedNumbers(text: string): (string | undefined)[] {
  const out: (string | undefined)[] = [];
  // Only a fraction or an exponent can lose digits below 2^53; skip the scan otherwise.
  if (!/\d[.eE]/.test(text)) return out;
  const stack: number[] = [];
  let element = 0;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEnd(text, i) + 1;
      continue;
    }
    if (c === OPEN_OBJ || c === OPEN_ARR) stack.push(c === OPEN_OBJ ? OBJ : ARR);
    else if (c === CLOSE_OBJ || c === CLOSE_ARR) stack.pop();
    else if (c === COMMA) {
      if (stack.length === 1 && stack[0] === ARR) element += 1;
    } else if (c === MINUS || (c >= DIGIT_0 && c <= DIGIT_9)) {
      const token = numberToken(text, i)!;
      // Deeper than the call object itself: inside params (the id is checked on its own).
      const callDepth = stack[0] === ARR ? 2 : 1;
      if (stack.length > callDepth && !echoesExactly(token, Number(token))) {
        const index = stack[0] === ARR ? element : 0;
        out[index] ??= token;
      }
      i += token.length;
      continue;
    }
    i += 1;
  }
  return out;
}

const MINUS = 0x2d;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJ = 0x7b;
const CLOSE_OBJ = 0x7d;
const OPEN_ARR = 0x5b;
const CLOSE_ARR = 0x5d;
const COMMA = 0x2c;
const OBJ = 1;
const ARR = 2;

/** A call object is the top-level object, or an object directly inside a top-level array. */
const isCallDepth = (stack: number[]): boolean => (stack.length === 1 && stack[0] === OBJ) || (stack.length === 2 && stack[0] === ARR && stack[1] === OBJ);

/** Index of the quote closing the string that opens at `start`. */
function stringEnd(text: string, start: number): number {
  let j = start + 1;
  for (;;) {
    const c = text.charCodeAt(j);
    if (c === QUOTE) return j;
    j += c === BACKSLASH ? 2 : 1;
  }
}

function skipSpace(text: string, from: number): number {
  let j = from;
  while (j < text.length && ' \t\n\r'.includes(text[j]!)) j += 1;
  return j;
}

/** The JSON number starting at `at`, or undefined when the value there is not a number. */
function numberToken(text: string, at: number): string | undefined {
  let j = at;
  while (j < text.length && '+-0123456789.eE'.includes(text[j]!)) j += 1;
  return j > at ? text.slice(at, j) : undefined;
}

/** A decimal numeral in a canonical form (sign, significant digits, exponent), so that two
 *  spellings of one number (1.50, 15e-1) compare equal and different numbers never do. */
function canonicalDecimal(token: string): string | undefined {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(token);
  if (!m) return undefined;
  let digits = `${m[2]}${m[3] ?? ''}`.replace(/^0+/, '');
  let exp = Number(m[4] ?? 0) - (m[3]?.length ?? 0);
  if (digits === '') return '0';
  const trimmed = digits.replace(/0+$/, '');
  exp += digits.length - trimmed.length;
  digits = trimmed;
  return `${m[1]}${digits}e${exp}`;
}

/** Does echoing `value` (as JSON.stringify writes it) reproduce the number the client sent? */
export function echoesExactly(token: string | undefined, value: number): boolean {
  if (token === undefined || !Number.isFinite(value)) return false;
  const sent = canonicalDecimal(token);
  return sent !== undefined && sent === canonicalDecimal(JSON.stringify(value));
}
