/**
 * The command lane (PROFILES §6): run one pinned hook script outside the sandbox. This is the only
 * code of vcp-hooks that starts a hook's process. Nothing here is sandboxed — the script runs with the
 * server's user, filesystem and network (use `exec.wrapper` for bwrap / systemd-run) — so every result
 * is marked `sandboxed: false` by the caller; what this file guarantees is that a script cannot be
 * swapped under its pin, cannot see the server's environment or descriptors, cannot hang or flood a
 * chain, and leaves nothing running behind it.
 *
 *   timeout_ms starts ─► open(command, O_NONBLOCK) ─► fstat: regular file ─► sha256(fd) == pinned? ─no─► EXEC_HASH_MISMATCH
 *        │      still opening or hashing at timeout_ms ─► timed out, not started            │yes
 *        │                                                                                   ▼
 *        │   spawn [wrapper…] /proc/self/fd/3 args   fd 3 = the hashed fd; own session and group;
 *        │        │                                   fds the server inherited → /dev/null (descriptors.ts);
 *        │        │                                   env = env_allow + the run's VCP_EXEC_RUN mark (tree.ts)
 *        │        │ stdin: written once, closed           stdout/stderr: capped, drained
 *        │        ▼
 *        │   timeout_ms ─► SIGTERM(tree) ─ term_grace_ms ─► SIGKILL(tree) ─ 1 s ─► pipes destroyed
 *        └─ closed after spawn              main exits but an orphan holds the pipes ─ 1 s ─┘
 *   every end (exit, timeout, orphan grace) ─► SIGKILL the group and every process of the run ─► answer
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";
import { VcpError } from "../../errors.js";
import { redactString } from "../../audit/redact-string.js";
import { childStdio } from "./descriptors.js";
import { newRunMark, RUN_MARK_VARIABLE, trackProcessTree, type ProcessTree } from "./tree.js";
import { recordedMs } from "../../model/result.js";

/** One exec hook as the runtime runs it: the manifest's `exec` block plus the deployment's settings. */
export interface CommandSpec {
  /** Absolute path of the executable (or, with `shell: true`, a shell string run by `/bin/sh -c`). */
  readonly command: string;
  /** Lowercase hex SHA-256 of the executable's bytes (of the UTF-8 string for a shell command). */
  readonly sha256: string;
  readonly args?: readonly string[];
  /** Working directory; default the server's. */
  readonly cwd?: string;
  /** Variables passed through from `options.env`; every other variable is withheld. */
  readonly env_allow: readonly string[];
  /** `command` is a shell string. Only honoured when `options.shellAllowed` (config `exec.shell`). */
  readonly shell?: boolean;
  /** argv prefix the command runs under, e.g. `["bwrap", "--ro-bind", "/", "/", "--"]`. */
  readonly wrapper?: readonly string[];
  /** Bytes kept of stdout and of stderr, each. */
  readonly max_output_bytes: number;
  /** Everything the lane does for the hook — opening and hashing the executable included — ends by then. */
  readonly timeout_ms: number;
  /** Time between SIGTERM and SIGKILL; `0` kills at once (ai-memory's wire). */
  readonly term_grace_ms: number;
}

export interface CommandOptions {
  /** Where `env_allow` names are read from; default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Config `exec.shell`. */
  readonly shellAllowed?: boolean;
  /** Extra variables set for the script (e.g. `CLAUDE_PROJECT_DIR`), after `env_allow` filtering. */
  readonly extraEnv?: Readonly<Record<string, string>>;
}

export interface CommandResult {
  /** The exit code, or null when a signal ended the process (or it was never started: see `timedOut`). */
  readonly exitCode: number | null;
  /** The signal that ended the process (`SIGKILL` after a timeout), or null. */
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  /** Redacted (secret shapes replaced) before anyone logs or audits it. */
  readonly stderr: string;
  readonly durationMs: number;
  readonly timedOut: boolean;
  /** stdout or stderr went over `max_output_bytes` and was cut. */
  readonly truncated: boolean;
  /** The hash the executable had when it was started (equal to the pin); the pin when timed out before the start. */
  readonly sha256: string;
  /** Always false: the lane's mark for results, audit and status. */
  readonly sandboxed: false;
}

