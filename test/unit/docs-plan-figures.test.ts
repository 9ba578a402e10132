// The plan and budget figures the docs state are the code's: every row of the figure tables
// of docs/access.md ("Plans", "Budgets") and docs/exports.md ("Limits") is read, each cell
// parsed ("64 MiB", "100M", "½", "10 %", "1,000,000") and compared with the constant the row
// names (core/plans.ts, core/limits/, core/budget.ts). A row naming no constant known here
// fails too, so a new row comes with its check. (The docs said 256 MiB and 1 GiB of answer
// memory for x402 and enterprise while the code held 128 and 256 MiB.)
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BYTES_PER_BUDGET_ROW } from '../../core/budget.ts';
import { ANSWER_BUDGET_BYTES, DOOR_WALL_MS, type Door } from '../../core/limits/answers.ts';
import { SQL_TIMEOUT_SECONDS } from '../../core/limits/sql.ts';
import {
  PLAN_ANSWER_MEMORY_BYTES,
  PLAN_CONCURRENCY,
  PLAN_EXPORT_DISK_SHARE,
  PLAN_EXPORT_JOB_BYTES,
  PLAN_EXPORT_KEY_BYTES,
  PLAN_EXPORT_MAX_JOBS,
  PLAN_EXPORT_MAX_ROWS,
  PLAN_HEAVY_SHARE,
  PLAN_JOIN_ROWS,
  PLAN_LIMITS,
  PLAN_MEMORY_BYTES,
  PLAN_QUERY_BUDGET,
  PLAN_SESSION_STATEMENTS,
  PLANS,
  type Plan,
} from '../../core/plans.ts';

const doc = (name: string): string => readFileSync(new URL(`../../docs/${name}`, import.meta.url), 'utf8');

/** The rows of the first Markdown table after `heading` (header and rule lines dropped), as cells. */
function tableAfter(text: string, heading: string): string[][] {
  const at = text.indexOf(heading);
  if (at < 0) throw new Error(`no "${heading}" in the document`);
  const lines = text.slice(at).split('\n');
  const start = lines.findIndex((l) => l.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(start)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split('|')
        .map((c) => c.trim()),
    );
  }
  return rows.slice(2);
}

const UNITS: Readonly<Record<string, number>> = {
  '': 1,
  K: 1e3,
  M: 1e6,
  B: 1e9,
  KiB: 1024,
  MiB: 1024 ** 2,
  GiB: 1024 ** 3,
  TiB: 1024 ** 4,
  KB: 1e3,
  MB: 1e6,
  GB: 1e9,
  TB: 1e12,
  '%': 0.01,
  s: 1,
};

/** A figure as the docs write it: "64 MiB", "100M", "1,000,000", "10 %", "30 s", "½", "all", "1 (…)". */
function figure(cell: string): number {
  const c = cell.replace(/\s*\(.*\)$/, '').trim();
  if (c === '½') return 0.5;
  if (c === '¾') return 0.75;
  if (c === 'all') return 1;
  const m = /^(\d[\d,]*(?:\.\d+)?)\s*([A-Za-z%]*)$/.exec(c);
  if (m === null || UNITS[m[2]!] === undefined) throw new Error(`not a figure: "${cell}"`);
  const n = Number(m[1]!.replace(/,/g, '')) * UNITS[m[2]!]!;
  // 102.4 x 1e9 is not exactly 102400000000 in floating point; whole units are whole numbers.
  return UNITS[m[2]!]! >= 1 ? Math.round(n) : n;
}

type PerPlan = (plan: Plan) => number;
const of =
  (table: Readonly<Record<Plan, number>>): PerPlan =>
  (plan) =>
    table[plan];

