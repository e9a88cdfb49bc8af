import { closeSync, existsSync, openSync, readdirSync, readFileSync, readlinkSync, writeSync } from "node:fs";
import { join } from "node:path";

/**
 * Crash attribution and the hook watchdog (DESIGN §4.1). A fatal V8 error (`'1'.repeat(2**28).split('')`)
 * aborts the sandbox host process without running any JavaScript, and a fatal OOM inside isolated-vm
 * can leave it alive but wedged, so "who is running, since when?" must already be on disk when it
 * happens. Each worker thread owns one fixed-size slot file and overwrites it in place:
 *
 * ```
 *  slotDir/g<generation>-t<threadId>.slot      (SLOT_BYTES, space padded)
 *  "<taskId> I <hook> <startMs> <budgetMs> <tid> <pos>"  inside the action of the hook at position
 *                                                  <pos> of the task's hook list (named <hook>) for
 *                                                  supervisor task <taskId> since <startMs>, allowed <budgetMs>
 *  "<taskId> C"                                    chain code of <taskId> (before its first hook, or
 *                                                  after its last while the reply travels), or idle
 *  "<taskId> L <startMs>"                          the worker runs a bundle's top-level code (load)
 *  "0 R <digest>"                                  guest code of that bundle revision still runs on
 *                                                  isolated-vm's thread pool after its call ended and
 *                                                  ignores termination: the worker ends the process
 * ```
 *
 * SECURITY: a hook is identified by its position in the hook list the supervisor sent for the task,
 * never by its name: a session-scope hook may carry the name of another bundle's deployment hook, and
 * a name lookup would blame that other bundle. `<hook>` is only a cross-check of the position.
 *
 * One write per hook: the "I" record stays while the chain code after the hook runs (result parsing,
 * the next predicate: microseconds, synchronous), and the task writes "C" when it starts and when it
 * ends. A crash in the first window is attributed to the hook whose result was being handled, which
 * is where it came from; a crash while a still-pending task is in "C" cannot be pinned on one hook.
 * `<startMs>` is {@link monotonicMs} (CLOCK_MONOTONIC, the same in every process of the machine), so
 * the supervisor can tell how long a hook has been running; `<tid>` is the worker's OS thread id
 * (Linux, `/proc/thread-self`; 0 elsewhere), so it can tell a busy thread from a wedged one.
 *
 * A positional `writeSync` costs ≈1–2 µs and lands in the page cache before the syscall returns, so
 * it survives the death of the process (not of the machine, which would take the supervisor too).
 * After a crash the supervisor reads every slot of the dead generation; records whose task id is no
 * longer pending are stale and ignored.
 */
export const SLOT_BYTES = 160;

export type SlotPhase = "I" | "C" | "L" | "R";

export interface SlotRecord {
  taskId: number;
  phase: SlotPhase;
  hook?: string;
  /** "I": position of the hook in the task's hook list (the hook's identity; `hook` is its name). */
  position?: number;
  /** "I" and "L": when the phase began, in {@link monotonicMs}. */
  startMs?: number;
  /** "I": the time the hook may use (min(timeout_ms, remaining chain deadline)). */
  budgetMs?: number;
  /** "I": OS thread id of the worker (Linux), 0 when unknown. */
  tid?: number;
  /** "R": the bundle revision whose discarded run ignores termination. */
  digest?: string;
}

/**
 * Milliseconds on CLOCK_MONOTONIC (libuv's hrtime): comparable between processes of one machine,
 * unlike `performance.now()` (per-process origin) or `Date.now()` (wall clock, can jump).
 */
export function monotonicMs(): number {
  const [s, ns] = process.hrtime();
  return s * 1000 + Math.floor(ns / 1e6);
}

/** Worker side: one open file descriptor and one reused buffer, nothing allocated per write. */
export class SlotWriter {
  private readonly fd: number;
  private readonly buffer = Buffer.alloc(SLOT_BYTES, 0x20);

  constructor(slotDir: string, generation: number, threadId: number) {
    this.fd = openSync(join(slotDir, slotFileName(generation, threadId)), "w");
    writeSync(this.fd, this.buffer, 0, SLOT_BYTES, 0);
  }

  /** "C": chain code of `taskId` (at its start and at its end). */
  chainCode(taskId: number): void {
    this.put(`${taskId} C`);
  }

  /** "I": entering the action of the hook at `position`; the watchdog measures its run time from `startMs`. */
  enter(taskId: number, position: number, hook: string, startMs: number, budgetMs: number, tid: number): void {
    this.put(`${taskId} I ${hook} ${startMs} ${budgetMs} ${tid} ${position}`);
  }

  /** "R": a discarded run of revision `digest` ignores termination; the process is about to end. */
  runaway(digest: string): void {
    // Digests are "sha256:" + 64 hex digits: no space, and well inside SLOT_BYTES.
    this.put(`0 R ${digest}`);
  }

  /** "L": running a bundle's top-level code since `startMs`. */
  loading(taskId: number, startMs: number): void {
    this.put(`${taskId} L ${startMs}`);
  }

