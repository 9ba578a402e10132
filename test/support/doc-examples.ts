// The shell examples of the Markdown docs, as a reader would copy them: fenced `sh`/`bash`
// blocks, split into commands (quotes, line continuations and here-documents kept whole),
// each with the comment lines after it (the answer the doc shows). A block the reader cannot
// run against a demo server (it starts processes, needs Kafka, is a historical attack) says so
// on the line before its fence: <!-- doc-test: skip: the reason -->.
import { readFileSync } from 'node:fs';

export interface DocCommand {
  /** 1-based line of the command's first line in the Markdown file. */
  line: number;
  text: string;
  /** The comment lines after the command (without '#'): the answer the doc shows. */
  shown: string;
}

export interface DocBlock {
  file: string;
  line: number;
  lang: string;
  /** Why the block is not run, when it says so. */
  skip: string | null;
  /** The block's text, as written between its fences. */
  text: string;
  commands: DocCommand[];
}

const SHELL = new Set(['sh', 'bash', 'shell', 'console']);
const SKIP = /<!--\s*doc-test:\s*skip:?\s*(.*?)\s*-->/;

/** Every fenced block of a Markdown file (shell ones split into commands). */
export function docBlocks(file: string): DocBlock[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const out: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)/.exec(lines[i]!);
    if (!open) continue;
    let end = i + 1;
    while (end < lines.length && !/^```\s*$/.test(lines[end]!)) end++;
    let prev = i - 1;
    while (prev >= 0 && lines[prev]!.trim() === '') prev--;
    const skip = prev >= 0 ? (SKIP.exec(lines[prev]!)?.[1] ?? null) : null;
    const lang = open[1]!.toLowerCase();
    out.push({
      file,
      line: i + 1,
      lang,
      skip,
      text: lines.slice(i + 1, end).join('\n'),
      commands: SHELL.has(lang) ? splitCommands(lines.slice(i + 1, end), i + 2) : [],
    });
    i = end;
  }
  return out;
}

/** True when `text` leaves a quote open (so the command goes on to the next line). */
function openQuote(text: string): boolean {
  let q: "'" | '"' | null = null;
  for (let k = 0; k < text.length; k++) {
    const c = text[k]!;
    if (q === "'") {
      if (c === "'") q = null;
      continue;
    }
    if (c === '\\') {
      k++;
      continue;
    }
    if (q === '"') {
      if (c === '"') q = null;
      continue;
    }
    if (c === "'" || c === '"') q = c;
    else if (c === '#' && (k === 0 || /\s/.test(text[k - 1]!))) {
      const nl = text.indexOf('\n', k);
      if (nl < 0) break;
      k = nl;
    }
  }
  return q !== null;
}

function splitCommands(lines: string[], firstLine: number): DocCommand[] {
  const out: DocCommand[] = [];
  let k = 0;
  while (k < lines.length) {
    const l = lines[k]!;
    if (l.trim() === '' || l.trim().startsWith('#')) {
      const last = out.at(-1);
      if (last && l.trim().startsWith('#')) last.shown += `${l.trim().slice(1).trim()}\n`;
      k++;
      continue;
    }
    const start = k;
    let text = l;
    const heredoc = /<<-?\s*'?"?(\w+)'?"?/.exec(l);
    if (heredoc) {
      while (k + 1 < lines.length && lines[k + 1]!.trim() !== heredoc[1]) text += `\n${lines[++k]!}`;
      if (k + 1 < lines.length) text += `\n${lines[++k]!}`;
    } else {
      while (k + 1 < lines.length && (/\\$/.test(text) || openQuote(text))) text += `\n${lines[++k]!}`;
    }
    out.push({ line: firstLine + start, text, shown: '' });
    k++;
  }
  return out;
}

/** An answer with nothing in it: the symptom of an example whose dates or ids miss the data. */
export function emptinessOf(output: string): string | null {
  const body = output.trim();
  if (body === '') return 'no output';
  const compact = body.replace(/\s+/g, '');
  for (const token of ['"data":[]', '"result":null', '"result":[]', '"edges":[]', '"count":0,', '"count":0}', '"totalTransactions":0', '"rows":0']) {
    if (compact.includes(token)) return `an empty answer (${token})`;
  }
  if (/^\[\]$|^null$|^\{\}$/.test(compact)) return `an empty answer (${compact})`;
  return null;
}

/** An error answer (JSON-RPC error, REST/SQL {error, message}, GraphQL errors, an HTTP error page). */
export function errorOf(output: string): string | null {
  const compact = output.replace(/\s+/g, '');
  const m = /"error":\{[^}]*\}|"errors":\[(?!\])|\{"error":"[^"]*","message":"[^"]*"|"statusCode":[45]\d\d/.exec(compact);
  return m ? m[0].slice(0, 200) : null;
}

/** A command that asks the service for CSV (the SQL door's `/csv` operation or `"format": "csv"`). */
export const asksForCsv = (command: string): boolean => /\/csv\b|"format"\s*:\s*"csv"/i.test(command);

/**
 * Where an answer differs from the lines the doc shows under its command, or null: each shown
 * line against the answer's line at the same place from the top (CRLF line ends read as lines),
 * `…` standing for any text. For answers shown whole-line, as CSV is.
 */
export function shownLinesMismatch(shown: string, output: string): string | null {
  const want = shown.split('\n').filter((l) => l.trim() !== '');
  const got = output.split(/\r?\n/);
  for (const [i, line] of want.entries()) {
    const pattern = new RegExp(
      `^${line
        .split('…')
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*?')}$`,
    );
    if (!pattern.test(got[i] ?? '')) return `line ${i + 1} is ${JSON.stringify((got[i] ?? '(none)').slice(0, 200))}, the doc shows ${JSON.stringify(line)}`;
  }
  return null;
}
