import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BroadcastChannel, threadId, workerData } from "node:worker_threads";
import { runChain } from "../chain/execute.js";
import { compileChainPlan } from "../chain/plan.js";
import type { ActionInvoker, ChainPlan, InvokeOutcome, InvokeRequest } from "../chain/types.js";
import { VcpError } from "../errors.js";
import { systemClock, type LifecycleEvent } from "../observe/events.js";
import { createIsolateHost } from "../sandbox-host/index.js";
import type { BundleCode, GuestLogLine } from "../sandbox-host/types.js";
import {
  UNLOAD_CHANNEL,
  digestFileStem,
  toWireError,
  type BundleMeta,
  type ChainMessage,
  type HostConfig,
  type LoadMessage,
  type WorkerReply,
} from "./protocol.js";
import { SlotWriter } from "./slots.js";

/**
 * Piscina worker entry (DESIGN §4.1): one task runs one whole chain against this thread's
 * IsolateHost (one isolate per bundle revision, compiled once per worker). Loaded as JavaScript from
 * `dist/`, in the sandbox host process started with `--no-node-snapshot`.
 *
 * Piscina runs one task per worker at a time (`concurrentTasksPerWorker` 1), so the per-task state
 * below (current task id, quarantine set, log buffer) is never shared between two chains.
 */

const config = workerData as HostConfig;
const MAX_LOG_LINES_PER_TASK = 1000;
const PLAN_CACHE_SIZE = 256;

const slot = new SlotWriter(config.slotDir, config.generation, threadId);
let taskId = 0;
let quarantined: ReadonlySet<string> | null = null;
let logs: GuestLogLine[] = [];
let currentHook: string | undefined;

const isolates = createIsolateHost({
  limits: config.limits,
  fetch: config.fetch,
  onLog: (line) => {
    if (logs.length < MAX_LOG_LINES_PER_TASK) logs.push(line);
  },
  codeSource: readBundle,
  onCatastrophicError: () => {
    // isolated-vm says the process is unrecoverable. Record the culprit where the supervisor will look
    // for it, then die at once: finishing other chains in a broken V8 is not worth the risk.
    if (currentHook !== undefined) slot.write(taskId, "X", currentHook);
    process.kill(process.pid, "SIGKILL");
  },
});

// Unloads reach every worker, not just the one piscina picks; the channel must not keep a thread alive.
const unloads = new BroadcastChannel(UNLOAD_CHANNEL);
unloads.onmessage = (event) => {
  const digest = (event as MessageEvent).data;
  if (typeof digest === "string") isolates.unload(digest);
};
unloads.unref();

/** The worker's invoker: quarantine gate, crash-attribution slot, then the isolate. */
const invoker: ActionInvoker = {
  async invoke(request: InvokeRequest): Promise<InvokeOutcome> {
    const digest = request.hook.action.digest;
    if (quarantined !== null && digest !== undefined && quarantined.has(digest)) {
      // Fail-open but visible: the chain records `crashed` / "bundle quarantined" (or aborts when the
      // hook is fail_closed) and never runs code that already killed the sandbox once.
      return { kind: "crashed", message: "bundle quarantined: it was running when the sandbox host died" };
    }
    currentHook = request.hook.name;
    slot.write(taskId, "I", currentHook);
    try {
      return await isolates.invoke(request);
    } finally {
      currentHook = undefined;
      slot.write(taskId, "C");
    }
  },
};

/**
 * Compiled plans keyed by `revision:type:seq@digest,…`. `seq` is unique across a registry, so together
 * with the revision the key names exactly one hook list; predicates compile once per revision per
 * worker instead of once per chain (the hooks themselves arrive as fresh copies with every task).
 */
const plans = new Map<string, ChainPlan>();

function planFor(message: ChainMessage): ChainPlan {
  const { type, revision, hooks } = message.plan;
  let key = `${revision}:${type}:`;
  // The digest is part of the key: a hook without one is pinned by the supervisor to the latest load.
  for (const hook of hooks) key += `${hook.seq}@${hook.action.digest},`;
  let plan = plans.get(key);
  if (plan === undefined) {
    plan = compileChainPlan(type, hooks, revision);
    if (plans.size >= PLAN_CACHE_SIZE) plans.delete(plans.keys().next().value as string);
    plans.set(key, plan);
  }
  return plan;
}

function readBundle(digest: string): BundleCode | undefined {
  const stem = digestFileStem(digest);
  if (stem === undefined) return undefined;
  try {
    const meta = JSON.parse(readFileSync(join(config.codeDir, `${stem}.json`), "utf8")) as BundleMeta;
    const code = readFileSync(join(config.codeDir, `${stem}.js`), "utf8");
    if (meta.digest !== digest) return undefined;
    return {
      name: meta.name,
      digest: meta.digest,
      code,
      trust: meta.trust,
      ...(meta.memoryMb !== undefined ? { memoryMb: meta.memoryMb } : {}),
      ...(meta.isolation !== undefined ? { isolation: meta.isolation } : {}),
    };
  } catch {
    return undefined;
  }
}

async function runChainTask(message: ChainMessage): Promise<WorkerReply> {
  const events: LifecycleEvent[] = [];
  taskId = message.id;
  quarantined = message.q !== undefined && message.q.length > 0 ? new Set(message.q) : null;
  const result = await runChain(planFor(message), message.request, {
    invoker,
    clock: systemClock,
    emit: (event) => events.push(event),
  });
  return { ok: true, value: { result, events } };
}

async function loadTask(message: LoadMessage): Promise<WorkerReply> {
  const bundle = readBundle(message.digest);
  if (bundle === undefined) {
    throw new VcpError("INVALID_BUNDLE", `bundle ${message.digest} is missing from the code directory`, {
      digest: message.digest,
    });
  }
  // Top-level bundle code runs here: a crash now is not the fault of a hook running elsewhere.
  slot.write(message.id, "L");
  try {
    const loaded = await isolates.load(bundle);
    return { ok: true, value: { exports: loaded.exports } };
  } finally {
    slot.write(message.id, "C");
  }
}

/** The piscina task function. Errors are returned as data: structured clone would drop `code`. */
export default async function task(message: ChainMessage | LoadMessage | { t: "ping" }): Promise<WorkerReply> {
  if (message.t === "ping") return { ok: true, value: threadId };
  logs = [];
  try {
    const reply = message.t === "chain" ? await runChainTask(message) : await loadTask(message);
    if (logs.length > 0) reply.logs = logs;
    return reply;
  } catch (err) {
    const reply: WorkerReply = { ok: false, error: toWireError(err) };
    if (logs.length > 0) reply.logs = logs;
    return reply;
  } finally {
    quarantined = null;
  }
}
