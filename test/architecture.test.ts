// The dependency rule of docs/architecture.md, read from the code's own import graph: a
// layer imports only the layers below it, benchmarks and scripts never import test code,
// and no module imports itself through a cycle. A new upward arrow fails here.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');

/** Each top-level folder and the folders it may import (itself always allowed). */
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  core: [],
  warehouse: ['core'],
  ingest: ['core', 'warehouse'],
  api: ['core', 'warehouse', 'ingest'],
  scripts: ['core', 'warehouse', 'ingest', 'api'],
  bench: ['core', 'warehouse', 'ingest', 'api', 'scripts'],
  test: ['core', 'warehouse', 'ingest', 'api', 'scripts', 'bench'],
};

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && e.name !== 'tmp' && !e.name.startsWith('.')) out.push(...sourceFiles(rel));
    } else if (e.name.endsWith('.ts')) out.push(rel);
  }
  return out;
}

/** Relative imports of a file (static, side-effect and dynamic), resolved to repository paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const specs = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'(\.[^']+)'|(?:^|\n)\s*import\s+'(\.[^']+)'|import\(\s*'(\.[^']+)'\s*\)/g)]
    .map((m) => m[1] ?? m[2] ?? m[3]!);
  return specs.map((s) => path.normalize(path.join(path.dirname(file), s)));
}

const files = Object.keys(MAY_IMPORT).flatMap(sourceFiles);
const graph = new Map(files.map((f) => [f, importsOf(f)]));
const layerOf = (file: string): string => file.split(path.sep)[0]!;

describe('architecture', () => {
  it('reads a real graph', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(graph.get(path.join('api', 'app.ts'))).toContain(path.join('core', 'errors.ts'));
  });

  it('every import points at a layer below (or the same one)', () => {
    const upward: string[] = [];
    for (const [file, deps] of graph) {
      const from = layerOf(file);
      for (const dep of deps) {
        const to = layerOf(dep);
        if (to !== from && !MAY_IMPORT[from]!.includes(to)) upward.push(`${file} -> ${dep}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('keeps one analytics shape: no helper of the analytics layer imports its facade', () => {
    const facade = path.join('api', 'analytics', 'analytics.ts');
    const helpers = [...graph].filter(([file, deps]) => file.startsWith(path.join('api', 'analytics') + path.sep) && file !== facade && deps.includes(facade));
    expect(helpers.map(([file]) => file)).toEqual([]);
  });

  it('has no import cycles', () => {
    const state = new Map<string, 'open' | 'done'>();
    const cycles: string[] = [];
    const visit = (f: string, trail: string[]): void => {
      if (state.get(f) === 'done') return;
      if (state.get(f) === 'open') {
        cycles.push([...trail.slice(trail.indexOf(f)), f].join(' -> '));
        return;
      }
      state.set(f, 'open');
      for (const d of graph.get(f) ?? []) if (graph.has(d)) visit(d, [...trail, f]);
      state.set(f, 'done');
    };
    for (const f of graph.keys()) visit(f, []);
    expect(cycles).toEqual([]);
  });

  it('the container image copies every layer the service runs from (read from the Dockerfile, which cannot be built here)', () => {
    const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    const copied = new Set([...dockerfile.matchAll(/^COPY (\S+) \.\/\1$/gm)].map((m) => m[1]));
    for (const layer of ['core', 'warehouse', 'ingest', 'api']) expect(copied, layer).toContain(layer);
  });
});

describe('table names defined once', () => {
  it('no SQL in the service layers names a table literally: it goes through TABLES (warehouse/tables.ts)', async () => {
    const { TABLES } = await import('../warehouse/tables.ts');
    const names = Object.values(TABLES).join('|');
    const literal = new RegExp(`\\b(FROM|JOIN|INTO|TABLE)\\s+(${names})\\b`);
    // The cluster renderer rewrites the migrations' own text; the SQL route's example is text for people.
    const allowed = new Set([path.join('warehouse', 'cluster-layout.ts'), path.join('api', 'sql', 'query-routes.ts')]);
    const offenders = ['api', 'ingest', 'warehouse']
      .flatMap(sourceFiles)
      .filter((f) => !allowed.has(f))
      .flatMap((f) => readFileSync(path.join(ROOT, f), 'utf8').split('\n').map((line, i) => ({ f, i, line })))
      // Prose in comments may name a table; code may not.
      .filter(({ line }) => literal.test(line) && !/^\s*(\/\/|\*|\/\*)/.test(line))
      .map(({ f, i, line }) => `${f}:${i + 1}: ${line.trim()}`);
    expect(offenders).toEqual([]);
  });
});
