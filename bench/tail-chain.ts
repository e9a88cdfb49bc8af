/**
 * Where the slow sequential chains go (issue 15, p99 of a sequential chain). One chain at a time, as
 * perf.ts measures p50/p99, through `createRuntime` and the real sandbox (2 threads, N one-hook
 * bundles, variant "continue"):
 *
 *   node --no-node-snapshot dist/bench/tail-chain.js [samples] [hooks]
 *
 * prints p50/p99/p99.9 and, unless `TRACE=0`:
 * - the CPU the chain-carrying threads (the main process's main thread, the host's main and worker
 *   threads) spent per chain, p50–p99.9: a figure a busy machine disturbs far less than wall time;
 * - the slowest 1% against the middle of the distribution (p40–p60): per process and thread group
 *   (main, workers, and the helpers by thread name — V8Worker runs background GC and JIT compiles),
 *   the CPU time each chain took and the time the threads sat runnable but not running (Linux
 *   schedstat's run-queue wait: contention for the cores, with other processes or our own threads);
 * - how many chains had a V8Worker thread busy, and the slowest 1%'s excess split into GC, run-queue
 *   wait, extra CPU and the rest (see `attribute`).
 * schedstat is read between chains (nanoseconds; the reads are outside the timed window). With the GC
 * preload (bench/lib/gc-trace-preload.ts, `GC_TRACE_DIR`) it also counts the collections of every
 * process and thread that overlap each chain.
 *
 * Environment: `WARMUP` (default 500 chains), `TRACE=0` (timing only), `GC_TRACE_DIR`.
 */
import { openSync, readdirSync, readFileSync, readSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createRuntime, type FireInput } from "../src/index.js";
import { SESSION, constitution, makeContext, preInjectEvent } from "./lib/fixtures.js";
import { benchBundle, chainActions } from "./lib/hooks.js";
import { childPidsMatching } from "./lib/proc.js";
import { percentile } from "./lib/stats.js";

const SAMPLES = Number(process.argv[2] ?? 3000);
const N = Number(process.argv[3] ?? 5);
const WARMUP = Number(process.env.WARMUP ?? 500);
const TRACE = process.env.TRACE !== "0";
const GC_DIR = process.env.GC_TRACE_DIR;
/** The threads a chain passes through, one after another (the others are helpers: GC, libuv, I/O). */
const CARRIERS = ["main process main", "host main", "host workers"];

/** One thread's schedstat: ns on a CPU, ns waiting on a run queue. */
interface Sched {
  run: number;
  wait: number;
}

interface ThreadRef {
  group: string;
  /** An open /proc/<pid>/task/<tid>/schedstat: re-read at offset 0 (a fresh open costs ~6× more). */
  fd: number;
}

function threadsOf(pid: number, label: string): ThreadRef[] {
  const out: ThreadRef[] = [];
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
      // Group names: the threads that carry a chain by role, every other thread of the process together.
      const role = comm === "MainThread" || Number(tid) === pid ? "main" : comm === "WorkerThread" ? "workers" : comm.replace(/[\d-]+$/, "");
      out.push({ group: `${label} ${role}`, fd: openSync(`/proc/${pid}/task/${tid}/schedstat`, "r") });
    } catch {
      // the thread ended while we looked
    }
  }
  return out;
}

const schedText = Buffer.alloc(128);
function readSched(threads: readonly ThreadRef[]): Map<string, Sched> {
  const out = new Map<string, Sched>();
  for (const t of threads) {
    let text: string;
    try {
      text = schedText.toString("latin1", 0, readSync(t.fd, schedText, 0, schedText.length, 0));
    } catch {
      continue; // the thread ended
    }
    const [run, wait] = text.split(" ").map(Number);
    const prev = out.get(t.group) ?? { run: 0, wait: 0 };
    out.set(t.group, { run: prev.run + run!, wait: prev.wait + wait! });
  }
  return out;
}

interface Sample {
  /** Epoch ms (performance.timeOrigin + now) when the chain was fired and when it resolved. */
  from: number;
  to: number;
  us: number;
  cpu: Map<string, number>;
  wait: Map<string, number>;
}