/** After the main process is gone, how long pipes still held by its orphans are waited for. */
export const ORPHAN_PIPE_GRACE_MS = 1000;

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * Run one exec hook: re-hash the executable, spawn it in its own session and process group with a
 * filtered environment and none of the server's descriptors, write `stdinText` once, and collect
 * capped output. Resolves once the process has exited and every process it started is killed — at the
 * latest `timeout_ms + term_grace_ms + 1 s` (plus that final sweep) after the call; a run still opening
 * or hashing its executable at `timeout_ms` resolves timed out, not started. Rejects only when the hook
 * was not started for a reason of its own (`EXEC_HASH_MISMATCH`, `EXEC_SHELL_DISABLED`, `EXEC_SPAWN_FAILED`).
 *
 * @example
 * ```ts
 * const r = await runCommandHook({ command: "/opt/hooks/guard.sh", sha256: "…", env_allow: ["PATH"],
 *   max_output_bytes: 65536, timeout_ms: 5000, term_grace_ms: 5000 }, JSON.stringify(input));
 * if (r.exitCode === 2) block(r.stderr);
 * ```
 */
export async function runCommandHook(spec: CommandSpec, stdinText: string, options: CommandOptions = {}): Promise<CommandResult> {
  // SECURITY: the hook's time limit starts here, before any work on its executable (open, hash, spawn).
  const startedAt = performance.now();
  const clock: RunClock = { startedAt, deadline: startedAt + spec.timeout_ms };
  if (!HEX64.test(spec.sha256)) throw new VcpError("INVALID_HOOK", `exec.sha256 must be 64 lowercase hex digits, got '${spec.sha256.slice(0, 80)}'`, { field: "exec.sha256" });
  const mark = newRunMark();
  const env = filterEnv(spec.env_allow, options.env ?? process.env, options.extraEnv);
  // Set last, so neither env_allow nor extraEnv can replace the mark the end-of-run sweep looks for.
  env[RUN_MARK_VARIABLE] = mark;
  if (spec.shell === true) {
    // SECURITY: a shell string is a second, wider language; it needs both the hook's and the deployment's consent.
    if (options.shellAllowed !== true) throw new VcpError("EXEC_SHELL_DISABLED", `exec hook command '${spec.command.slice(0, 200)}' is a shell string and exec.shell is off`, { command: spec.command.slice(0, 200) });
    const actual = sha256Hex(Buffer.from(spec.command, "utf8"));
    // SECURITY: the pin covers the string itself, so an edited command is refused like an edited file.
    if (actual !== spec.sha256) throw hashMismatch(spec.command, spec.sha256, actual);
    const [file, argv] = withWrapper(spec.wrapper, "/bin/sh", ["-c", spec.command, "vcp-exec", ...(spec.args ?? [])]);
    return supervise(startChild(file, argv, env, spec.cwd, undefined, spec.command, mark), spec, stdinText, actual, clock);
  }
  if (!isAbsolute(spec.command) && spec.cwd === undefined) {
    throw new VcpError("EXEC_SPAWN_FAILED", `exec hook command '${spec.command}' must be an absolute path (or relative to exec.cwd); no PATH lookup is done`, { command: spec.command });
  }
  const path = resolve(spec.cwd ?? "/", spec.command);
  const handle = await openPinned(path, spec.sha256, clock.deadline);
  if (handle === undefined) return notStarted(spec, path, clock);
  try {
    // SECURITY: Linux execs the opened descriptor itself (/proc/self/fd/3 in the child, where stdio[3]
    // is this fd); a script's interpreter re-opens it through the same path, i.e. the same inode.
    // In-place writes to the inode by a user who may write the file are outside this guarantee: keep
    // hook scripts writable by their owner only. Elsewhere the path is exec'd (a window remains).
    const viaFd = process.platform === "linux";
    const target = viaFd ? "/proc/self/fd/3" : path;
    const [file, argv] = withWrapper(spec.wrapper, target, [...(spec.args ?? [])]);
    const child = startChild(file, argv, env, spec.cwd, viaFd ? handle.fd : undefined, path, mark);
    return await supervise(child, spec, stdinText, spec.sha256, clock);
  } finally {
    // The child holds its own copy of the descriptor from the moment spawn() returns.
    await handle.close().catch(() => undefined);
  }
}

/** When the run began and when its `timeout_ms` is up (performance.now() milliseconds). */
interface RunClock {
  readonly startedAt: number;
  readonly deadline: number;
}

/**
 * Open the executable and check its hash, all before `deadline`: the pinned file, still open, or
 * undefined when the deadline came first (a file on a hung mount, a multi-gigabyte file). Throws the
 * coded refusal (cannot be opened, not a regular file, another hash).
 */
