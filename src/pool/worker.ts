import { readFileSync } from "node:fs";
import type { Socket } from "node:net";
import { join } from "node:path";
import { BroadcastChannel, threadId, workerData } from "node:worker_threads";
import { runChain, type ChainDeps } from "../chain/execute.js";
import { createIntegrityChecker } from "../integrity/check.js";
import { capAuditDiff, diffForAudit } from "../audit/diff.js";
import { compileChainPlan, compilePlan, orderProfileHooks, vcpTypeOf } from "../chain/plan.js";
import { findProfile, registerProfile, VCP_PROFILE_ID } from "../profiles/index.js";
import type { HookType } from "../model/hook-type.js";
import type { EventProfile } from "../profiles/types.js";
import type { ActionInvoker, ChainPlan, ChainRequest, ChainResult, HookExecution, InvokeOutcome, InvokeRequest } from "../model/chain.js";
import { VcpError } from "../errors.js";
import { systemClock } from "../observe/events.js";
import { createIsolateHost } from "../sandbox-host/index.js";
import type { ResolvedHook } from "../model/hook.js";
import { recordedMs } from "../model/result.js";
import type { BundleCode, GuestLogLine } from "../sandbox-host/types.js";
import {
  ReplyKey,
  UNLOAD_CHANNEL,
  digestFileStem,
  toWireError,
  type BundleMeta,
  type ChainTask,
  type LoadMessage,
  type WirePlan,
  type WireReply,
  type WorkerConfig,
} from "./protocol.js";
import { FRAME_HEADER_BYTES, FrameKind, FrameReader, FrameWriter, frameTexts, frameTooLarge, openFrameChannel, type FrameHeader } from "./frames.js";
import { EventPacker, packChainValue } from "./events.js";
import { shouldStopBatch } from "./batch.js";
import { SlotWriter, currentTid, monotonicMs } from "./slots.js";

/**
 * Piscina worker entry (DESIGN §4.1): runs chains against this thread's IsolateHost (one isolate per
 * bundle revision, compiled once per worker). Chains arrive on the worker's own frame channel
 * (protocol.ts, worker-channels.ts) and are answered there; bundle loads arrive as piscina tasks from
 * the host's main thread. Loaded as JavaScript from `dist/`, in the sandbox host process started with
 * `--no-node-snapshot`.
 *
 * One chain or load at a time ({@link exclusive}): chains one after another, loads between them, so
 * the per-chain state below (current task id, quarantine set, log buffer) is never shared between two.
 */

const config = workerData as WorkerConfig;
// Embedder profiles (RuntimeOptions.profileModules): host code the embedder chose, loaded before any
// chain, so their chains find them in this thread's catalogue exactly as in the main process.
for (const url of config.profileModules ?? []) {
  const mod = (await import(url)) as { default?: EventProfile; profile?: EventProfile };
  const profile = mod.default ?? mod.profile;
  if (profile !== undefined) registerProfile(profile);
}
const MAX_LOG_LINES_PER_TASK = 1000;
const PLAN_CACHE_SIZE = 256;

const slot = new SlotWriter(config.slotDir, config.generation, threadId);
/** OS thread id (Linux): lets the supervisor tell a hook burning CPU past its budget from a wedged thread. */
const tid = currentTid();
const packer = new EventPacker();
let taskId = 0;
let quarantined: ReadonlySet<string> | null = null;
let logs: GuestLogLine[] = [];
/** Position of each hook in the running task's hook list: the hook's identity in the slot records. */
let positions: ReadonlyMap<ResolvedHook, number> = new Map();

