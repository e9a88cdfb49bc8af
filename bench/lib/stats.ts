/** Timing helpers: process.hrtime.bigint, nearest-rank percentiles, bounded runs. */

export function nowNs(): bigint {
  return process.hrtime.bigint();
}

/** Nearest-rank percentile of nanosecond samples (sorted copy), `p` in [0, 100]. */
export function percentile(samplesNs: readonly number[], p: number): number {
  if (samplesNs.length === 0) return Number.NaN;
  const sorted = Float64Array.from(samplesNs).sort();
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

export interface LatencyStats {
  samples: number;
  p50_us: number;
  p99_us: number;
  mean_us: number;
  min_us: number;
  max_us: number;
}

export function latencyStats(samplesNs: readonly number[]): LatencyStats {
  let sum = 0;
  let min = Infinity;
  let max = 0;
  for (const s of samplesNs) {
    sum += s;
    if (s < min) min = s;
    if (s > max) max = s;
  }
  return {
    samples: samplesNs.length,
    p50_us: percentile(samplesNs, 50) / 1e3,
    p99_us: percentile(samplesNs, 99) / 1e3,
    mean_us: samplesNs.length ? sum / samplesNs.length / 1e3 : Number.NaN,
    min_us: samplesNs.length ? min / 1e3 : Number.NaN,
    max_us: max / 1e3,
  };
}

/** Sequential latency after `warmup` calls; stops at `samples` or after `maxMs`, whichever is first. */
export async function measureLatency(run: () => Promise<unknown> | unknown, warmup: number, samples: number, maxMs: number): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await run();
  const out: number[] = [];
  const deadline = nowNs() + BigInt(Math.round(maxMs * 1e6));
  while (out.length < samples) {
    const t0 = nowNs();
    await run();
    const t1 = nowNs();
    out.push(Number(t1 - t0));
    if (t1 > deadline) break;
  }
  return out;
}

export interface ThroughputStats {
  completed: number;
  concurrency: number;
  elapsed_ms: number;
  chains_per_s: number;
}

/** `concurrency` loops share a budget of `count` calls and a time bound of `maxMs`. */
export async function measureThroughput(run: () => Promise<unknown> | unknown, concurrency: number, count: number, maxMs: number): Promise<ThroughputStats> {
  const effective = Math.max(1, Math.min(concurrency, count));
  let started = 0;
  let completed = 0;
  const t0 = nowNs();
  const deadline = t0 + BigInt(Math.round(maxMs * 1e6));
  const loop = async (): Promise<void> => {
    while (started < count && nowNs() < deadline) {
      started++;
      await run();
      completed++;
    }
  };
  await Promise.all(Array.from({ length: effective }, loop));
  const elapsedNs = Number(nowNs() - t0);
  return { completed, concurrency: effective, elapsed_ms: elapsedNs / 1e6, chains_per_s: completed / (elapsedNs / 1e9) };
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}