  private put(text: string): void {
    const buffer = this.buffer;
    buffer.fill(0x20);
    // Hook names match [a-z0-9_-]{1,64} (spec §6.2.2) and the numbers are short (at most ≈125 bytes in
    // all), so the record always fits in SLOT_BYTES and the hook name never holds a space.
    buffer.write(text, 0, SLOT_BYTES - 1, "latin1");
    writeSync(this.fd, buffer, 0, SLOT_BYTES, 0);
  }

  close(): void {
    closeSync(this.fd);
  }
}

export function slotFileName(generation: number, threadId: number): string {
  return `g${generation}-t${threadId}.slot`;
}

/** Supervisor side: every readable record of one host generation. */
export function readSlots(slotDir: string, generation: number): SlotRecord[] {
  const prefix = `g${generation}-t`;
  const records: SlotRecord[] = [];
  let names: string[];
  try {
    names = readdirSync(slotDir);
  } catch {
    return records;
  }
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith(".slot")) continue;
    let text: string;
    try {
      text = readFileSync(join(slotDir, name), "latin1").trim();
    } catch {
      continue;
    }
    const record = parseSlot(text);
    if (record !== undefined) records.push(record);
  }
  return records;
}

export function parseSlot(text: string): SlotRecord | undefined {
  const fields = text.split(" ");
  const [id, phase] = fields;
  const taskId = Number(id);
  if (id === "" || !Number.isSafeInteger(taskId) || (phase !== "I" && phase !== "C" && phase !== "L" && phase !== "R")) return undefined;
  const record: SlotRecord = { taskId, phase };
  if (phase === "R") {
    if (fields[2] !== undefined && fields[2] !== "") record.digest = fields[2];
    return record;
  }
  if (phase === "L") {
    const startMs = numberField(fields[2]);
    if (startMs !== undefined) record.startMs = startMs;
    return record;
  }
  const hook = fields[2];
  if (hook === undefined || hook === "") return record;
  record.hook = hook;
  if (phase === "I") {
    const startMs = numberField(fields[3]);
    const budgetMs = numberField(fields[4]);
    if (startMs !== undefined && budgetMs !== undefined) {
      record.startMs = startMs;
      record.budgetMs = budgetMs;
      record.tid = numberField(fields[5]) ?? 0;
    }
    const position = numberField(fields[6]);
    if (position !== undefined) record.position = position;
  }
  return record;
}

function numberField(text: string | undefined): number | undefined {
  if (text === undefined || text === "") return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

/** Where a thread's time went since it started, in milliseconds, and its state now (see {@link threadTime}). */
export interface ThreadTime {
  /** Time on a CPU. */
  cpuMs: number;
  /**
   * Time on a CPU or runnable and waiting for one: a thread that wants to run accrues it on any machine,
   * however loaded. The kernel adds a wait when the wait ends, so a thread still waiting adds nothing yet.
   */
  runnableMs: number;
  /** State `R` now: on a CPU or waiting on a run queue (not sleeping, blocked or stopped). */
  runnable: boolean;
}

/** Kernel clock ticks per second of /proc/<pid>/stat times (USER_HZ; 100 on Linux). */
const USER_HZ = 100;

/**
 * Whether process `pid` has ended, as far as Linux says (gone, or a zombie not reaped yet): its exit may
 * not have reached this process's event loop. False when it runs, or when /proc cannot tell.
 */
export function processEnded(pid: number): boolean {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ENOENT" && existsSync("/proc/self/stat");
  }
  // "pid (comm) state …": comm may contain spaces and parentheses; the state follows the last ')'.
  const state = text[text.lastIndexOf(")") + 2];
  return state === "Z" || state === "X";
}

/**
 * The time of one thread of another process (Linux): its state and, from `/proc/<pid>/task/<tid>/stat`,
 * its user + system clock ticks; from `/proc/<pid>/task/<tid>/schedstat`, where the kernel keeps
 * scheduler statistics, its time on a CPU and waiting on a run queue in nanoseconds (without them
 * `runnableMs` is the CPU time alone). `undefined` where the thread does not exist.
 */
export function threadTime(pid: number, tid: number): ThreadTime | undefined {
  if (tid <= 0) return undefined;
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/task/${tid}/stat`, "latin1");
  } catch {
    return undefined;
  }
  // "tid (comm) state ppid …": comm may contain spaces and parentheses; fields restart after the last ')'.
  const rest = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const runnable = rest[0] === "R";
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "latin1").split(" ").map(Number);
    if (Number.isFinite(run) && Number.isFinite(wait)) return { cpuMs: run! / 1e6, runnableMs: (run! + wait!) / 1e6, runnable };
  } catch {
    // no scheduler statistics: the clock ticks of stat
  }
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
  const cpuMs = ((utime + stime) * 1000) / USER_HZ;
  return { cpuMs, runnableMs: cpuMs, runnable };
}

/** This thread's OS thread id on Linux (`/proc/thread-self` → `/proc/<pid>/task/<tid>`), else 0. */
export function currentTid(): number {
  try {
    const n = Number(readlinkSync("/proc/thread-self").split("/").pop());
    return Number.isSafeInteger(n) && n > 0 ? n : 0;
  } catch {
    return 0;
  }
}