const runtime = await createRuntime({ sandbox: { threads: 2 }, registrationsPerMinute: 100_000 });
try {
  const actions = chainActions(N, "continue");
  for (let i = 0; i < N; i++) {
    await runtime.bundles.install(benchBundle(`tail-${i}`, [{ name: `h-${i}`, type: "pre_inject", action: "run", priority: 100 - i }], { run: actions[i]! }));
  }
  const input: FireInput<"pre_inject"> = { context: makeContext(), constitution, event: preInjectEvent, session: SESSION };
  const hostPid = childPidsMatching(process.pid, "host-main.js").at(-1);
  if (hostPid === undefined) throw new Error("no sandbox host process found");
  for (let i = 0; i < WARMUP; i++) await runtime.fire("pre_inject", input);

  const threads = TRACE ? [...threadsOf(process.pid, "main process"), ...threadsOf(hostPid, "host")] : [];
  const load0 = loadavg()[0]!;
  const samples: Sample[] = [];
  const origin = performance.timeOrigin;
  for (let i = 0; i < SAMPLES; i++) {
    const before = TRACE ? readSched(threads) : undefined;
    const t0 = performance.now();
    const result = await runtime.fire("pre_inject", input);
    const t1 = performance.now();
    if (result.status !== "completed" || result.hook_results.length !== N) throw new Error(`chain ${i}: ${result.status}, ${result.hook_results.length} hooks`);
    const cpu = new Map<string, number>();
    const wait = new Map<string, number>();
    if (before !== undefined) {
      for (const [group, after] of readSched(threads)) {
        const b = before.get(group) ?? { run: 0, wait: 0 };
        cpu.set(group, after.run - b.run);
        wait.set(group, after.wait - b.wait);
      }
    }
    samples.push({ from: origin + t0, to: origin + t1, us: (t1 - t0) * 1000, cpu, wait });
  }
  const load1 = loadavg()[0]!;
  report(samples, load0, load1, hostPid);
} finally {
  await runtime.close();
}

function report(samples: Sample[], load0: number, load1: number, hostPid: number): void {
  const wall = samples.map((s) => s.us);
  const line = (text: string): boolean => process.stdout.write(`${text}\n`);
  line(
    `N=${N}, ${samples.length} sequential chains after ${WARMUP} warm-up, load average ${load0.toFixed(2)} → ${load1.toFixed(2)}: ` +
      `p50 ${percentile(wall, 50).toFixed(0)} µs, p90 ${percentile(wall, 90).toFixed(0)} µs, p99 ${percentile(wall, 99).toFixed(0)} µs, p99.9 ${percentile(wall, 99.9).toFixed(0)} µs, max ${Math.max(...wall).toFixed(0)} µs`,
  );
  const sorted = [...samples].sort((a, b) => a.us - b.us);
  const tail = sorted.slice(Math.floor(sorted.length * 0.99));
  const middle = sorted.slice(Math.floor(sorted.length * 0.4), Math.ceil(sorted.length * 0.6));
  const mean = (set: Sample[], pick: (s: Sample) => number): number => set.reduce((sum, s) => sum + pick(s), 0) / set.length;
  const gc = GC_DIR !== undefined && GC_DIR !== "" ? gcOverlaps(samples, hostPid) : undefined;
  if (TRACE) {
    // Noise-robust: the CPU the carrying threads spent on each chain (GC pauses on them included,
    // waiting for a core not). On a quiet machine a chain takes about this plus its wake-ups.
    const busy = samples.map((s) => CARRIERS.reduce((sum, g) => sum + (s.cpu.get(g) ?? 0) / 1000, 0));
    line(`CPU of the carrying threads per chain: p50 ${percentile(busy, 50).toFixed(0)} µs, p90 ${percentile(busy, 90).toFixed(0)} µs, p99 ${percentile(busy, 99).toFixed(0)} µs, p99.9 ${percentile(busy, 99.9).toFixed(0)} µs`);
    const groups = [...new Set(samples.flatMap((s) => [...s.cpu.keys()]))].sort();
    line(`slowest 1% (${tail.length} chains, mean ${mean(tail, (s) => s.us).toFixed(0)} µs) against p40–p60 (${middle.length}, mean ${mean(middle, (s) => s.us).toFixed(0)} µs), µs per chain:`);
    line(`  ${"".padEnd(28)} ${"cpu tail".padStart(9)} ${"cpu mid".padStart(8)} ${"wait tail".padStart(10)} ${"wait mid".padStart(9)}`);
    for (const g of groups) {
      const c = (set: Sample[]): number => mean(set, (s) => (s.cpu.get(g) ?? 0) / 1000);
      const w = (set: Sample[]): number => mean(set, (s) => (s.wait.get(g) ?? 0) / 1000);
      if (c(tail) + c(middle) + w(tail) + w(middle) < 0.5) continue; // idle threads (signal, inspector, delayed tasks)
      line(`  ${g.padEnd(28)} ${c(tail).toFixed(0).padStart(9)} ${c(middle).toFixed(0).padStart(8)} ${w(tail).toFixed(0).padStart(10)} ${w(middle).toFixed(0).padStart(9)}`);
    }
    const total = (set: Sample[], m: "cpu" | "wait"): number => mean(set, (s) => [...s[m].values()].reduce((a, b) => a + b, 0) / 1000);
    line(`  ${"all threads".padEnd(28)} ${total(tail, "cpu").toFixed(0).padStart(9)} ${total(middle, "cpu").toFixed(0).padStart(8)} ${total(tail, "wait").toFixed(0).padStart(10)} ${total(middle, "wait").toFixed(0).padStart(9)}`);
    // V8's platform threads run concurrent/parallel GC phases and background JIT compiles.
    const background = (s: Sample): boolean => [...s.cpu].some(([g, ns]) => g.endsWith("V8Worker") && ns >= 20_000);
    line(`chains during which a V8Worker thread (background GC or JIT) ran ≥ 20 µs: all ${samples.filter(background).length}/${samples.length}, slowest 1% ${tail.filter(background).length}/${tail.length}`);
    attribute(tail, middle, gc, line);
  }
  if (gc !== undefined) {
    const anyGc = (s: Sample): boolean => [...gc.values()].some((perChain) => (perChain.get(s)?.ms ?? 0) > 0);
    line(`chains overlapped by a GC pause on a carrying thread: all ${samples.filter(anyGc).length}/${samples.length}, slowest 1% ${tail.filter(anyGc).length}/${tail.length}; by thread (chains touched, mean ms overlapped):`);
    for (const [thread, perChain] of gc) {
      const touched = (set: Sample[]): Sample[] => set.filter((s) => (perChain.get(s)?.ms ?? 0) > 0);
      const all = touched(samples);
      const inTail = touched(tail);
      const ms = (set: Sample[]): string => (set.length === 0 ? "-" : mean(set, (s) => perChain.get(s)!.ms).toFixed(2));
      line(`  ${thread.padEnd(24)} all ${all.length} (${ms(all)} ms); slowest 1% ${inTail.length}/${tail.length} (${ms(inTail)} ms)`);
    }
  }
}

