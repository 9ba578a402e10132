// The soak's short version (npm run soak runs it for 10 minutes): mixed traffic on every
// interface from keys of every plan, records streaming through a real Kafka broker, and an
// abusive client sending heavy SQL, against the service in its own process. Promises: no
// server error on any interface; every produced record stored exactly once; the service's
// RSS and event-loop lag are reported for every window (the RSS target needs the long run).
import { expect, it } from 'vitest';
import { runSoak } from '../../scripts/soak/soak.ts';

it('serves mixed traffic without a server error while Kafka streams in, and stores every record once', async () => {
  const report = await runSoak({ seconds: 40, rate: 20, produceRate: 500, windowSeconds: 10, log: () => undefined });
  expect(report.serverErrors).toEqual([]);
  expect(report.byOutcome['5xx'] ?? 0).toBe(0);
  expect(report.byOutcome.network ?? 0).toBe(0);
  // Every interface answered, and the abusive client was refused rather than served.
  const total = (iface: 'rpc' | 'rest' | 'sql' | 'graphql' | 'abusive', outcome: '2xx' | '4xx' | '429') =>
    report.windows.reduce((n, w) => n + (w.requests[iface][outcome] ?? 0), 0);
  for (const iface of ['rpc', 'rest', 'sql', 'graphql'] as const) expect(total(iface, '2xx'), iface).toBeGreaterThan(10);
  expect(total('abusive', '4xx') + total('abusive', '429')).toBeGreaterThan(0);
  expect(report.produced).toBe(20_000);
  expect(report.stored).toBe(report.produced);
  expect(report.storedDistinct).toBe(report.produced);
  for (const w of report.windows) {
    expect(w.rssBytes).toBeGreaterThan(0);
    expect(w.eventLoopLagP99Seconds).not.toBeNull();
  }
}, 400_000);
