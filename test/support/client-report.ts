// What a generated-client driver (scripts/clients/call_with_{ts,go}_client.*) reports, read
// against the served OpenAPI document: which operations the document has, which of them the
// requests the client sent were (each request's method and path matched to the operation whose
// path template it fits), and which calls failed.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startApiService, type ApiService } from '../../scripts/daemons/api-service.ts';

type Operation = { operationId?: string };

export interface ClientReport {
  /** Per operationId: whether the call and its checks passed, and what it read or why not. */
  results: Record<string, { ok: boolean; detail: string }>;
  /** Every request the generated client sent: "GET /v1/exports/exp_1/files/a.csv". */
  wire: string[];
}

interface Route {
  operationId: string;
  method: string;
  pattern: RegExp;
  literals: number;
}

function routesOf(doc: { paths: Record<string, Record<string, Operation>> }): Route[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({
      operationId: op.operationId ?? `${method.toUpperCase()} ${path}`,
      method: method.toUpperCase(),
      pattern: new RegExp(
        `^${path
          .split(/\{[^}]+\}/)
          .map((s) => s.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
          .join('[^/]+')}$`,
      ),
      literals: path.replace(/\{[^}]+\}/g, '').length,
    })),
  );
}

/** The document's operationIds, sorted. */
export function documentedOperations(doc: { paths: Record<string, Record<string, Operation>> }): string[] {
  return routesOf(doc)
    .map((r) => r.operationId)
    .sort();
}

/**
 * The operations the sent requests were, sorted, and the requests no operation of the document
 * answers. A path several templates fit is the one with the most literal characters
 * (`/v1/exports/links/{id}/{name}` rather than a template with more parameters).
 */
export function operationsSent(doc: { paths: Record<string, Record<string, Operation>> }, wire: string[]): { called: string[]; unknown: string[] } {
  const routes = routesOf(doc);
  const called = new Set<string>();
  const unknown: string[] = [];
  for (const request of wire) {
    const [method, path] = request.split(' ') as [string, string];
    const fits = routes.filter((r) => r.method === method && r.pattern.test(path)).sort((a, b) => b.literals - a.literals);
    if (fits[0] === undefined) unknown.push(request);
    else called.add(fits[0].operationId);
  }
  return { called: [...called].sort(), unknown };
}

/** The failed calls, one paragraph each ('' when none failed). */
export function failures(report: ClientReport): string {
  return Object.entries(report.results)
    .filter(([, r]) => !r.ok)
    .map(([op, r]) => `${op}:\n${r.detail}`)
    .join('\n\n');
}

/**
 * The set-up every generated-client test shares: the service with demo records and an
 * enterprise key named `client`, the generator made ready beside it (`prepareTool` answers
 * its path), and the served document, also written to `openapi.json` in a new temp folder.
 */
export async function servedDocument<D>(
  client: string,
  prepareTool: () => Promise<string>,
): Promise<{ service: ApiService; tool: string; key: string; dir: string; doc: D }> {
  const [service, tool] = await Promise.all([startApiService({ demoRows: 5_000 }), prepareTool()]);
  const key = (await service.createKey('enterprise', `${client}-client`)).key;
  const dir = mkdtempSync(path.join(tmpdir(), `txa-${client}client-`));
  const doc = (await (await fetch(`${service.url}/api/v1/openapi.json`)).json()) as D;
  writeFileSync(path.join(dir, 'openapi.json'), JSON.stringify(doc));
  return { service, tool, key, dir, doc };
}