/** Per GC trace file (process, thread): the GC time overlapping each chain. */
function gcOverlaps(samples: Sample[], hostPid: number): Map<string, Map<Sample, { ms: number }>> {
  const out = new Map<string, Map<Sample, { ms: number }>>();
  for (const file of readdirSync(GC_DIR!)) {
    const m = /^gc-(\d+)-(\d+)\.jsonl$/.exec(file);
    if (m === null) continue;
    const pid = Number(m[1]);
    const who = pid === process.pid ? "main process" : pid === hostPid ? "host" : null; // other files: earlier runs
    if (who === null) continue;
    const label = `${who} ${m[2] === "0" ? "main" : `worker ${m[2]}`}`;
    const events = readFileSync(join(GC_DIR!, file), "utf8")
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as { at: number; ms: number });
    const perChain = new Map<Sample, { ms: number }>();
    let j = 0;
    for (const s of samples) {
      while (j < events.length && events[j]!.at + events[j]!.ms < s.from) j++;
      for (let k = j; k < events.length && events[k]!.at <= s.to; k++) {
        const e = events[k]!;
        const overlap = Math.min(e.at + e.ms, s.to) - Math.max(e.at, s.from);
        if (overlap > 0) perChain.set(s, { ms: (perChain.get(s)?.ms ?? 0) + overlap });
      }
    }
    out.set(label, perChain);
  }
  return out;
}


/**
 * Splits each slow chain's excess over the middle's mean wall time, in this order, each capped by what
 * is left: GC pauses overlapping it on a carrying thread (GC preload), run-queue wait of the carrying
 * threads beyond the middle's mean (the cores were busy: other processes, our own helper threads),
 * CPU of the carrying threads beyond the middle's mean (more work: a slow path, cache misses, a GC the
 * preload cannot see such as an isolate's), and the rest (time no carrying thread ran nor waited to
 * run: wake-up latency of an idle CPU, timers, hypervisor steal).
 */
function attribute(tail: Sample[], middle: Sample[], gc: Map<string, Map<Sample, { ms: number }>> | undefined, line: (text: string) => boolean): void {
  const mean = (set: Sample[], pick: (s: Sample) => number): number => set.reduce((sum, s) => sum + pick(s), 0) / set.length;
  const carried = (s: Sample, m: "cpu" | "wait"): number => CARRIERS.reduce((sum, g) => sum + (s[m].get(g) ?? 0) / 1000, 0);
  const baseUs = mean(middle, (s) => s.us);
  const baseWait = mean(middle, (s) => carried(s, "wait"));
  const baseCpu = mean(middle, (s) => carried(s, "cpu"));
  const parts = { gc: 0, wait: 0, cpu: 0, rest: 0 };
  let excessAll = 0;
  for (const s of tail) {
    let left = Math.max(0, s.us - baseUs);
    excessAll += left;
    let gcUs = 0;
    for (const [thread, perChain] of gc ?? []) if (thread !== "main process other") gcUs += (perChain.get(s)?.ms ?? 0) * 1000;
    const take = (want: number): number => {
      const got = Math.min(left, Math.max(0, want));
      left -= got;
      return got;
    };
    parts.gc += take(gcUs);
    parts.wait += take(carried(s, "wait") - baseWait);
    parts.cpu += take(carried(s, "cpu") - baseCpu);
    parts.rest += left;
  }
  const share = (x: number): string => `${((x / excessAll) * 100).toFixed(0)}%`;
  line(
    `excess of the slowest 1% over the middle (${(excessAll / tail.length).toFixed(0)} µs per chain): ` +
      `GC ${share(parts.gc)}${gc === undefined ? " (no GC_TRACE_DIR)" : ""}, run-queue wait ${share(parts.wait)}, extra CPU ${share(parts.cpu)}, rest ${share(parts.rest)}`,
  );
}