async function openPinned(path: string, pinned: string, deadline: number): Promise<FileHandle | undefined> {
  let late = false;
  const work = (async (): Promise<FileHandle | undefined> => {
    let handle: FileHandle;
    try {
      // SECURITY: O_NONBLOCK, so a FIFO (or a device) at the path cannot hold the open — and a thread
      // of the server's pool — waiting for a writer; fstat refuses it next. O_NOCTTY|O_RDONLY, and the
      // same descriptor is hashed and executed, so a rename or replace of the path between the check
      // and the exec cannot swap the program.
      handle = await open(path, fsConstants.O_RDONLY | fsConstants.O_NOCTTY | fsConstants.O_NONBLOCK);
    } catch (err) {
      throw new VcpError("EXEC_SPAWN_FAILED", `exec hook command ${path} cannot be opened: ${(err as Error).message}`, { command: path }, { cause: err });
    }
    let actual: string | undefined;
    try {
      const stat = await handle.stat();
      if (!stat.isFile()) throw new VcpError("EXEC_SPAWN_FAILED", `exec hook command ${path} is not a regular file`, { command: path });
      actual = await hashHandle(handle, () => late || performance.now() >= deadline);
      if (actual !== undefined && actual !== pinned) throw hashMismatch(path, pinned, actual);
    } catch (err) {
      await handle.close().catch(() => undefined);
      throw err;
    }
    if (actual !== undefined && !late) return handle;
    await handle.close().catch(() => undefined);
    return undefined;
  })();
  let timer: NodeJS.Timeout | undefined;
  const deadlinePassed = new Promise<"late">((done) => (timer = setTimeout(() => done("late"), Math.max(0, deadline - performance.now()))));
  try {
    const first = await Promise.race([work, deadlinePassed]);
    if (first !== "late") return first;
  } finally {
    clearTimeout(timer);
  }
  late = true;
  // What the open and hash still do ends on its own and closes the file; a refusal after the deadline changes nothing.
  work.then((handle) => handle?.close(), () => undefined).catch(() => undefined);
  return undefined;
}

/** The answer of a run whose `timeout_ms` was up before its executable was opened and hashed: not started. */
function notStarted(spec: CommandSpec, path: string, clock: RunClock): CommandResult {
  return {
    exitCode: null,
    signal: null,
    stdout: "",
    stderr: `vcp-hooks: ${path} was not started: opening and hashing it took longer than timeout_ms (${spec.timeout_ms} ms)`,
    durationMs: recordedMs(performance.now() - clock.startedAt),
    timedOut: true,
    truncated: false,
    sha256: spec.sha256,
    sandboxed: false,
  };
}

function hashMismatch(command: string, pinned: string, actual: string): VcpError {
  return new VcpError("EXEC_HASH_MISMATCH", `exec hook command ${command.slice(0, 200)} has sha256 ${actual}, not the pinned ${pinned}; it was not run`, { command: command.slice(0, 200), pinned, actual });
}

function sha256Hex(data: Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

/** The file's SHA-256, or undefined once `stop()` says the time is up (asked before every 64 KiB read). */
async function hashHandle(handle: FileHandle, stop: () => boolean): Promise<string | undefined> {
  const hash = createHash("sha256");
  const chunk = Buffer.allocUnsafe(64 * 1024);
  for (let position = 0; ; ) {
    if (stop()) return undefined;
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
    if (bytesRead === 0) break;
    hash.update(chunk.subarray(0, bytesRead));
    position += bytesRead;
  }
  return hash.digest("hex");
}

/** SECURITY: the script sees only the allowed variables, never the server's tokens or keys. */
export function filterEnv(allow: readonly string[], from: Readonly<Record<string, string | undefined>>, extra?: Readonly<Record<string, string>>): Record<string, string> {
  const env: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const name of allow) {
    const value = Object.hasOwn(from, name) ? from[name] : undefined;
    if (typeof value === "string") env[name] = value;
  }
  if (extra) for (const [k, v] of Object.entries(extra)) env[k] = v;
  return env;
}

function withWrapper(wrapper: readonly string[] | undefined, file: string, args: readonly string[]): [string, string[]] {
  if (wrapper === undefined || wrapper.length === 0) return [file, [...args]];
  return [wrapper[0]!, [...wrapper.slice(1), file, ...args]];
}

interface Started {
  child: ChildProcess;
  /** Every process the run starts; absent when the spawn failed (there is no pid). */
  tree: ProcessTree | undefined;
}