/** Per-plan figures by the constant a row names (the first backquoted name of the row that is one of these). */
const PLAN_FIGURES: Readonly<Record<string, PerPlan>> = {
  PLAN_QUERY_BUDGET: of(PLAN_QUERY_BUDGET),
  BYTES_PER_BUDGET_ROW: (plan) => PLAN_QUERY_BUDGET[plan] * BYTES_PER_BUDGET_ROW,
  PLAN_JOIN_ROWS: of(PLAN_JOIN_ROWS),
  PLAN_MEMORY_BYTES: of(PLAN_MEMORY_BYTES),
  PLAN_HEAVY_SHARE: of(PLAN_HEAVY_SHARE),
  PLAN_SESSION_STATEMENTS: of(PLAN_SESSION_STATEMENTS),
  PLAN_ANSWER_MEMORY_BYTES: of(PLAN_ANSWER_MEMORY_BYTES),
  EXPORT_MAX_ROWS_FREE: of(PLAN_EXPORT_MAX_ROWS),
  EXPORT_MAX_JOBS_FREE: of(PLAN_EXPORT_MAX_JOBS),
  PLAN_EXPORT_JOB_BYTES: of(PLAN_EXPORT_JOB_BYTES),
  PLAN_EXPORT_KEY_BYTES: of(PLAN_EXPORT_KEY_BYTES),
  PLAN_EXPORT_DISK_SHARE: of(PLAN_EXPORT_DISK_SHARE),
  SQL_TIMEOUT_SECONDS: () => SQL_TIMEOUT_SECONDS,
};

/** The constant a row names: the first backquoted name that PLAN_FIGURES knows. */
function constantOf(row: string[]): string | undefined {
  return [...row.join(' ').matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!).find((n) => n in PLAN_FIGURES);
}

/** Compare a table whose cells `columns` hold the plans' figures in PLANS order. */
function checkPlanTable(rows: string[][], columns: (row: string[]) => string[]): void {
  expect(rows.length).toBeGreaterThan(0);
  for (const row of rows) {
    const name = constantOf(row);
    expect(name, `a row naming no constant this test knows: ${row.join(' | ')}`).toBeDefined();
    const cells = columns(row);
    PLANS.forEach((plan, i) => {
      expect(figure(cells[i]!), `${name} for ${plan} ("${cells[i]}")`).toBe(PLAN_FIGURES[name!]!(plan));
    });
  }
}

describe("docs/access.md states the code's figures", () => {
  const access = doc('access.md');

  it('"Plans": requests per minute and requests in flight', () => {
    const rows = tableAfter(access, '### Plans');
    expect(rows.map((r) => r[0])).toEqual(PLANS.map((p) => `\`${p}\``));
    for (const [plan, perMinute, inFlight] of rows) {
      const p = plan!.replace(/`/g, '') as Plan;
      expect(figure(perMinute!), `${p} requests per minute`).toBe(PLAN_LIMITS[p]);
      expect(figure(inFlight!), `${p} requests in flight`).toBe(PLAN_CONCURRENCY[p]);
    }
  });

  it('"Budgets": every per-plan figure of a statement, the plans\' shares and answer memory', () => {
    // | what | where the number lives | free | x402 | enterprise |
    checkPlanTable(tableAfter(access, '## Budgets: one per request'), (row) => row.slice(2, 5));
  });

  it('"Budgets": each door\'s answer bytes and wall time', () => {
    // | door | routes | answer bytes | wall time |; doors without a figure say what bounds them instead.
    const rows = tableAfter(access, '| door | routes |');
    expect(rows.map((r) => r[0]!.replace(/`/g, '')).sort()).toEqual(Object.keys(ANSWER_BUDGET_BYTES).sort());
    for (const row of rows) {
      const door = row[0]!.replace(/`/g, '') as Door;
      if (/^\d/.test(row[2]!)) expect(figure(row[2]!), `${door} answer bytes`).toBe(ANSWER_BUDGET_BYTES[door]);
      if (/^\d/.test(row[3]!)) expect(figure(row[3]!) * 1000, `${door} wall time`).toBe(DOOR_WALL_MS[door]);
    }
  });
});

describe("docs/exports.md states the code's figures", () => {
  it('"Limits": rows, jobs, bytes, disk shares, statement time and rows read per plan', () => {
    // | limit | free | x402 | enterprise | setting |
    checkPlanTable(tableAfter(doc('exports.md'), '## Limits'), (row) => row.slice(1, 4));
  });
});

describe('reading a figure', () => {
  it("parses the docs' ways of writing one", () => {
    expect(figure('64 MiB')).toBe(64 * 1024 ** 2);
    expect(figure('100M')).toBe(1e8);
    expect(figure('102.4 GB')).toBe(102.4e9);
    expect(figure('1,000,000')).toBe(1e6);
    expect(figure('10 %')).toBeCloseTo(0.1);
    expect(figure('1 (on a serving session of its own)')).toBe(1);
    expect(figure('½')).toBe(0.5);
    expect(() => figure('about a lot')).toThrow();
  });
});
