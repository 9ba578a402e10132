// The dependency rule of docs/architecture.md, read from the code's own import graph: a
// layer imports only the layers below it, benchmarks and scripts never import test code,
// and no module imports itself through a cycle. A new upward arrow fails here.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, sourceFiles } from '../support/source-scan.ts';

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

// Inside api/: one folder per layer (docs/architecture.md, "Layers inside api/"), highest
// first. A unit is a folder or a file; a file listed on its own belongs to that unit, not its
// folder's. Each layer imports only the layers below it; `peers` says whether units of one
// layer may import each other: each door (a folder of api/doors/) is a unit of its own, and
// doors may not import each other.
const API_LAYERS = ['server', 'doors', 'services', 'catalog', 'analytics'] as const;
type ApiLayer = (typeof API_LAYERS)[number];
/** The doors, each a folder of api/doors/: a new door is added here. */
const DOORS = ['admin', 'dashboard', 'exports', 'graphql', 'mcp', 'probes', 'rest', 'rpc', 'sql', 'user-metrics'] as const;
const API_UNITS: Readonly<Record<ApiLayer, readonly string[]>> = {
  // Wiring: the entry point, the app and the services it builds; may import anything.
  server: ['api/server'],
  // The doors: each maps its wire shape onto the catalog and the services, and words their errors.
  doors: DOORS.map((d) => `api/doors/${d}`),
  // Shared by several doors: access control, answers on their way out, x402 payments, export
  // jobs and SQL executions, the SQL sandbox, the freshness watermark, the positional calls
  // JSON-RPC and MCP share.
  services: ['api/services'],
  // The catalog of operations every door is derived from: names, request and answer schemas.
  catalog: ['api/catalog'],
  // The one analytics layer: below every door and service, above the warehouse.
  analytics: ['api/analytics'],
};
const API_LAYER_PEERS_MAY_IMPORT: Readonly<Record<ApiLayer, boolean>> = {
  server: true,
  doors: false,
  services: true,
  catalog: true,
  analytics: true,
};
const API_LAYER_OF = new Map(API_LAYERS.flatMap((l) => API_UNITS[l].map((u) => [path.normalize(u), l] as const)));
/** The unit of a file inside api/ (the most specific one listed), or undefined outside api/. */
function apiUnitOf(file: string): string | undefined {
  if (!file.startsWith(`api${path.sep}`)) return undefined;
  if (API_LAYER_OF.has(file)) return file;
  return [...API_LAYER_OF.keys()].filter((u) => file.startsWith(`${u}${path.sep}`)).sort((a, b) => b.length - a.length)[0];
}

/** Imports across the layers inside api/ that are still there, each with its owner and the way out.
 *  The owner removes the entry with the import; an entry whose import is gone fails the test. */
const API_LAYER_EXCEPTIONS: Readonly<Record<string, string>> = {};

/** Relative imports of a file (static, side-effect and dynamic), resolved to repository paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const specs = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'(\.[^']+)'|(?:^|\n)\s*import\s+'(\.[^']+)'|import\(\s*'(\.[^']+)'\s*\)/g)].map(
    (m) => m[1] ?? m[2] ?? m[3]!,
  );
  return specs.map((s) => path.normalize(path.join(path.dirname(file), s)));
}

const files = Object.keys(MAY_IMPORT).flatMap(sourceFiles);
const graph = new Map(files.map((f) => [f, importsOf(f)]));
const layerOf = (file: string): string => file.split(path.sep)[0]!;

describe('architecture', () => {
  it('reads a real graph', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(graph.get(path.join('api', 'server', 'app.ts'))).toContain(path.join('core', 'errors.ts'));
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

  it('inside api/, doors import services, the catalog and analytics, never each other, and nothing below imports upward', () => {
    const wrong: string[] = [];
    for (const [file, deps] of graph) {
      const from = apiUnitOf(file);
      if (from === undefined) continue;
      for (const dep of deps) {
        const to = apiUnitOf(dep);
        if (to === undefined || to === from) continue;
        const [fromLayer, toLayer] = [API_LAYER_OF.get(from)!, API_LAYER_OF.get(to)!];
        const rank = (l: ApiLayer): number => API_LAYERS.indexOf(l);
        const ok = rank(toLayer) > rank(fromLayer) || (rank(toLayer) === rank(fromLayer) && API_LAYER_PEERS_MAY_IMPORT[fromLayer]);
        if (!ok) wrong.push(`${file} -> ${dep}`);
      }
    }
    expect(wrong.filter((w) => API_LAYER_EXCEPTIONS[w] === undefined)).toEqual([]);
    // An exception whose import is gone is removed from the list.
    expect(Object.keys(API_LAYER_EXCEPTIONS).filter((w) => !wrong.includes(w))).toEqual([]);
  });

  it('places every file of api/ in a layer', () => {
    const unplaced = files.filter((f) => f.startsWith(`api${path.sep}`) && apiUnitOf(f) === undefined);
    expect(unplaced).toEqual([]);
  });

  it('keeps one analytics shape: no helper of the analytics layer imports its facade', () => {
    const facade = path.join('api', 'analytics', 'analytics.ts');
    const helpers = [...graph].filter(([file, deps]) => file.startsWith(path.join('api', 'analytics') + path.sep) && file !== facade && deps.includes(facade));
    expect(helpers.map(([file]) => file)).toEqual([]);
  });

  it('keeps the catalog door-neutral: no file of api/catalog imports Fastify (routes are built in api/doors/rest/)', () => {
    const catalog = files.filter((f) => f.startsWith(path.join('api', 'catalog') + path.sep));
    expect(catalog.length).toBeGreaterThan(0);
    const fastify = catalog.filter((f) => /from\s+'fastify(?:\/[^']*)?'|from\s+'@fastify\//.test(readFileSync(path.join(ROOT, f), 'utf8')));
    expect(fastify).toEqual([]);
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
