// The aggregate cache is bounded by what it holds, not only by its number of entries, and
// forgets expired entries instead of keeping them until evicted: a client choosing a new
// range per call cannot fill the process's memory with large answers.
import { describe, expect, it, vi } from 'vitest';
import { ResultCache } from '../../api/analytics/result-cache.ts';
import { DataVersion } from '../../warehouse/data-version.ts';

const answer = (items: number) => async () => Array.from({ length: items }, (_, i) => ({ i }));

describe('result cache', () => {
  it('keeps the items it holds under its weight bound, evicting the oldest answers first', async () => {
    const cache = new ResultCache(new DataVersion(), 60_000, 5000, 10_000);
    for (let k = 0; k < 50; k++) await cache.get(`range-${k}`, answer(1000));
    const { entries, weight } = cache.stats();
    expect(weight).toBeLessThanOrEqual(10_000);
    expect(entries).toBeLessThanOrEqual(10);
    // The newest answer is still served from the cache; the oldest was dropped.
    let computed = 0;
    await cache.get('range-49', async () => {
      computed++;
      return [];
    });
    await cache.get('range-0', async () => {
      computed++;
      return [];
    });
    expect(computed).toBe(1);
  });

  it('drops expired entries (they no longer count) rather than keeping them until evicted', async () => {
    vi.useFakeTimers();
    try {
      const cache = new ResultCache(new DataVersion(), 2000, 5000, 1_000_000);
      for (let k = 0; k < 100; k++) await cache.get(`k-${k}`, answer(100));
      expect(cache.stats().entries).toBe(100);
      vi.advanceTimersByTime(2500);
      await cache.get('fresh', answer(1));
      expect(cache.stats()).toEqual({ entries: 1, weight: 2 });
    } finally {
      vi.useRealTimers();
    }
  });

  it('shares one computation between concurrent callers and does not keep failures', async () => {
    const cache = new ResultCache(new DataVersion());
    let calls = 0;
    const slow = () => new Promise<number[]>((r) => setTimeout(() => r([++calls]), 10));
    const [a, b] = await Promise.all([cache.get('x', slow), cache.get('x', slow)]);
    expect(a).toEqual([1]);
    expect(b).toEqual([1]);
    await expect(cache.get('bad', () => Promise.reject(new Error('engine down')))).rejects.toThrow('engine down');
    expect(cache.stats().entries).toBe(1);
  });
});
