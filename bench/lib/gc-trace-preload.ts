/**
 * GC timeline of every process and thread of a bench run, for latency attribution (bench/tail-chain.ts).
 * A diagnostic, never loaded by the runtime: preload it with
 *
 *   GC_TRACE_DIR=/tmp/gc NODE_OPTIONS="--import=$PWD/dist/bench/lib/gc-trace-preload.js" node --no-node-snapshot dist/bench/tail-chain.js
 *
 * NODE_OPTIONS reaches the sandbox host (forked with the parent's environment); worker threads run no
 * preloads, so in each process the preload wraps `worker_threads.Worker` (the object piscina's CommonJS
 * build reads at each `new Worker`) to load this file in the thread first. Each thread appends one JSON
 * line per GC to `<GC_TRACE_DIR>/gc-<pid>-<threadId>.jsonl`: `{ "at": epoch ms, "ms": duration, "kind": …, "youngKB": new space size }`
 * (`at` = performance.timeOrigin + startTime: one clock for every thread and process, to within the
 * clock read at each thread's start). isolated-vm isolates' own heaps are not seen (no perf_hooks there);
 * their collections show as worker-thread CPU in tail-chain's per-thread figures.
 */
import { closeSync, openSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { PerformanceObserver, constants, performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { getHeapSpaceStatistics } from "node:v8";
import * as threads from "node:worker_threads";

const DIR = process.env.GC_TRACE_DIR;
const KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: "minor",
  [constants.NODE_PERFORMANCE_GC_MAJOR]: "major",
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: "incremental",
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: "weakcb",
};

if (DIR !== undefined && DIR !== "") {
  const fd = openSync(join(DIR, `gc-${process.pid}-${threads.threadId}.jsonl`), "a");
  const origin = performance.timeOrigin;
  const observer = new PerformanceObserver((list) => {
    let text = "";
    // The young generation's size after the collection: how often the next one comes.
    const young = getHeapSpaceStatistics().find((space) => space.space_name === "new_space")?.space_size ?? 0;
    for (const entry of list.getEntries()) {
      const kind = (entry as { detail?: { kind?: number } }).detail?.kind;
      text += `${JSON.stringify({ at: origin + entry.startTime, ms: entry.duration, kind: KINDS[kind ?? -1] ?? String(kind), youngKB: young / 1024 })}\n`;
    }
    writeSync(fd, text);
  });
  observer.observe({ entryTypes: ["gc"] });
  process.once("exit", () => closeSync(fd));
  if (threads.isMainThread) wrapWorker();
}

function wrapWorker(): void {
  const self = fileURLToPath(import.meta.url);
  // The CommonJS view of the built-in: piscina reads `.Worker` from this object at every spawn.
  const cjs = createRequire(import.meta.url)("node:worker_threads") as typeof threads;
  const Original = cjs.Worker;
  class TracedWorker extends Original {
    constructor(filename: string | URL, options?: threads.WorkerOptions) {
      if (options?.eval === true) {
        super(filename, options);
        return;
      }
      const target = filename instanceof URL ? filename.href : filename;
      const boot = `import(${JSON.stringify(self)}).then(() => import(${JSON.stringify(target.startsWith("file:") ? target : `file://${target}`)}))`;
      super(boot, { ...options, eval: true });
    }
  }
  cjs.Worker = TracedWorker;
}
