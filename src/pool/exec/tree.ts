/**
 * Every process one hook run started, found and killed when the run ends — by its answer, its timeout
 * or the orphan grace — so nothing a script leaves behind outlives it.
 *
 * A process group is not enough: the script is spawned as its own session and group leader, but a
 * child that calls `setsid` (or `setpgid`) leaves the group, and once its parent exits it is re-parented
 * to init, so no parent chain leads to it either. Node cannot make the server a child subreaper
 * (prctl needs native code) and has no cgroups to offer, so on Linux the lane gives every run a random
 * mark in its environment (`VCP_EXEC_RUN`, inherited by every descendant) and sweeps /proc:
 *
 *   every process started since the script (start time ≥ the script's, so never an older one):
 *     its pid is the script's, or its session or group is the script's ─┐
 *     or its environment carries the run's mark                          │
 *     or an earlier sweep of this run found it (same pid and start time) ├─► the run's processes
 *     or its parent is one of the run's processes (to a fixpoint)  ──────┘
 *   ─► signal the group and each of them (its start time read again just before, so a reused pid is
 *      never hit); at the end, sweep again for what forked meanwhile until a sweep finds nothing new
 *
 * A timeout sweeps before it signals anything, while the script is alive and every parent chain intact.
 *
 * The guarantee, honestly: every descendant still alive when the run ends is killed, unless it left
 * the script's session, dropped the mark from its environment (`env -i`, a clean `execve`) *and* lost
 * its parent chain to the script before any sweep saw it (a double-forked daemon with a fresh
 * environment whose parent exited while the script ran). A timeout sweeps while the script is alive,
 * so there every descendant is found by its parent chain. For a guarantee without that gap, run
 * scripts in their own PID namespace through `exec.wrapper` (e.g. `bwrap --unshare-pid
 * --die-with-parent …`). Elsewhere than Linux only the group is signalled.
 *
 * Cost: a sweep is synchronous (a consistent picture, and a signal right after the check). A run that
 * ends within PID_WINDOW_MS reads only the processes whose pid was handed out after the script's
 * (/proc/sys/kernel/ns_last_pid; pids are handed out in a cycle of pid_max ≥ 32768, which no machine
 * goes round in that time); a longer run reads /proc/<pid>/stat of every process (≈1 ms per 120
 * processes on a loaded 2-core machine).
 */
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";

/** The environment variable carrying a run's mark (a random 128-bit id) into the script and every descendant. */
export const RUN_MARK_VARIABLE = "VCP_EXEC_RUN";

/** Sweeps at the end of a run: each finds what forked while the previous one signalled. */
const MAX_SWEEPS = 5;

/** A run shorter than this is swept through the pids handed out since its script (see the header). */
const PID_WINDOW_MS = 1000;

interface ProcStat {
  readonly pid: number;
  readonly ppid: number;
  readonly pgid: number;
  readonly sid: number;
  /** proc(5) `starttime`: clock ticks after boot. */
  readonly start: number;
  readonly zombie: boolean;
}

/** A fresh mark for one run, set in its environment before the spawn. */
export function newRunMark(): string {
  return randomBytes(16).toString("hex");
}

export interface ProcessTree {
  /** Signal the run's processes a sweep finds now, then the script's group (a timeout's SIGTERM or SIGKILL). */
  signal(signal: NodeJS.Signals): void;
  /** SIGKILL the group and the run's processes, sweeping again until no new one is found. */
  end(): void;
}

/**
 * Track the processes of one run, given the script's pid right after `spawn` returned (it has exec'd
 * and, until the event loop turns, cannot have been reaped, so its start time is still readable).
 *
 * @example
 * ```ts
 * const mark = newRunMark();
 * const child = spawn(file, args, { env: { ...env, [RUN_MARK_VARIABLE]: mark }, detached: true });
 * const tree = trackProcessTree(child.pid!, mark);
 * child.once("exit", () => tree.end());
 * ```
 */
