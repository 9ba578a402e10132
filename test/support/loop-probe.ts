// The longest the event loop went without running a timer while `work` ran: a 1 ms interval
// timer records the largest gap between its ticks (what a request arriving meanwhile waits).
export async function longestLoopBlock<T>(work: () => Promise<T>): Promise<{ result: T; maxBlockMs: number }> {
  let last = performance.now();
  let maxBlockMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    maxBlockMs = Math.max(maxBlockMs, now - last);
    last = now;
  }, 1);
  try {
    const result = await work();
    const now = performance.now();
    maxBlockMs = Math.max(maxBlockMs, now - last);
    return { result, maxBlockMs };
  } finally {
    clearInterval(timer);
  }
}