function startChild(file: string, argv: readonly string[], env: Record<string, string>, cwd: string | undefined, fd: number | undefined, shown: string, mark: string): Started {
  const { stdio, release } = childStdio(fd);
  let child: ChildProcess;
  try {
    child = spawn(file, argv, {
      cwd,
      env,
      // SECURITY: its own session and process group (setsid), so a signal to the group reaches every
      // process the script starts that stays in it; tree.ts finds those that leave.
      detached: true,
      // SECURITY: stdin, stdout, stderr, the script on 3, and /dev/null over every descriptor the
      // server holds without close-on-exec (descriptors.ts): nothing of the server's reaches the script.
      stdio,
      windowsHide: true,
    });
  } catch (err) {
    throw new VcpError("EXEC_SPAWN_FAILED", `exec hook command ${shown} could not be started: ${(err as Error).message}`, { command: shown }, { cause: err });
  } finally {
    release();
  }
  return { child, tree: child.pid !== undefined ? trackProcessTree(child.pid, mark) : undefined };
}

class Capped {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  truncated = false;
  constructor(private readonly max: number) {}
  push(chunk: Buffer): void {
    // SECURITY: the cap applies as data arrives; beyond it bytes are read and dropped (the pipe keeps draining).
    if (this.size >= this.max) {
      this.truncated = true;
      return;
    }
    const room = this.max - this.size;
    if (chunk.length > room) {
      this.truncated = true;
      chunk = chunk.subarray(0, room);
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
  }
  text(): string {
    // A cut in the middle of a UTF-8 sequence becomes U+FFFD, never an exception.
    return Buffer.concat(this.chunks).toString("utf8");
  }
}

function supervise(started: Started, spec: CommandSpec, stdinText: string, sha256: string, clock: RunClock): Promise<CommandResult> {
  const { child, tree } = started;
  const out = new Capped(spec.max_output_bytes);
  const err = new Capped(spec.max_output_bytes);
  return new Promise((done, fail) => {
    let timedOut = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let openPipes = 2;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];
    const later = (ms: number, fn: () => void) => timers.push(setTimeout(fn, ms));

    const finish = () => {
      if (settled) return;
      settled = true;
      for (const t of timers) clearTimeout(t);
      child.stdout?.destroy();
      child.stderr?.destroy();
      child.stdin?.destroy();
      const result: CommandResult = {
        exitCode: exit?.code ?? null,
        signal: exit?.signal ?? (exit === undefined ? "SIGKILL" : null),
        stdout: out.text(),
        stderr: redactString(err.text()),
        durationMs: recordedMs(performance.now() - clock.startedAt),
        timedOut,
        truncated: out.truncated || err.truncated,
        sha256,
        sandboxed: false,
      };
      // SECURITY: nothing the script started is left running when the hook answers (tree.ts).
      tree?.end();
      done(result);
    };
    const maybeFinish = () => {
      if (exit !== undefined && openPipes === 0) finish();
    };

    child.once("error", (e) => {
      if (settled) return;
      settled = true;
      for (const t of timers) clearTimeout(t);
      fail(new VcpError("EXEC_SPAWN_FAILED", `exec hook command ${spec.command.slice(0, 200)} could not be started: ${e.message}`, { command: spec.command.slice(0, 200) }, { cause: e }));
    });
    child.stdout!.on("data", (c: Buffer) => out.push(c));
    child.stderr!.on("data", (c: Buffer) => err.push(c));
    for (const pipe of [child.stdout!, child.stderr!]) {
      pipe.once("close", () => {
        openPipes--;
        maybeFinish();
      });
    }
    child.once("exit", (code, signal) => {
      exit = { code, signal };
      if (openPipes > 0) {
        // An orphan (`sleep 60 &`) still holds stdout/stderr: give it a second to finish writing, then
        // drop the pipes and end the tree, so nothing a hook leaves behind can hang the chain.
        later(ORPHAN_PIPE_GRACE_MS, finish);
      }
      maybeFinish();
    });
    // Opening and hashing the executable already spent part of timeout_ms (runCommandHook's clock).
    later(Math.max(0, clock.deadline - performance.now()), () => {
      if (exit !== undefined) return;
      timedOut = true;
      tree?.signal(spec.term_grace_ms > 0 ? "SIGTERM" : "SIGKILL");
      later(spec.term_grace_ms, () => {
        if (exit === undefined) tree?.signal("SIGKILL");
        // Last resort: nothing has reported an exit (a process stuck in the kernel): stop waiting.
        later(ORPHAN_PIPE_GRACE_MS, finish);
      });
    });

    // stdin once, then EOF. EPIPE (the script never reads its input) is not an error.
    child.stdin!.on("error", () => undefined);
    child.stdin!.end(stdinText);
  });
}
