/** Linux /proc readers for the sandbox host's memory. */
import { readdirSync, readFileSync } from "node:fs";

/** Children of `parentPid` whose command line contains `needle`, oldest first. */
export function childPidsMatching(parentPid: number, needle: string): number[] {
  const found: Array<{ pid: number; start: number }> = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // Fields after the command (which may contain spaces) start after the last ')'.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) !== parentPid) continue;
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8");
      if (!cmdline.includes(needle)) continue;
      found.push({ pid: Number(name), start: Number(fields[19]) });
    } catch {
      // the process went away while we looked
    }
  }
  return found.sort((a, b) => a.start - b.start).map((p) => p.pid);
}

/** VmRSS of a process in bytes, or NaN when it cannot be read. */
export function rssBytes(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** Kernel clock ticks per second for /proc/<pid>/stat times (USER_HZ; 100 on Linux). */
const USER_HZ = 100;

/**
 * CPU time (user + system, µs) of each thread group of a process, keyed by thread name
 * (`/proc/<pid>/task/<tid>/comm`: MainThread, WorkerThread, V8Worker, …). 10 ms resolution.
 */
export function threadCpuUs(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const { name, us } of threadCpuByTid(pid).values()) out.set(name, (out.get(name) ?? 0) + us);
  return out;
}

/**
 * CPU time (user + system, µs) of each thread of a process by thread id, with its name. Threads a
 * thread starts inherit its name (Linux): isolated-vm's timer and pool threads started from a worker
 * thread are also called WorkerThread, and only their ids tell them from the workers.
 */
export function threadCpuByTid(pid: number): Map<number, { name: string; us: number }> {
  const out = new Map<number, { name: string; us: number }>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(Number(tid), { name, us: ((Number(fields[11]) + Number(fields[12])) / USER_HZ) * 1e6 });
    } catch {
      // thread ended while we looked
    }
  }
  return out;
}

/**
 * Nanoseconds the chain-carrying threads of `pid` (its main thread and its worker threads, not V8's or
 * libuv's helpers) have spent runnable but not running (Linux schedstat): time lost waiting for a
 * core, to other processes or to this process's own threads. NaN when /proc is unavailable.
 */
export function runQueueWaitNs(pid: number): number {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return Number.NaN;
  }
  let total = 0;
  for (const tid of tids) {
    try {
      const comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
      if (Number(tid) !== pid && comm !== "MainThread" && comm !== "WorkerThread") continue;
      total += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[1]);
    } catch {
      // thread ended while we looked
    }
  }
  return total;
}
