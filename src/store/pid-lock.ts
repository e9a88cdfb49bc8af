/**
 * One process per data directory (and per audit log): a pid lock file. Two runtimes writing one audit
 * log interleave their hash chains and silently break it; two bundle stores overwrite each other's
 * index. Node has no flock(), so the lock is a file that names its holder:
 *
 * ```
 *   acquire: write <lock>.<pid>.tmp (pid, host, time), fsync ─▶ link() it to <lock>   (atomic: fails if <lock> exists)
 *            <lock> exists ─▶ holder alive (kill(pid, 0)) or on another host ─▶ DATA_DIR_LOCKED naming pid and host
 *                          └▶ holder dead, or the file is unreadable ─▶ take over (below), then link() again
 *   take over: rename(<lock>, <lock>.stale.<our pid>) moves exactly one file; if it is not the inode we
 *              judged stale (someone took over first and holds it now), move it back and refuse.
 *   release:  unlink <lock> if it is still ours (same inode).
 * ```
 *
 * A lock naming our own pid that this process does not hold is stale too: it survived a crash of an
 * earlier process that had the same pid (pid 1 in every container start).
 */
import { closeSync, fstatSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { dirname, join, resolve } from "node:path";
import { VcpError } from "../errors.js";

export interface PidLock {
  /** The lock file. */
  readonly path: string;
  /** Remove the lock file if it is still this lock's (idempotent). */
  release(): void;
}

/** The lock file in a data directory: it names the pid of the process using the directory. */
export const DATA_DIR_LOCK = "vcp-hooks.lock";

/**
 * One runtime per data directory and per audit log, taken before anything there is read or written
 * (the directories are created first). Returns the release of every lock taken, newest first; a
 * refusal releases the locks taken before it.
 *
 * @example
 * ```ts
 * const release = acquireRuntimeLocks({ dataDir: ".vcp", auditPath: ".vcp/audit/audit.jsonl" });
 * try { … } finally { release(); }
 * ```
 */
export function acquireRuntimeLocks(where: { dataDir?: string | undefined; auditPath?: string | undefined }): () => void {
  const locks: PidLock[] = [];
  const release = (): void => {
    for (const lock of locks.splice(0).reverse()) lock.release();
  };
  try {
    if (where.dataDir !== undefined) {
      mkdirSync(where.dataDir, { recursive: true });
      locks.push(acquirePidLock(join(where.dataDir, DATA_DIR_LOCK), `data directory ${resolve(where.dataDir)}`));
    }
    if (where.auditPath !== undefined) {
      mkdirSync(dirname(where.auditPath), { recursive: true });
      locks.push(acquirePidLock(`${where.auditPath}.lock`, `audit log ${resolve(where.auditPath)}`));
    }
  } catch (err) {
    release();
    throw err;
  }
  return release;
}

interface Holder {
  pid: number;
  host: string;
  since: string;
}

/**
 * Lock files this process holds (path → inode): a second acquire of one of them is refused, not taken
 * over. Kept on globalThis so that two copies of this module in one process (src and dist, or an
 * application bundling its own copy) still see each other's locks; otherwise a lock naming our own
 * pid would look stale to the other copy.
 */
const held: Map<string, number> = ((globalThis as Record<symbol, unknown>)[Symbol.for("vcp-hooks.pid-locks")] ??= new Map<string, number>()) as Map<string, number>;

/**
 * Take the lock file `path` for this process, or throw DATA_DIR_LOCKED naming the holder.
 * `what` names the protected resource in the message (e.g. "data directory /srv/vcp").
 *
 * @example
 * ```ts
 * const lock = acquirePidLock(join(dataDir, "vcp-hooks.lock"), `data directory ${dataDir}`);
 * try { … } finally { lock.release(); }
 * ```
 */
export function acquirePidLock(path: string, what: string): PidLock {
  const lockPath = resolve(path);
  if (held.has(lockPath)) {
    throw locked(lockPath, what, { pid: process.pid, host: hostname(), since: "" }, "this process already holds it (one runtime per data directory)");
  }
  const me: Holder = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  const candidate = `${lockPath}.${process.pid}.tmp`;
  writeDurably(candidate, `${JSON.stringify(me)}\n`);
  try {
    // Three rounds: one stale lock taken over, and a little slack for a concurrent starter.
    for (let round = 0; round < 3; round++) {
      try {
        linkSync(candidate, lockPath);
        const ino = statSync(lockPath).ino;
        held.set(lockPath, ino);
        return {
          path: lockPath,
          release() {
            if (held.get(lockPath) !== ino) return;
            held.delete(lockPath);
            try {
              if (statSync(lockPath).ino === ino) unlinkSync(lockPath);
            } catch {
              // Already gone: nothing to release.
            }
          },
        };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
      const current = readHolder(lockPath);
      if (current === undefined) continue; // removed meanwhile: try again
      const { holder, ino } = current;
      if (holder !== null && isAlive(holder)) {
        throw locked(lockPath, what, holder, holder.host === me.host ? `pid ${holder.pid} is running` : `it is held from host ${holder.host}, whose processes cannot be checked from here`);
      }
      takeOver(lockPath, ino, what);
    }
    throw new VcpError("DATA_DIR_LOCKED", `${what}: could not take the lock ${lockPath}: other processes keep taking it`, { lock: lockPath });
  } finally {
    try {
      unlinkSync(candidate);
    } catch {
      // Best effort: a leftover candidate is never mistaken for the lock.
    }
  }
}

/** Move the stale lock aside; if what moved is not the stale inode, put it back and refuse. */
function takeOver(lockPath: string, staleIno: number, what: string): void {
  const aside = `${lockPath}.stale.${process.pid}`;
  try {
    renameSync(lockPath, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return; // someone else moved it: retry
    throw err;
  }
  if (statSync(aside).ino === staleIno) {
    unlinkSync(aside);
    return;
  }
  // We moved a fresh lock another starter had just taken: give it back.
  const fresh = readHolder(aside)?.holder ?? null;
  try {
    linkSync(aside, lockPath);
  } finally {
    unlinkSync(aside);
  }
  throw locked(lockPath, what, fresh ?? { pid: 0, host: "unknown", since: "" }, "another process took it over at the same moment");
}

function readHolder(path: string): { holder: Holder | null; ino: number } | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  try {
    const ino = fstatSync(fd).ino;
    const text = readFileSync(fd, "utf8");
    try {
      const parsed = JSON.parse(text) as Partial<Holder>;
      if (Number.isSafeInteger(parsed.pid) && (parsed.pid as number) > 0 && typeof parsed.host === "string") {
        return { holder: { pid: parsed.pid as number, host: parsed.host, since: String(parsed.since ?? "") }, ino };
      }
    } catch {
      // fall through: unreadable
    }
    // A lock is linked into place only after its content is written and synced, so no live holder
    // has an unreadable file: it is debris (e.g. from a disk that lost the write) and stale.
    return { holder: null, ino };
  } finally {
    closeSync(fd);
  }
}

function isAlive(holder: Holder): boolean {
  if (holder.host !== hostname()) return true; // cannot check another host's pids: assume it runs
  if (holder.pid === process.pid) return false; // not in `held`: left by an earlier process with our pid
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (err) {
    // EPERM: the pid exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function writeDurably(path: string, text: string): void {
  const fd = openSync(path, "w", 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function locked(lockPath: string, what: string, holder: Holder, why: string): VcpError {
  return new VcpError(
    "DATA_DIR_LOCKED",
    `${what} is in use by another vcp-hooks process (pid ${holder.pid}${holder.host !== hostname() ? ` on ${holder.host}` : ""}${holder.since ? `, since ${holder.since}` : ""}): ${why}. Run one runtime per data directory; if no such process exists, delete ${lockPath}`,
    { lock: lockPath, pid: holder.pid, host: holder.host },
  );
}
