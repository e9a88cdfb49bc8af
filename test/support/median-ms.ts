/**
 * Median wall time of `fn` over 5 runs. For tests that compare two costs in one process (a bounded
 * input against a huge one) as a ratio with a wide margin — never an absolute time: CI is busy.
 */
export function medianMs(fn: () => unknown): number {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    fn();
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b)[2]!;
}
