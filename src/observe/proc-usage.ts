import { readFileSync } from "node:fs";

/**
 * Resident memory and CPU time of another process (the sandbox host), read from Linux's `/proc`:
 * `/proc/<pid>/stat` fields 14–15 (utime, stime, in clock ticks) and `/proc/<pid>/status` `VmRSS`
 * (in kB, so no page size is needed). Read at scrape time only, never on the hot path. Elsewhere
 * (no `/proc`) or for a process that is gone: undefined, and the metrics leave the series out.
 *
 * The sandbox host has no stats message of its own to ask; reading `/proc` costs two small reads and
 * works while the host is busy or wedged, which is when an operator wants the numbers.
 */
export interface ProcessUsage {
  rssBytes: number;
  cpuSeconds: number;
}

/** USER_HZ: the unit of /proc/<pid>/stat times, 100 on every Linux ABI Node supports. */
const CLOCK_TICKS_PER_SECOND = 100;

export function readProcessUsage(pid: number | undefined): ProcessUsage | undefined {
  if (pid === undefined || !Number.isSafeInteger(pid) || pid <= 0) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    // "pid (comm) state …": comm may contain spaces and parentheses; fields restart after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(rest[11]) + Number(rest[12]);
    const rss = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, "latin1"));
    if (!Number.isFinite(ticks) || rss === null) return undefined;
    return { rssBytes: Number(rss[1]) * 1024, cpuSeconds: ticks / CLOCK_TICKS_PER_SECOND };
  } catch {
    return undefined;
  }
}
