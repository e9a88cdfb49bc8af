/**
 * How much of a fire's wall time the machine's load took from the sandbox host (Linux schedstat): the
 * run-queue wait of the host thread that was runnable longest while it ran, which for an attack that
 * keeps its worker busy is that worker. The sandbox bench and the adversarial suite cap how long an
 * attack may hold a chain (`max_fire_ms`, `max_duration_ms`) on the rest, the time the host actually
 * had a CPU or did not want one: the watchdog judges a busy hook on the CPU it used
 * (src/pool/watchdog.ts), so on a loaded machine a contained attack takes longer by exactly that wait.
 *
 * ```
 *  fire() ─────────────────────────────────────────────▶ resolved      wall: regained_ms
 *  attack thread:  run ▒▒ wait ░░░░ run ▒▒ wait ░░░░ …                 starved_ms = Σ wait
 *  capped:         regained_ms − starved_ms ≤ max_fire_ms
 * ```
 *
 * Sampled every SAMPLE_MS so that a host killed during the fire still counts up to its last sample;
 * threads of a host started meanwhile count from their first sample. 0 where /proc has no schedstat.
 */
import { readdirSync, readFileSync } from "node:fs";

const SAMPLE_MS = 100;

interface Times {
  runNs: number;
  waitNs: number;
}

export interface StarvationMeter {
  /** Stop sampling: the run-queue wait and the CPU time (ms) of the host thread that was runnable longest. */
  stop(): { starvedMs: number; cpuMs: number };
}

/** Start measuring the run-queue wait of the sandbox host (whatever process `hostPid()` names at each sample). */
export function startStarvationMeter(hostPid: () => number | undefined): StarvationMeter {
  const first = new Map<string, Times>();
  const last = new Map<string, Times>();
  const sample = (): void => {
    const pid = hostPid();
    if (pid === undefined) return;
    for (const [tid, times] of threadTimes(pid)) {
      const key = `${pid}:${tid}`;
      if (!first.has(key)) first.set(key, times);
      last.set(key, times);
    }
  };
  sample();
  const timer = setInterval(sample, SAMPLE_MS);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      sample();
      let runnable = -1;
      let waitNs = 0;
      let runNs = 0;
      for (const [key, end] of last) {
        const start = first.get(key)!;
        const r = end.runNs - start.runNs + (end.waitNs - start.waitNs);
        if (r > runnable) {
          runnable = r;
          waitNs = end.waitNs - start.waitNs;
          runNs = end.runNs - start.runNs;
        }
      }
      return { starvedMs: waitNs / 1e6, cpuMs: runNs / 1e6 };
    },
  };
}

/**
 * A fire that has not returned after this long means a wedged runtime (the harness then replaces it):
 * generous, because a starved host legitimately takes longer than `maxFireMs` of wall time.
 */
export function fireDeadlineMs(maxFireMs: number): number {
  return maxFireMs * 5 + 30_000;
}

function threadTimes(pid: number): Map<string, Times> {
  const out = new Map<string, Times>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "latin1").split(" ").map(Number);
      if (Number.isFinite(run) && Number.isFinite(wait)) out.set(tid, { runNs: run!, waitNs: wait! });
    } catch {
      // the thread ended while we looked
    }
  }
  return out;
}
