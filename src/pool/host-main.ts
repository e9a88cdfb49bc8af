import { fileURLToPath } from "node:url";
import { BroadcastChannel } from "node:worker_threads";
import { Piscina } from "piscina";
import { VcpError } from "../errors.js";
import {
  UNLOAD_CHANNEL,
  toWireError,
  type ChainMessage,
  type FromHost,
  type HostConfig,
  type LoadMessage,
  type ToHost,
  type WireError,
  type WirePlan,
  type WorkerReply,
} from "./protocol.js";

/**
 * Sandbox host process entry (DESIGN §4.1). Started by the supervisor with
 * `fork(host-main.js, { execArgv: ["--no-node-snapshot"], serialization: "json" })`: isolated-vm needs
 * the flag on the process, and it cannot be set per worker thread. This process owns the piscina pool
 * and nothing else; it is disposable. Any fatal error in an isolate ends it, and the supervisor starts
 * a new one.
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

let pool: Piscina | undefined;
let unloads: BroadcastChannel | undefined;
/**
 * Hook lists by plan key, as the supervisor sent them. The supervisor bounds this (it sends `forget`
 * for keys it evicts) and re-sends every plan to a new host generation.
 */
const plans = new Map<number, WirePlan>();

function send(message: FromHost): void {
  // A send after the supervisor went away would throw; the disconnect handler ends the process anyway.
  if (process.connected) process.send?.(message);
}

// SECURITY: the supervisor is gone (or closed the channel): never leave isolates running
// unsupervised. A host whose main thread is wedged cannot run this; the supervisor kills it on exit.
process.on("disconnect", () => process.exit(0));

process.on("message", (raw: unknown) => {
  const message = raw as ToHost;
  switch (message.t) {
    case "init":
      void init(message.config);
      break;
    case "chain":
      void runChainMessage(message);
      break;
    case "load":
      void runTask(message);
      break;
    case "forget":
      for (const key of message.keys) plans.delete(key);
      break;
    case "unload":
      unloads?.postMessage(message.digest);
      send({ t: "reply", id: message.id, ok: true, value: null });
      break;
    case "close":
      void close(message.id);
      break;
  }
});

async function init(config: HostConfig): Promise<void> {
  unloads = new BroadcastChannel(UNLOAD_CHANNEL);
  unloads.unref();
  pool = new Piscina({
    filename: fileURLToPath(new URL("./worker.js", import.meta.url)),
    // A fixed pool: isolates are per worker, so a thread that comes and goes would recompile bundles.
    minThreads: config.threads,
    maxThreads: config.threads,
    idleTimeout: Number.MAX_SAFE_INTEGER,
    // The supervisor enforces the real bound (it holds all but min(threads, maxQueue) waiting chains);
    // the headroom leaves room for bundle loads, which also run as tasks.
    maxQueue: config.maxQueue + config.threads + 64,
    concurrentTasksPerWorker: 1,
    // Isolate calls are asynchronous (promises, async guest code): a worker must keep its event loop
    // running between tasks, which "sync" atomics would block.
    atomics: "async",
    workerData: config,
  });
  pool.on("error", (err: Error) => process.stderr.write(`vcp-hooks sandbox worker error: ${err.stack ?? err.message}\n`));
  // One task before "ready": a worker module that cannot load (isolated-vm, --no-node-snapshot) fails
  // the start, where the supervisor reports SANDBOX_START_FAILED, instead of every chain.
  let ping: WorkerReply;
  try {
    ping = (await pool.run({ t: "ping" })) as WorkerReply;
  } catch (err) {
    ping = { ok: false, error: toWireError(err) };
  }
  if (!ping.ok) {
    process.stderr.write(`vcp-hooks sandbox worker failed to start: ${ping.error.message}\n`);
    process.exit(70);
  }
  send({ t: "ready", pid: process.pid });
}

/**
 * A chain: remember its plan when the supervisor sent one, and hand the worker only the key. A worker
 * that has not compiled that key answers `miss` before running anything, and gets the task again with
 * the hook list attached (once per worker and key).
 */
async function runChainMessage(message: ChainMessage): Promise<void> {
  let plan = message.plan;
  if (plan !== undefined) plans.set(message.k, plan);
  else plan = plans.get(message.k);
  if (plan === undefined) {
    // The supervisor sends a plan before naming its key; this is a protocol bug, not a guest's doing.
    send({ t: "reply", id: message.id, ok: false, error: { code: "SANDBOX_START_FAILED", message: `sandbox host has no plan ${message.k}` } });
    return;
  }
  const reply = await runOnPool(message);
  if (!reply.ok && reply.miss === true) {
    message.plan = plan;
    sendReply(message.id, await runOnPool(message));
    return;
  }
  sendReply(message.id, reply);
}

async function runTask(message: LoadMessage): Promise<void> {
  sendReply(message.id, await runOnPool(message));
}

async function runOnPool(message: ChainMessage | LoadMessage): Promise<WorkerReply> {
  if (pool === undefined) {
    return { ok: false, error: { code: "SANDBOX_START_FAILED", message: "sandbox host is not initialised" } };
  }
  try {
    return (await pool.run(message)) as WorkerReply;
  } catch (err) {
    return { ok: false, error: piscinaError(err) };
  }
}

function sendReply(id: number, reply: WorkerReply): void {
  try {
    send(reply.ok ? { t: "reply", id, ok: true, ...(reply.json !== undefined ? { json: reply.json } : { value: reply.value }), ...(reply.logs ? { logs: reply.logs } : {}) }
      : { t: "reply", id, ok: false, error: reply.error, ...(reply.logs ? { logs: reply.logs } : {}) });
  } catch (err) {
    // SECURITY: replies are bounded in depth by construction (worker.ts); should one still not
    // serialize, its chain fails with an error instead of never settling until the watchdog kills
    // this process and every other tenant's chain in it.
    send({ t: "reply", id, ok: false, error: { message: `the sandbox reply could not be sent: ${err instanceof Error ? err.message : String(err)}` } });
  }
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
  if (process.connected && process.send) {
    process.send({ t: "reply", id, ok: true, value: null } satisfies FromHost, () => process.exit(0));
  } else {
    process.exit(0);
  }
}
