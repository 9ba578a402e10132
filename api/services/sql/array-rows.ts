// How many rows one row becomes through ARRAY JOIN (or arrayJoin()), for the join pricing
// (join-cost.ts): the longest of the arrays joined, read from the parse tree where it is
// written out (a literal array, array(…), range(…) of literals) or measured for a table's
// array column; anything else cannot be priced and is Infinity (fail closed).
import type { AstNode } from './sql-ast.ts';

/** Rows one row becomes through ARRAY JOIN of `arrays` (zipped: the longest counts); `columnLength`: a table column's longest array. */
export async function arrayJoinFactor(arrays: readonly AstNode[], columnLength: ((column: string) => Promise<number>) | undefined): Promise<number> {
  let factor = 1;
  for (const a of arrays) {
    let n: number;
    if (a.kind === 'Literal' && a.detail.startsWith('Array_[')) n = literalArrayLength(a.detail);
    else if (a.kind === 'Function' && a.detail === 'array') n = a.children[0]?.children.length ?? 0;
    else if (a.kind === 'Function' && a.detail === 'range') n = rangeLength(a.children[0]?.children ?? []);
    else if (a.kind === 'Identifier' && columnLength !== undefined) n = await columnLength(a.detail.split('.').at(-1)!);
    else n = Infinity;
    factor = Math.max(factor, n);
  }
  return factor;
}

/** Nodes of one SELECT's own expressions (not of its subqueries). */
export function* ownNodes(select: AstNode): Generator<AstNode> {
  const stack = [...select.children];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.kind === 'Subquery' || n.kind === 'SelectWithUnionQuery' || n.kind === 'TablesInSelectQuery') continue;
    yield n;
    stack.push(...n.children);
  }
}

export const hasArrayJoin = (select: AstNode): boolean =>
  [...ownNodes(select)].some((n) => n.kind === 'Function' && n.detail === 'arrayJoin') ||
  (select.children.find((c) => c.kind === 'TablesInSelectQuery')?.children.some((e) => e.children.some((c) => c.kind === 'ArrayJoin')) ?? false);

/** Elements of a literal array as the dump prints it: `Array_[UInt64_1, UInt64_2]`. */
function literalArrayLength(detail: string): number {
  const body = detail.slice('Array_['.length, -1);
  if (body.trim() === '') return 0;
  let depth = 0;
  let quoted = false;
  let n = 1;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (quoted) {
      if (ch === '\\') i++;
      else if (ch === "'") quoted = false;
    } else if (ch === "'") quoted = true;
    else if (ch === '[' || ch === '(') depth++;
    else if (ch === ']' || ch === ')') depth--;
    else if (ch === ',' && depth === 0) n++;
  }
  return n;
}

/** range(end), range(start, end[, step]) with literal integers; anything else cannot be priced. */
function rangeLength(args: readonly AstNode[]): number {
  const nums = args
    .map((a) => (a.kind === 'Literal' ? /^(?:U?Int\d+)_(-?\d+)$/.exec(a.detail)?.[1] : undefined))
    .map((v) => (v === undefined ? NaN : Number(v)));
  if (nums.length < 1 || nums.length > 3 || nums.some((v) => !Number.isFinite(v))) return Infinity;
  const [start, end, step] = nums.length === 1 ? [0, nums[0]!, 1] : [nums[0]!, nums[1]!, nums[2] ?? 1];
  if (step <= 0) return Infinity;
  return Math.max(0, Math.ceil((end - start) / step));
}
