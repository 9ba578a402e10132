// The dashboard's usage page in figures: the usage rows of some keys over a span, summed per
// bucket (every bucket present, so the chart's time axis is even), per interface, per key and
// per method (the busiest and the costliest), with the totals.
import { USAGE_TOP_METHODS } from '../../../core/limits/dashboard.ts';
import type { ApiKeyRecord } from '../../../warehouse/api-key-store.ts';
import type { UsageBucket } from '../../../warehouse/usage-store.ts';

/** The interfaces usage is counted under (each route's policy: api/services/access/route-policy.ts). */
const INTERFACES = ['rpc', 'rest', 'sql', 'graphql', 'mcp', 'other'] as const;

export function summariseUsage(rows: readonly UsageBucket[], keys: readonly ApiKeyRecord[], fromMs: number, toMs: number, bucketMs: number) {
  // One point per bucket over the whole span (empty buckets are zeros, so the chart's
  // time axis is even), each interface separately, plus errors and rate-limit refusals.
  const buckets = new Map<number, Record<string, number>>();
  for (let t = fromMs; t < toMs; t += bucketMs) {
    buckets.set(t, { t: t / 1000, rpc: 0, rest: 0, sql: 0, graphql: 0, mcp: 0, other: 0, errors: 0, rateLimited: 0, cost: 0 });
  }
  // Cost per key over time: one series per key of the answer.
  const keyCost = new Map(
    keys.map((k) => [k.id, { keyId: k.id, name: k.name, requests: 0, cost: 0, rowsRead: 0, bytesRead: 0, buckets: new Map<number, number>() }]),
  );
  const byInterface: Record<string, number> = Object.fromEntries(INTERFACES.map((i) => [i, 0]));
  const byMethod = new Map<string, { requests: number; cost: number; rowsRead: number; buckets: Map<number, number> }>();
  let cost = 0;
  let requests = 0;
  let errors = 0;
  let rateLimited = 0;
  for (const r of rows) {
    const b = buckets.get(Date.parse(r.bucket));
    const iface = (INTERFACES as readonly string[]).includes(r.interface) ? r.interface : 'other';
    if (b !== undefined) {
      b[iface]! += r.requests;
      b.errors! += r.errors;
      b.rateLimited! += r.rateLimited;
      b.cost! += r.cost;
    }
    const k = keyCost.get(r.keyId);
    if (k !== undefined) {
      k.requests += r.requests;
      k.cost += r.cost;
      k.rowsRead += r.rowsRead;
      k.bytesRead += r.bytesRead;
      k.buckets.set(Date.parse(r.bucket), (k.buckets.get(Date.parse(r.bucket)) ?? 0) + r.cost);
    }
    byInterface[iface]! += r.requests;
    const label = `${iface} ${r.method}`;
    const m = byMethod.get(label) ?? { requests: 0, cost: 0, rowsRead: 0, buckets: new Map<number, number>() };
    m.buckets.set(Date.parse(r.bucket), (m.buckets.get(Date.parse(r.bucket)) ?? 0) + r.cost);
    m.requests += r.requests;
    m.cost += r.cost;
    m.rowsRead += r.rowsRead;
    byMethod.set(label, m);
    cost += r.cost;
    requests += r.requests;
    errors += r.errors;
    rateLimited += r.rateLimited;
  }
  return {
    totals: { requests, errors, rateLimited, cost, byInterface },
    // Busiest methods, and the costliest (cost in the plan's units: docs/access.md, "The cost of every answer").
    methods: [...byMethod]
      .sort((a, b) => b[1].requests - a[1].requests)
      .slice(0, USAGE_TOP_METHODS)
      .map(([label, m]) => ({ label, requests: m.requests, cost: m.cost, rowsRead: m.rowsRead })),
    // With their cost per bucket, for the chart of cost per method over time.
    costlyMethods: [...byMethod]
      .filter(([, m]) => m.cost > 0)
      .sort((a, b) => b[1].cost - a[1].cost)
      .slice(0, USAGE_TOP_METHODS)
      .map(([label, m]) => ({
        label,
        requests: m.requests,
        cost: m.cost,
        rowsRead: m.rowsRead,
        costPerBucket: [...buckets.keys()].map((t) => m.buckets.get(t) ?? 0),
      })),
    keys: [...keyCost.values()].map((k) => ({
      keyId: k.keyId,
      name: k.name,
      requests: k.requests,
      cost: k.cost,
      rowsRead: k.rowsRead,
      bytesRead: k.bytesRead,
      costPerBucket: [...buckets.keys()].map((t) => k.buckets.get(t) ?? 0),
    })),
    buckets: [...buckets.values()],
  };
}
