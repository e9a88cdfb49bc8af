/**
 * The descriptors a hook script starts with: its stdin, stdout and stderr (the lane's pipes) and, on
 * Linux, its own pinned file on fd 3 — nothing the server process happens to hold.
 *
 * Why this is needed: a child inherits every descriptor its parent holds without close-on-exec. Node
 * and libuv open all of theirs close-on-exec, and at startup Node marks fds 0–15 (and any unbroken run
 * after them) close-on-exec too (libuv `uv_disable_stdio_inheritance`) — but a descriptor the server
 * itself inherited above that run (a supervisor's log file on fd 40, a socket on fd 251, an IPC channel)
 * stays inheritable, and `child_process.spawn` passes it to every script (measured on Node 24.21: fd 7
 * is covered, fds 40 and 300 reached the script). Node offers no `fcntl` to fix the flag and no way
 * to close a descriptor in the child, so the lane has libuv overwrite each such number in the child
 * with /dev/null before the exec: the script holds a descriptor there, but what it pointed to is out of
 * reach. Cost per spawn: nothing unless the server holds such descriptors, then one open of /dev/null.
 * (libuv first copies /dev/null above the highest such number, so one within a descriptor of the
 * RLIMIT_NOFILE soft limit makes every spawn fail: EXEC_SPAWN_FAILED, the hook's fail mode applies.)
 *
 *   server fds:  0 1 2 │ 3…15 (close-on-exec by Node) │ 40 (inherited, no close-on-exec) │ sockets (close-on-exec)
 *   child fds:   pipes │ 3 = the pinned script       │ 40 = /dev/null                   │ —
 */
import { closeSync, openSync, readdirSync, readFileSync } from "node:fs";
import { VcpError } from "../../errors.js";

/** O_CLOEXEC as /proc/<pid>/fdinfo prints it (octal `flags:`; the generic Linux value, x86 and arm alike). */
const O_CLOEXEC = 0o2000000;

let scanned: readonly number[] | undefined;

/**
 * The descriptors above stderr that this process holds without close-on-exec — what every child
 * would inherit. Scanned once (on the first spawn): Node and libuv never create such a descriptor,
 * so they are the ones inherited at startup; a native addon opening one later is not seen.
 *
 * @example
 * ```ts
 * inheritableDescriptors(); // [40, 251] when started as `bash -c 'exec 40>log; exec vcp-hooks serve'`
 * ```
 */
export function inheritableDescriptors(): readonly number[] {
  if (process.platform !== "linux") return [];
  scanned ??= scanFdinfo();
  return scanned;
}

function scanFdinfo(): number[] {
  let names: string[];
  try {
    names = readdirSync("/proc/self/fdinfo");
  } catch (err) {
    // SECURITY: without the list no script may start: it would inherit whatever the server holds.
    throw new VcpError("EXEC_SPAWN_FAILED", `the command lane cannot list this process's descriptors (/proc/self/fdinfo): ${(err as Error).message}`, { path: "/proc/self/fdinfo" }, { cause: err });
  }
  const found: number[] = [];
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd <= 2) continue;
    let info: string;
    try {
      info = readFileSync(`/proc/self/fdinfo/${name}`, "latin1");
    } catch {
      continue; // closed since the listing (the listing's own descriptor is one)
    }
    const flags = /^flags:\s*([0-7]+)$/m.exec(info);
    if (flags !== null && (Number.parseInt(flags[1]!, 8) & O_CLOEXEC) === 0) found.push(fd);
  }
  return found.sort((a, b) => a - b);
}

export interface ChildStdio {
  /** `spawn`'s `stdio`: three pipes, the script's fd on 3 when given, /dev/null over every inheritable number. */
  readonly stdio: Array<"pipe" | "ignore" | number>;
  /** Close this process's /dev/null descriptor once `spawn` has returned (the child holds its own copies). */
  release(): void;
}

/**
 * The `stdio` a script is spawned with.
 *
 * @example
 * ```ts
 * const { stdio, release } = childStdio(handle.fd);
 * try { child = spawn("/proc/self/fd/3", args, { stdio, detached: true }); } finally { release(); }
 * ```
 */
export function childStdio(scriptFd: number | undefined): ChildStdio {
  const stdio: Array<"pipe" | "ignore" | number> = scriptFd === undefined ? ["pipe", "pipe", "pipe"] : ["pipe", "pipe", "pipe", scriptFd];
  const reachable = inheritableDescriptors().filter((fd) => fd >= stdio.length);
  if (reachable.length === 0) return { stdio, release: () => undefined };
  // Opened close-on-exec (libuv opens every file so): only the copies placed below reach the child.
  const devNull = openSync("/dev/null", "r");
  for (const fd of reachable) {
    while (stdio.length < fd) stdio.push("ignore");
    // SECURITY: libuv dup2()s /dev/null onto this number in the child before the exec, replacing the
    // descriptor the server inherited there; "ignore" slots in between are the server's own
    // close-on-exec descriptors, closed by the exec.
    stdio[fd] = devNull;
  }
  return { stdio, release: () => closeSync(devNull) };
}
