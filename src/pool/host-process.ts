import { fork, type ChildProcess } from "node:child_process";
import type { FromHost, HostConfig, ToHost } from "./protocol.js";
import type { HostKill } from "./watchdog.js";

const STDERR_TAIL_BYTES = 8192;

/** One sandbox host process (host-main.ts) and what the supervisor knows about its life. */
export interface HostHandle {
  child: ChildProcess;
  generation: number;
  ready: boolean;
  exit?: { code: number | null; signal: NodeJS.Signals | null };
  disconnected: boolean;
  gone: boolean;
  /** The last STDERR_TAIL_BYTES of its stderr, for start failures and crash logs. */
  stderrTail: string;
  onReady?: () => void;
  onGoneBeforeReady?: (why: string) => void;
  /** Set when the watchdog killed this host, before the SIGKILL: recovery reads it. */
  killed?: HostKill;
}

/**
 * SECURITY: a wedged host cannot run its own "disconnect" handler, so the main process kills every
 * live host when it exits: no orphan keeps isolates (and their memory) after the runtime is gone.
 */
const liveHosts = new Set<ChildProcess>();
let exitHookInstalled = false;
function trackHost(child: ChildProcess): void {
  liveHosts.add(child);
  child.once("exit", () => liveHosts.delete(child));
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const host of liveHosts) {
      try {
        host.kill("SIGKILL");
      } catch {
        // already gone
      }
    }
  });
}

/**
 * Fork a sandbox host and send it its configuration. `onMessage` gets every message; `onGone` is
 * called once both "exit" and "disconnect" happened (replies still in the pipe are read before
 * "disconnect", so a death is acted on only after the last reply), or when the fork itself failed.
 * Throws when the fork throws synchronously.
 */
export function forkHost(
  entry: string,
  config: HostConfig,
  onMessage: (host: HostHandle, message: FromHost) => void,
  onGone: (host: HostHandle, error?: string) => void,
): HostHandle {
  // process.execPath: the same Node 24 that runs the caller (npm scripts put it first on PATH).
  const child = fork(entry, [], {
    execPath: process.execPath,
    execArgv: ["--no-node-snapshot"], // isolated-vm requires it, per process (DESIGN §1)
    serialization: "json", // ≈30 µs round trip against ≈120 µs for "advanced" with object payloads (DESIGN §4.1); chain payloads are strings now, where both cost the same (bench/profile-chain.ts)
    stdio: ["ignore", "ignore", "pipe", "ipc"],
  });
  const host: HostHandle = { child, generation: config.generation, ready: false, disconnected: false, gone: false, stderrTail: "" };
  trackHost(child);
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    host.stderrTail = (host.stderrTail + chunk).slice(-STDERR_TAIL_BYTES);
  });
  child.on("message", (message: FromHost) => onMessage(host, message));
  child.on("error", (err) => {
    // Spawn failure (no exit follows) or a failed send to a dying child (exit follows).
    if (child.pid === undefined) {
      host.exit = { code: null, signal: null };
      host.disconnected = true;
      onGone(host, err.message);
    }
  });
  child.on("exit", (code, signal) => {
    host.exit = { code, signal };
    if (host.disconnected || !child.connected) {
      host.disconnected = true;
      onGone(host);
    }
  });
  child.on("disconnect", () => {
    host.disconnected = true;
    if (host.exit) onGone(host);
  });
  child.send({ t: "init", config } satisfies ToHost);
  return host;
}
