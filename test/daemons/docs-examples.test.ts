// The docs are tested: every shell example of README.md and docs/*.md runs, as written, against
// a started demo server (npm start's code path: api/server/main.ts seeding demo data into an empty
// store). A reader copies a doc's blocks in order into one shell, so each doc runs as one bash
// session: variables and ids set by an earlier example serve the later ones. Only three things
// are put in, as a reader would: the server's address for http://127.0.0.1:8080 (and
// localhost:8080), a key for `your-api-key`, the operator token for `your-admin-token`.
// A command that calls the service fails the test when it exits non-zero, answers nothing or
// an empty answer (no records, null, count 0) or an error, unless the answer the doc shows
// under it is empty or an error too. Blocks that cannot run here say why
// (<!-- doc-test: skip: ... --> before the fence).
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiService, type ApiService } from '../../scripts/daemons/api-service.ts';
import { asksForCsv, docBlocks, emptinessOf, errorOf, shownLinesMismatch, type DocBlock, type DocCommand } from '../support/doc-examples.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const DOCS = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];
const SHELL = new Set(['sh', 'bash', 'shell', 'console']);

let service: ApiService;
let key: string;
let work: string;

beforeAll(async () => {
  service = await startApiService({ demoRows: 20_000 });
  key = (await service.createKey('enterprise', 'docs')).key;
  // The reader's working directory: downloads land here, `npm run` finds the project.
  work = mkdtempSync(path.join(tmpdir(), 'txa-docs-'));
  for (const entry of readdirSync(ROOT)) {
    if (!entry.startsWith('.') && entry !== 'data') symlinkSync(path.join(ROOT, entry), path.join(work, entry));
  }
}, 240_000);
afterAll(async () => {
  await service?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

const blocksOf = (doc: string): DocBlock[] => docBlocks(path.join(ROOT, doc)).map((b) => ({ ...b, file: doc }));

function substitute(text: string): string {
  return text
    .replaceAll('http://127.0.0.1:8080', service.url)
    .replaceAll('http://localhost:8080', service.url)
    .replace(/(?<![\w/.])localhost:8080/g, service.url)
    .replaceAll('your-api-key', key)
    .replaceAll('your-admin-token', service.adminToken);
}

/** Run a doc's commands in one bash; returns each command's output (stdout and stderr) and exit code. */
function runDoc(commands: DocCommand[]): Promise<{ out: string; rc: number }[]> {
  const script = ['exec 2>&1'];
  commands.forEach((c, i) => {
    script.push(`printf '\\n@@begin ${i}@@\\n'`, substitute(c.text), `printf '\\n@@end ${i} %d@@\\n' $?`);
  });
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['-c', script.join('\n')],
      { cwd: work, timeout: 180_000, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1' } },
      (_err, stdout) => {
        resolve(
          commands.map((_, i) => {
            const m = new RegExp(`@@begin ${i}@@\\n([\\s\\S]*?)\\n@@end ${i} (\\d+)@@`).exec(stdout);
            return m ? { out: m[1]!, rc: Number(m[2]) } : { out: `(did not run; the script stopped before it)\n${stdout.slice(-2000)}`, rc: -1 };
          }),
        );
      },
    );
  });
}

/** What is wrong with a command's result, or null. */
function problemOf(c: DocCommand, out: string, rc: number): string | null {
  if (rc !== 0) return `exit code ${rc}`;
  const definesFunction = /^\s*\w+\(\)\s*\{/.test(c.text);
  const callsService = !definesFunction && (/\bcurl\b/.test(c.text) || /^\s*[a-z_]+\s+'[[{]/.test(c.text));
  if (!callsService) return null;
  const file = /(?:^|\s)(?:-o|--output)\s+(\S+)/.exec(c.text)?.[1];
  if (file) {
    const size = statSync(path.join(work, file), { throwIfNoEntry: false })?.size ?? 0;
    return size > 0 ? null : `wrote no ${file}`;
  }
  const shown = c.shown.replace(/\s+/g, '');
  // A CSV answer the doc shows is compared line by line: its quoting is what a reader relies on.
  if (asksForCsv(c.text) && shown !== '') {
    const mismatch = shownLinesMismatch(c.shown, out);
    if (mismatch !== null) return `the CSV answer differs from the doc: ${mismatch}`;
  }
  const empty = emptinessOf(out);
  if (empty && emptinessOf(c.shown) === null) return empty;
  const error = errorOf(out);
  if (error && !/error|refused|4\d\d/i.test(shown)) return `an error: ${error}`;
  return null;
}

describe('comparing a CSV answer with the lines a doc shows', () => {
  it('matches line by line from the top, … standing for any text, CRLF line ends as lines', () => {
    const answer = '"protocol_name","n"\r\n"jupiter_v6",592\r\n"pump_fun",515\r\n';
    expect(shownLinesMismatch('"protocol_name","n"\n"jupiter_v6",…\n"pump_fun",…\n', answer)).toBeNull();
    // What docs/rest-and-sql.md showed before: unquoted names, and a first protocol the data does not have first.
    expect(shownLinesMismatch('protocol_name,n\npump_fun,…\n', answer)).toMatch(/^line 1 is "\\"protocol_name\\",\\"n\\"", the doc shows "protocol_name,n"$/);
    expect(shownLinesMismatch('"protocol_name","n"\n"pump_fun",…\n', answer)).toMatch(/^line 2 /);
    expect(asksForCsv('curl "$BASE/v1/query/csv" -d \'{"query": "SELECT 1"}\'')).toBe(true);
    expect(asksForCsv('curl "$BASE/api/v1/query" -d \'{"query": "SELECT 1", "format": "csv"}\'')).toBe(true);
    expect(asksForCsv('curl "$BASE/api/v1/query" -d \'{"query": "SELECT 1"}\'')).toBe(false);
  });
});

describe("the docs' shell examples", () => {
  it('are each run here, or say why not', () => {
    const unmarked: string[] = [];
    for (const doc of DOCS) {
      for (const b of blocksOf(doc)) {
        if (SHELL.has(b.lang) && b.skip === '') unmarked.push(`${doc}:${b.line}: a skip marker without a reason`);
      }
    }
    expect(unmarked).toEqual([]);
  });

  for (const doc of DOCS) {
    const commands = blocksOf(doc)
      .filter((b) => SHELL.has(b.lang) && b.skip === null)
      .flatMap((b) => b.commands);
    if (commands.length === 0) continue;
    it(`${doc}: every example answers with data, as written`, async () => {
      const results = await runDoc(commands);
      const problems = commands.flatMap((c, i) => {
        const p = problemOf(c, results[i]!.out, results[i]!.rc);
        return p ? [`${doc}:${c.line}: ${p}\n  $ ${c.text.slice(0, 300)}\n  > ${results[i]!.out.slice(0, 400)}`] : [];
      });
      expect(problems.join('\n\n')).toBe('');
    }, 200_000);
  }
});
