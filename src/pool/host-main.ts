import { writeFileSync } from "node:fs";
import type { Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { BroadcastChannel } from "node:worker_threads";
import { Piscina } from "piscina";
import { VcpError } from "../errors.js";
import { FrameKind, FrameReader, FrameWriter, frameText, HOST_EXIT_PROTOCOL, openFrameChannel, sections, type FrameHeader } from "./frames.js";
import {
  UNLOAD_CHANNEL,
  toWireError,
  type CallMessage,
  type FromHost,
  type HostConfig,
  type LoadMessage,
  type ToHost,
  type WireError,
  type WireReply,
  type WorkerConfig,
} from "./protocol.js";

/**
 * Sandbox host process entry (DESIGN §4.1). Started by the supervisor with
 * `fork(host-main.js, { execArgv: ["--no-node-snapshot"], stdio: [.., "ipc", "pipe"] })`: isolated-vm
 * needs the flag on the process, and it cannot be set per worker thread. This process owns the
 * piscina pool and nothing else; it is disposable. Any fatal error in an isolate ends it, and the
 * supervisor starts a new one.
 *
 * Its main thread is not on a chain's path: chains travel on each worker's own frame channel (fd 5, 6, …;
 * protocol.ts, worker.ts). It reads the rare call frames on fd 4 (frames.ts) — bundle loads, which it
 * hands to the pool, unloads and close — and parses nothing a guest wrote.
 */

const NODE_MAJOR = Number(process.versions.node.split(".")[0]);
if (NODE_MAJOR < 24 || process.send === undefined) {
  // The supervisor reads this from stderr and reports SANDBOX_START_FAILED.
  process.stderr.write(
    process.send === undefined
      ? "vcp-hooks sandbox host must be started by the supervisor (IPC channel missing)\n"
      : `vcp-hooks sandbox host needs Node.js >= 24 (isolated-vm 7), got ${process.version}\n`,
  );
  process.exit(78);
}

/** The supervisor's end of the frame channel is this process's fd 4 (host-process.ts). */
const FRAME_FD = 4;

let pool: Piscina | undefined;
let unloads: BroadcastChannel | undefined;
let frameBytes = 0;
let frames: Socket | undefined;
let writer: FrameWriter | undefined;
const ACCEPTS: ReadonlySet<FrameKind> = new Set([FrameKind.call]);

// SECURITY: the supervisor is gone (or closed the channel): never leave isolates running
// unsupervised. A host whose main thread is wedged cannot run this; the supervisor kills it on exit.
process.on("disconnect", () => process.exit(0));

process.on("message", (raw: unknown) => {
  const message = raw as ToHost;
  if (message.t === "init") void init(message.config);
});

function openFrames(limit: number): void {
  frameBytes = limit;
  const reader = new FrameReader(limit, ACCEPTS, onFrame, (err) => {
    // SECURITY: a corrupt stream cannot be resynchronized, and a frame cut short may have been the
    // start of anything. Die loudly: the supervisor answers the chains in flight and restarts a host.
    process.stderr.write(`vcp-hooks sandbox host: ${err.message}\n`);
    process.exit(HOST_EXIT_PROTOCOL);
  });
  const socket = openFrameChannel(FRAME_FD, reader);
  frames = socket;
  writer = new FrameWriter(socket);
  socket.on("end", () => {
    reader.end();
    process.exit(0); // the supervisor closed the channel: it is gone
  });
  socket.on("error", () => process.exit(0));
}

function onFrame(frame: Uint8Array, header: FrameHeader): void {
  let call: CallMessage;
  try {
    const { payload } = sections(header);
    call = JSON.parse(frameText(frame, payload[0], payload[1])) as CallMessage;
  } catch (err) {
    process.stderr.write(`vcp-hooks sandbox host: unreadable call frame: ${(err as Error).message}\n`);
    process.exit(HOST_EXIT_PROTOCOL);
  }
  switch (call.t) {
    case "load":
      void runLoad(call);
      break;
    case "unload":
      unloads?.postMessage(call.digest);
      reply(call.id, { ok: true, value: null });
      break;
    case "close":
      void close(call.id);
      break;
  }
}

/**
 * Linux timer slack for this process's threads, ns. Every timed isolate call arms a timer on
 * isolated-vm's timer thread, and a finished call's timer stays queued until its expiry; with the
 * default 50 µs slack each expiry is its own wake-up. 1 ms lets the kernel coalesce them (bench
 * worker-cost's paced rows, one call per 100 µs: 2.1 → 0.8 µs of timer-thread CPU per call when first
 * measured, 22.3 → 2.7 µs on 2026-11-28, when a wake-up on this machine cost ten times as much). A hook's timeout may then fire up to 1 ms
 * late, which its millisecond budget and the watchdog's grace already allow for.
 */
const TIMER_SLACK_NS = 1_000_000;

/** Threads inherit their creator's slack: set on the main thread before the pool starts any worker. */
function widenTimerSlack(): void {
  try {
    writeFileSync("/proc/self/timerslack_ns", String(TIMER_SLACK_NS));
  } catch {
    // Not Linux, or /proc not mounted: timers keep the default slack; nothing else depends on it.
  }
}

async function init(config: HostConfig): Promise<void> {
  widenTimerSlack();
  unloads = new BroadcastChannel(UNLOAD_CHANNEL);
  unloads.unref();
  pool = new Piscina({
    filename: fileURLToPath(new URL("./worker.js", import.meta.url)),
    // A fixed pool: isolates are per worker, so a thread that comes and goes would recompile bundles.
    minThreads: config.threads,
    maxThreads: config.threads,
    idleTimeout: Number.MAX_SAFE_INTEGER,
    // Only bundle loads (and the start's ping) run as pool tasks; chains come on the worker channels.
    maxQueue: config.maxQueue + config.threads + 64,
    concurrentTasksPerWorker: 1,
    // Isolate calls are asynchronous (promises, async guest code): a worker must keep its event loop
    // running between tasks, which "sync" atomics would block.
    atomics: "async",
    // No run/wait-time histograms: nothing reads them, and each task would record into them on this thread.
    recordTiming: false,
    // SECURITY: the claims are shared by this process's workers only; each takes one channel (worker.ts).
    workerData: { ...config, channelClaims: new SharedArrayBuffer(4 * config.channelFds.length) } satisfies WorkerConfig,
  });
  pool.on("error", (err: Error) => process.stderr.write(`vcp-hooks sandbox worker error: ${err.stack ?? err.message}\n`));
  // One task before "ready": a worker module that cannot load (isolated-vm, --no-node-snapshot) fails
  // the start, where the supervisor reports SANDBOX_START_FAILED, instead of every chain.
  let ping: WireReply;
  try {
    ping = (await pool.run({ t: "ping" })) as WireReply;
  } catch (err) {
    ping = { ok: false, error: toWireError(err) };
  }
  if (!ping.ok) {
    process.stderr.write(`vcp-hooks sandbox worker failed to start: ${ping.error.message}\n`);
    process.exit(70);
  }
  openFrames(config.frameBytes);
  // A send after the supervisor went away would throw; the disconnect handler ends the process anyway.
  if (process.connected) process.send?.({ t: "ready", pid: process.pid } satisfies FromHost);
}

async function runLoad(message: LoadMessage): Promise<void> {
  forward(message.id, await runOnPool(message));
}

/** What a load came back with: the reply as JSON text (the worker checked its size), or an error made on this side. */
async function runOnPool(task: LoadMessage): Promise<string | WireError> {
  if (pool === undefined) return { code: "SANDBOX_START_FAILED", message: "sandbox host is not initialised" };
  try {
    return (await pool.run(task)) as string;
  } catch (err) {
    return piscinaError(err);
  }
}

function forward(id: number, result: string | WireError): void {
  if (typeof result !== "string") {
    reply(id, { ok: false, error: result });
    return;
  }
  try {
    writer?.write(FrameKind.reply, id, 0, { payload: result }, frameBytes, "sandbox reply");
  } catch (err) {
    // The worker refuses replies over the limit before they get here; should one still be larger, its
    // chain fails with the coded error instead of the frame being sent.
    reply(id, { ok: false, error: toWireError(err) });
  }
}

/** A reply made on this thread (unload, close, a pool error): never guest data. */
function reply(id: number, payload: WireReply, then?: () => void): void {
  if (writer === undefined) return then?.();
  writer.write(FrameKind.reply, id, 0, { payload: JSON.stringify(payload) }, frameBytes, "reply", then);
}

function piscinaError(err: unknown): WireError {
  if (err instanceof Error && err.message === "Task queue is at limit") {
    return toWireError(new VcpError("SANDBOX_OVERLOADED", `sandbox host queue is full (maxQueue ${pool?.options.maxQueue})`));
  }
  return toWireError(err);
}

async function close(id: number): Promise<void> {
  // Graceful: piscina finishes running and queued tasks before its workers stop.
  await pool?.close();
  unloads?.close();
  if (writer !== undefined && frames?.writable === true) reply(id, { ok: true, value: null }, () => process.exit(0));
  else process.exit(0);
}
