/**
 * CPU time per call of `fn` (process.cpuUsage: user + system of every thread, µs), best of three
 * rounds of `n` after a warm-up: holds up on a busy machine, where wall time does not.
 */
export function cpuPerCall(n: number, fn: () => unknown, warmup = Math.min(n, 20_000)): number {
  for (let i = 0; i < warmup; i++) fn();
  let best = Number.POSITIVE_INFINITY;
  for (let r = 0; r < 3; r++) {
    const t = process.cpuUsage();
    for (let i = 0; i < n; i++) fn();
    const d = process.cpuUsage(t);
    best = Math.min(best, (d.user + d.system) / n);
  }
  return best;
}