const isolates = createIsolateHost({
  limits: config.limits,
  fetch: config.fetch,
  onLog: (line) => {
    if (logs.length < MAX_LOG_LINES_PER_TASK) logs.push(line);
  },
  codeSource: readBundle,
  onRunawayRun: (bundle) => {
    // A discarded run of this bundle ignores termination on a thread of isolated-vm's pool that nothing
    // can stop. Its hook was answered when its call ended; record the revision where the supervisor will
    // look (its crash attribution treats it as a participant, never blaming a bystander alone), then die.
    slot.runaway(bundle.digest);
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
    // SECURITY: the hook is named by its position in the list the supervisor sent, never by its name
    // (a session hook may share its name with another bundle's deployment hook). -1 (not in the list,
    // never expected) makes the supervisor treat a crash as ambiguous rather than guess.
    const position = positions.get(request.hook) ?? -1;
    // SECURITY: on disk before any guest code runs: crash attribution and the supervisor's watchdog
    // (a hook past budgetMs + grace gets the host killed) both read this record. One write per hook;
    // the task writes "C" when the chain starts and ends (slots.ts).
    slot.enter(taskId, position, request.hook.name, monotonicMs(), Math.ceil(request.budgetMs), tid);
    return isolates.invoke(request);
  },
};

/**
 * Compiled plans by supervisor plan key. A key names one hook list for the life of the supervisor
 * (protocol.ts), so predicates compile once per plan per worker, and the hooks cross the thread
 * boundary only for a worker that has not seen the key yet.
 */
const plans = new Map<number, CachedPlan>();

interface CachedPlan {
  /** The plan of a VCP chain or of an event profile's (chain/plan.ts compilePlan: one shape). */
  plan: ChainPlan;
  /** Hook object → its position in the hook list as sent (the plan keeps the objects). */
  positions: ReadonlyMap<ResolvedHook, number>;
  /** The hook list as sent: the reply's hook records are packed against it (events.ts packHookResults). */
  sent: readonly ResolvedHook[];
}

/** The cached plan of `key`, compiled from `planText()` (the plan's JSON, if this task carries it) on a miss. */
function planFor(key: number, planText: () => string | undefined): CachedPlan | undefined {
  let plan = plans.get(key);
  if (plan !== undefined) {
    // Least recently used goes first: re-insert on use.
    plans.delete(key);
    plans.set(key, plan);
    return plan;
  }
  const text = planText();
  if (text === undefined) return undefined;
  // The supervisor serialized this from the registry's validated hook list (protocol.ts).
  const { profile: ref, revision, hooks } = JSON.parse(text) as WirePlan;
  let compiled: ChainPlan;
  if (ref.id !== VCP_PROFILE_ID) {
    const profile = findProfile(ref.id);
    if (profile === undefined) throw new VcpError("UNKNOWN_PROFILE", `profile '${ref.id}' is not in the sandbox host's catalogue`, { profile: ref.id });
    // The supervisor sends the hooks in plan order already; ordering again is a no-op kept as a guard.
    compiled = compilePlan(profile, ref, orderProfileHooks(profile, hooks), revision);
  } else compiled = compileChainPlan(ref.event as HookType, hooks, revision);
  plan = { plan: compiled, positions: new Map(hooks.map((hook, i) => [hook, i])), sent: hooks };
  if (plans.size >= PLAN_CACHE_SIZE) plans.delete(plans.keys().next().value as number);
  plans.set(key, plan);
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

// SECURITY: every modified constitution passes the integrity checker before the next hook sees it
// (DESIGN §4.5); it runs here, beside the executor, so no modification can skip it.
const chainDeps: ChainDeps = {
  invoker,
  clock: systemClock,
  emit: packer.emit,
  // hook.fired / hook.completed are rebuilt by the supervisor from the records: only the summaries cross.
  firedSummary: packer.fired,
  checkConstitution: createIntegrityChecker(config.integrity),
  // SECURITY: a patch can be many times the result that caused it; capped before it leaves the worker.
  ...(config.auditDiffs ? { diff: (before: unknown, after: unknown) => capAuditDiff(diffForAudit(before, after)) } : {}),
  // SECURITY: every guest-derived value in a reply (result fields, chain state, log fields) is bounded
  // in depth here or in the isolate, so the reply always survives the structured clone to the host.
  limits: {
    jsonDepth: config.limits.jsonDepth,
    annotationBytesPerHook: config.limits.annotationBytesPerHook,
    annotationBytesPerChain: config.limits.annotationBytesPerChain,
  },
};

/** An agent-profile chain's deps: the same executor, no lifecycle events (its answer is its report). */
const { emit: _vcpEvents, ...profileChainDeps } = chainDeps;

/** Answer of a chain whose plan key this worker has not compiled and whose frame carried no plan: nothing ran. */
const PLAN_MISS = Symbol("plan miss");

/** One chain: its reply, or PLAN_MISS. */
async function runChainTask(task: ChainTask): Promise<WireReply | typeof PLAN_MISS> {
  const cached = planFor(task.key, () => task.plan);
  // Nothing ran: the supervisor sends the chain again with the hook list attached.
  if (cached === undefined) return PLAN_MISS;
  taskId = task.id;
  positions = cached.positions;
  quarantined = task.q !== undefined ? new Set(JSON.parse(task.q) as string[]) : null;
  packer.reset();
  // SECURITY: this task's chain code (predicates before the first hook) is now running; the record of
  // the worker's previous task must not stand in for it when the host dies here.
  slot.chainCode(taskId);
  let request: ChainRequest | undefined;
  try {
    // SECURITY: the runtime bounded this input's depth and size before it was serialized (json-bounds.ts).
    request = parseRequest(task.rq);
    if (task.inv !== undefined) return await invokeTask(cached, request, task.inv);
    // Agent chains report through their result: no lifecycle events are built for them.
    const result = await runChain(cached.plan, request, vcpTypeOf(cached.plan) !== undefined ? chainDeps : profileChainDeps);
    return { ok: true, value: packChainValue(result, request, packer, cached.sent) };
  } finally {
    // SECURITY: a sessionless chain's per-session guest state ends with it (PROFILES §8.3): no later
    // chain, of this principal or another, can reach it.
    if (request?.sessionScope === "chain") isolates.releaseSession(request.sessionKey ?? request.session.id);
    slot.chainCode(taskId);
  }
}

/** The supervisor wrote this JSON; text that does not parse is a corrupt frame, not a bad input. */
function parseRequest(text: string): ChainRequest {
  try {
    return JSON.parse(text) as ChainRequest;
  } catch (err) {
    throw new VcpError("SANDBOX_PROTOCOL_ERROR", `corrupt chain frame: the request does not parse (${(err as Error).message})`);
  }
}

/**
 * A one-action task (protocol.ts `inv`): the plan's only hook, invoked as the executor would, answered
 * as a one-hook chain result (what the supervisor's accounting reads: outcome, duration) plus the raw
 * outcome the main-process executor decodes. Nothing else of a chain runs here.
 */
async function invokeTask(cached: CachedPlan, request: ChainRequest, inv: string): Promise<WireReply> {
  const newline = inv.indexOf("\n");
  const budgetMs = Number(inv.slice(0, newline));
  if (newline < 0 || !(budgetMs >= 0)) throw new VcpError("SANDBOX_PROTOCOL_ERROR", "corrupt chain frame: an invoke section without a budget");
  const inputJson = inv.slice(newline + 1);
  const hook = cached.plan.hooks[0]?.hook;
  if (hook === undefined || cached.plan.hooks.length !== 1) throw new VcpError("INVALID_INPUT", "a one-action task names exactly one hook", { hooks: cached.plan.hooks.length });
  const started = systemClock.now();
  const invoked = await invoker.invoke({ hook, chainId: request.chainId, sessionId: request.sessionKey ?? request.session.id, inputJson, budgetMs, native: true });
  const duration = recordedMs(systemClock.now() - started);
  const outcome = invoked.kind === "timeout" ? "timeout" : invoked.kind === "crashed" ? "crashed" : invoked.kind === "threw" ? "error" : invoked.kind === "invalid" ? "invalid_result" : "ok";
  const execution: HookExecution = { hook: hook.name, bundle: hook.action.bundle, scope: hook.scope, trust: hook.trust, status: "continue", outcome, duration_ms: duration };
  if (hook.action.digest !== undefined) execution.bundle_digest = hook.action.digest;
  if ("cpuMs" in invoked && invoked.cpuMs !== undefined) execution.cpu_ms = invoked.cpuMs;
  const result: ChainResult = {
    chain_id: request.chainId, status: "completed", reason: null, aborted_by: null,
    context: request.context, constitution: request.constitution, cascade_failure: false, hook_results: [execution], duration_ms: duration,
  };
  return { ok: true, value: { ...packChainValue(result, request, packer, cached.sent), invoked } };
}

async function loadTask(message: LoadMessage): Promise<WireReply> {
  const bundle = readBundle(message.digest);
  if (bundle === undefined) {
    throw new VcpError("INVALID_BUNDLE", `bundle ${message.digest} is missing from the code directory`, {
      digest: message.digest,
    });
  }
  // Top-level bundle code runs here: a crash now is not the fault of a hook running elsewhere.
  slot.loading(message.id, monotonicMs());
  try {
    const loaded = await isolates.load(bundle);
    return { ok: true, value: { exports: loaded.exports } };
  } finally {
    slot.chainCode(message.id);
  }
}

/**
 * The reply as JSON text, one serialization of the whole reply (the chain value inline, not a JSON
 * string inside JSON); the host writes it out behind a frame header without reading it.
 */
function replyText(reply: WireReply): string {
  let text: string;
  try {
    // SECURITY: every guest-derived value in the reply is depth-bounded (chainDeps.limits, the isolate),
    // so this serializes; if it still threw, the chain is answered with that error.
    text = JSON.stringify(reply);
  } catch (err) {
    return JSON.stringify({ ok: false, error: toWireError(new Error(`the sandbox reply could not be serialized: ${(err as Error).message}`)) } satisfies WireReply);
  }
  const bytes = FRAME_HEADER_BYTES + Buffer.byteLength(text, "utf8");
  if (bytes > config.frameBytes) {
    // SECURITY: refused here, before the host allocates or writes anything for it. The chain gets the
    // coded error naming the limit; the guest's logs of this task go with the reply.
    return JSON.stringify({ ok: false, error: toWireError(frameTooLarge(bytes, config.frameBytes, "sandbox reply")) } satisfies WireReply);
  }
  return text;
}

/**
 * Runs `work` once every chain or load before it has ended. Chains and loads reach this thread on two
 * paths (the channel, piscina), and their per-task state must never overlap.
 */
let turn: Promise<unknown> = Promise.resolve();
function exclusive<T>(work: () => Promise<T>): Promise<T> {
  // SECURITY: one chain or load at a time on this thread: settle() resets the per-task state the one before used.
  const run = turn.then(work, work);
  turn = run.catch(() => undefined);
  return run;
}

/** The piscina task function: a load (its reply as JSON text, errors included so their `code` survives) or a ping. */
export default async function task(message: LoadMessage | { t: "ping" }): Promise<unknown> {
  if (message.t === "ping") return { ok: true, value: threadId } satisfies WireReply;
  return exclusive(() => settle(() => loadTask(message)));
}

/** One chain or load: its reply as JSON text with this task's guest logs, or PLAN_MISS. */
async function settle(run: () => Promise<WireReply | typeof PLAN_MISS>): Promise<string | typeof PLAN_MISS> {
  // SECURITY: per-task state starts empty for every chain, batched or not: no chain sees another's
  // logs or quarantine set.
  logs = [];
  quarantined = null;
  try {
    const reply = await run();
    if (reply === PLAN_MISS) return PLAN_MISS;
    if (logs.length > 0) reply.logs = logs;
    return replyText(reply);
  } catch (err) {
    const reply: WireReply = { ok: false, error: toWireError(err) };
    if (logs.length > 0) reply.logs = logs;
    return replyText(reply);
  } finally {
    quarantined = null;
  }
}

// ── the worker's channel ─────────────────────────────────────────────────────────────────────────

const CHAINS: ReadonlySet<FrameKind> = new Set([FrameKind.chain]);

/**
 * This worker's channel: the first one no other worker claimed (host-main.ts gives every worker the
 * list). A worker piscina starts in place of one that died finds its channel taken and serves loads
 * only; the supervisor sees the dead worker's channel close and restarts the host.
 */
function claimChannel(): number | undefined {
  const claims = new Int32Array(config.channelClaims);
  for (let i = 0; i < config.channelFds.length; i++) {
    if (Atomics.compareExchange(claims, i, 0, 1) === 0) return config.channelFds[i];
  }
  return undefined;
}

/** Chains read from the channel and not started yet, in arrival order. */
const inbox: ChainTask[] = [];
let draining = false;
let channel: FrameWriter | undefined;

function openChannel(fd: number): void {
  let socket: Socket | undefined = undefined;
  const reader = new FrameReader(config.frameBytes, CHAINS, onChainFrame, () => {
    // SECURITY: a corrupt stream cannot be resynchronized. Closing the channel tells the supervisor,
    // which kills the host (its chains in flight are answered through the crash path).
    socket?.destroy();
  });
  socket = openFrameChannel(fd, reader);
  // The supervisor closed its end (it is gone) or the host is ending: nothing more to answer.
  socket.on("error", () => socket?.destroy());
  channel = new FrameWriter(socket);
}

function onChainFrame(frame: Uint8Array, header: FrameHeader): void {
  const texts = frameTexts(frame, header);
  const chain: ChainTask = { id: header.id, key: header.key, rq: texts.payload };
  if (texts.plan !== undefined) chain.plan = texts.plan;
  if (texts.quarantine !== undefined) chain.q = texts.quarantine;
  if (texts.invoke !== undefined) chain.inv = texts.invoke;
  inbox.push(chain);
  if (!draining) {
    draining = true;
    void exclusive(drain);
  }
}

/**
 * The chains in the inbox one after another, each exactly as a task of its own (`settle`: own logs, own
 * quarantine set, own reply; runChainTask: own task id in the slot records). Once they have run long
 * enough or their replies are large enough (batch.ts shouldStopBatch), the rest are answered "not
 * started": the supervisor gives them to whichever worker frees up first.
 */
async function drain(): Promise<void> {
  const started = performance.now();
  let replyChars = 0;
  let stopped = false;
  try {
    for (let chain = inbox.shift(); chain !== undefined; chain = inbox.shift()) {
      if (stopped) {
        answer(chain.id, ReplyKey.notStarted, "");
        continue;
      }
      const reply = await settle(() => runChainTask(chain));
      if (reply === PLAN_MISS) answer(chain.id, ReplyKey.planMiss, "");
      else {
        answer(chain.id, ReplyKey.answer, reply);
        replyChars += reply.length;
      }
      stopped = inbox.length > 0 && shouldStopBatch(performance.now() - started, replyChars);
    }
  } finally {
    draining = false;
  }
}

function answer(id: number, key: ReplyKey, payload: string): void {
  try {
    channel?.write(FrameKind.reply, id, key, { payload }, config.frameBytes, "sandbox reply");
  } catch (err) {
    // replyText checked the size against the frame limit already; should the frame still not fit, the
    // chain gets the coded error instead of no answer.
    channel?.write(FrameKind.reply, id, ReplyKey.answer, { payload: JSON.stringify({ ok: false, error: toWireError(err) } satisfies WireReply) }, config.frameBytes, "sandbox reply");
  }
}

const channelFd = claimChannel();
if (channelFd !== undefined) openChannel(channelFd);
