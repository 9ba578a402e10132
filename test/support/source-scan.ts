// Reading the project's own source for the structural tests (test/unit/architecture.test.ts,
// test/unit/house-rules.test.ts): the files of a layer, their parse trees (rolldown's parser,
// the one vite already ships: TypeScript in, ESTree out) and a walk over a tree.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAst } from 'rolldown/parseAst';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');

/** The folders the service runs from (not test/, bench/, scripts/). */
export const SERVICE_DIRS = ['api', 'core', 'warehouse', 'ingest'] as const;

/** Every .ts file under `dir` (a path relative to the repository), as repository paths. */
export function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && e.name !== 'tmp' && !e.name.startsWith('.')) out.push(...sourceFiles(rel));
    } else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

export const serviceFiles = (): string[] => SERVICE_DIRS.flatMap(sourceFiles);

const texts = new Map<string, string>();
export function textOf(file: string): string {
  let t = texts.get(file);
  if (t === undefined) {
    t = readFileSync(path.join(ROOT, file), 'utf8');
    texts.set(file, t);
  }
  return t;
}

/** An ESTree node as the parser gives it (start/end are offsets into the file's text). */
export interface Node {
  type: string;
  start: number;
  end: number;
  [key: string]: unknown;
}

const trees = new Map<string, Node>();
export function treeOf(file: string): Node {
  let t = trees.get(file);
  if (t === undefined) {
    t = parseAst(textOf(file), { lang: 'ts' }, file) as unknown as Node;
    trees.set(file, t);
  }
  return t;
}

const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && typeof (v as Node).type === 'string';

/** Every node below `node`, depth first, with its parent; `visit` returning false skips a node's children. */
export function walk(node: Node, visit: (n: Node, parent: Node | undefined) => boolean | undefined, parent?: Node): void {
  if (visit(node, parent) === false) return;
  for (const [key, v] of Object.entries(node)) {
    if (key === 'parent') continue;
    if (Array.isArray(v)) for (const c of v) if (isNode(c)) walk(c, visit, node);
    if (isNode(v)) walk(v, visit, node);
  }
}

/** 1-based line of an offset. */
export function lineAt(file: string, offset: number): number {
  const text = textOf(file);
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** The source text of a node. */
export const sourceOf = (file: string, n: Node): string => textOf(file).slice(n.start, n.end);