export function trackProcessTree(pid: number, mark: string): ProcessTree {
  const trackedAt = performance.now();
  const rootStart = process.platform === "linux" ? readStat(pid)?.start : undefined;
  /** Every process a sweep found (pid → start time): still the run's after it lost its parent. */
  const seen = new Map<number, number>();
  // One entry of /proc/<pid>/environ (NUL-separated): the first, or one after another entry's NUL.
  const firstEntry = Buffer.from(`${RUN_MARK_VARIABLE}=${mark}\0`, "latin1");
  const laterEntry = Buffer.from(`\0${RUN_MARK_VARIABLE}=${mark}\0`, "latin1");

  function signalGroup(signal: NodeJS.Signals): void {
    try {
      process.kill(-pid, signal);
    } catch {
      // The group is gone (ESRCH).
    }
  }

  /** The pids worth reading: those handed out since the script, or (a long run, no ns_last_pid) all. */
  function candidatePids(): number[] {
    let names: string[];
    try {
      names = readdirSync("/proc");
    } catch {
      return [];
    }
    // Read after the listing, so every listed pid was handed out at or before it.
    const last = performance.now() - trackedAt < PID_WINDOW_MS ? readLastPid() : undefined;
    const pids: number[] = [];
    for (const name of names) {
      const other = Number(name);
      if (!Number.isInteger(other) || other <= 1 || other === process.pid) continue;
      // Since the script, in the cycle of pids: (pid, last] or, after a wrap, above pid or up to last.
      if (last !== undefined && !(last >= pid ? other >= pid && other <= last : other >= pid || other <= last)) continue;
      pids.push(other);
    }
    return pids;
  }

  /** The run's processes alive now (zombies are already dead). */
  function sweep(): ProcStat[] {
    if (rootStart === undefined) return [];
    const candidates = new Map<number, ProcStat>();
    for (const other of candidatePids()) {
      const stat = readStat(other);
      // SECURITY: a process older than the script was not started by it, whatever else it shares.
      if (stat !== undefined && stat.start >= rootStart) candidates.set(other, stat);
    }
    const ours = new Set<number>();
    for (const p of candidates.values()) {
      if (p.pid === pid || p.sid === pid || p.pgid === pid || seen.get(p.pid) === p.start || carriesMark(p.pid)) ours.add(p.pid);
    }
    for (let grew = true; grew; ) {
      grew = false;
      for (const p of candidates.values()) {
        if (!ours.has(p.pid) && ours.has(p.ppid)) {
          ours.add(p.pid);
          grew = true;
        }
      }
    }
    const found = [...ours].map((p) => candidates.get(p)!);
    for (const p of found) seen.set(p.pid, p.start);
    return found.filter((p) => !p.zombie);
  }

  function carriesMark(other: number): boolean {
    try {
      const environ = readFileSync(`/proc/${other}/environ`);
      return environ.indexOf(firstEntry) === 0 || environ.indexOf(laterEntry) >= 0;
    } catch {
      return false; // another user's process (not ours to signal either), or gone
    }
  }

  function hit(found: readonly ProcStat[], signal: NodeJS.Signals): void {
    for (const p of found) {
      // SECURITY: the same process (pid and start time) as swept, checked just before the signal.
      if (readStat(p.pid)?.start !== p.start) continue;
      try {
        process.kill(p.pid, signal);
      } catch {
        // Gone meanwhile.
      }
    }
  }

  return {
    signal(signal) {
      // Sweep before the group signal: a script killed first would orphan its children and cut the chain to them.
      const found = sweep();
      hit(found, signal);
      signalGroup(signal);
    },
    end() {
      const killed = new Set<string>();
      for (let i = 0; i < MAX_SWEEPS; i++) {
        const fresh = sweep().filter((p) => !killed.has(`${p.pid}:${p.start}`));
        signalGroup("SIGKILL");
        if (fresh.length === 0) return;
        hit(fresh, "SIGKILL");
        for (const p of fresh) killed.add(`${p.pid}:${p.start}`);
      }
    },
  };
}

function readLastPid(): number | undefined {
  try {
    const last = Number(readFileSync("/proc/sys/kernel/ns_last_pid", "latin1").trim());
    return Number.isInteger(last) && last > 0 ? last : undefined;
  } catch {
    return undefined;
  }
}

function readStat(pid: number): ProcStat | undefined {
  try {
    return parseStat(pid, readFileSync(`/proc/${pid}/stat`, "latin1"));
  } catch {
    return undefined;
  }
}

/** proc(5) `/proc/<pid>/stat`: the command name may hold spaces and parentheses, so fields count from the last ")". */
function parseStat(pid: number, text: string): ProcStat | undefined {
  const close = text.lastIndexOf(")");
  if (close < 0) return undefined;
  // After ") ": state (field 3), ppid (4), pgrp (5), session (6), … starttime (22).
  const fields = text.slice(close + 2).split(" ");
  const start = Number(fields[19]);
  if (fields.length < 20 || !Number.isFinite(start)) return undefined;
  return { pid, ppid: Number(fields[1]), pgid: Number(fields[2]), sid: Number(fields[3]), start, zombie: fields[0] === "Z" || fields[0] === "X" };
}
