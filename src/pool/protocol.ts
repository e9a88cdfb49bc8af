import type { IntegrityOptions } from "../integrity/check.js";
import type { ChainResult, HookExecution, InvokeOutcome } from "../model/chain.js";
import type { ErrorCode } from "../errors.js";
import { VcpError } from "../errors.js";
import type { ProfilePlanRef } from "../chain/plan.js";
import type { ResolvedHook } from "../model/hook.js";
import type { InputSummary, LifecycleEvent } from "../observe/events.js";
import type { FetchPolicy, GuestLogLine, SandboxLimits } from "../sandbox-host/types.js";

/**
 * Wire shapes between the three layers of the sandbox (DESIGN §4.1):
 *
 * ```
 *  supervisor (main process)            sandbox host process                 piscina worker i
 *  ─────────────────────────            ────────────────────                 ────────────────
 *  IPC {t:"init", config}         ───▶  new Piscina(...)                ───▶ claims channel i (fd 5 + i)
 *                                 ◀───  IPC {t:"ready"}
 *  worker channel i: frame chain(id, k, plan?, q?, rq) ───────────────────▶ plans[k] ?? plan ?? miss;
 *                                                                            parse rq; runChain
 *                                 ◀─────────────────────── frame reply(id, ReplyKey, reply JSON text)
 *  frame call {t:"load", id, digest} ─▶ pool.run                          ───▶ IsolateHost.load(codeDir file)
 *  frame call {t:"unload", id, digest} ▶ BroadcastChannel to every worker
 *  frame call {t:"close", id}     ───▶  pool.close() (graceful), reply, exit 0
 * ```
 *
 * Chains travel on a frame channel per worker thread (a socketpair each, the host's fd 5, 6, …;
 * worker-channels.ts): the supervisor writes a chain's frame straight to the worker that runs it and
 * reads its reply from there, so a chain crosses one thread boundary each way, not two (the host's main
 * thread is not on its path). Calls (loads, unloads, close) travel on the host's own frame channel, fd 4,
 * to its main thread, which hands loads to the pool. Node's IPC channel carries only `init` and `ready`
 * and tells the host when the supervisor is gone. Frame bodies are JSON made once at the sending end
 * and parsed once at the receiving end: the request is serialized in the main process and parsed in the
 * worker, the reply serialized in the worker and parsed in the main process. Errors cross as
 * `VcpError.toJSON()` and are rebuilt on arrival. Bundle code never travels in a frame; workers read it
 * from the content-addressed code directory.
 *
 * SECURITY: every JSON parse below recurses once per nesting level. Nothing crosses deeper than the
 * depth bound (model/json-bounds.ts, `limits.json_depth` ≤ 256) plus these envelopes: requests are
 * bounded by the runtime before `runChain`; in a reply, hook results and chain state are bounded
 * inside the isolate and again in the worker (model/result-json.ts, chain/execute.ts), log fields in
 * capabilities.ts, and audit diffs are capped (audit/diff.ts). Sizes are bounded by the frame limit
 * (`frameBytes`) on both sides: the sender refuses to build a larger frame (the chain fails with
 * SANDBOX_FRAME_TOO_LARGE), the receiver refuses a larger length before buffering it (protocol error).
 *
 * Neither direction repeats what the receiver has:
 * - the hook list of a plan crosses once per (plan key, worker channel, host generation); later chains
 *   name the key (a worker that evicted it answers PLAN_MISS and gets it again);
 * - the reply omits `context`/`constitution` when no hook replaced them, and the per-hook
 *   `hook.fired`/`hook.completed` events, which the supervisor rebuilds from `hook_results` (events.ts).
 */

/** Everything the host process needs; sent once in `init`. */
export interface HostConfig {
  threads: number;
  maxQueue: number;
  limits: SandboxLimits;
  fetch: FetchPolicy;
  /** Content-addressed bundle files: `<stem>.js` (code) and `<stem>.json` (name, trust, limits). */
  codeDir: string;
  /** Crash-attribution slot files, one per worker thread (see slots.ts). */
  slotDir: string;
  /** Host generation; slot file names carry it so a restarted host never mixes with a dead one. */
  generation: number;
  /** Constitution integrity checker settings (DESIGN §4.5); plain data, the worker builds the checker. */
  integrity: IntegrityOptions;
  /** Compute RFC 6902 diffs of modifications for the audit log. */
  auditDiffs: boolean;
  /** Module URLs of embedder event profiles each worker imports and registers at start (RuntimeOptions.profileModules). */
  profileModules?: string[];
  /** Largest frame either side may send or accept, bytes (frames.ts). */
  frameBytes: number;
  /**
   * The host's fds of the worker channels, one per thread (fd 5, 6, …): worker i claims entry i at
   * start (worker-channels.ts). Empty: no channels (a host forked without them runs no chains).
   */
  channelFds: number[];
}

/** A host's configuration before its fork gives it its channels (host-process.ts forkHost). */
export type HostStartConfig = Omit<HostConfig, "channelFds">;

/** What the host's main thread adds to the HostConfig it gives its workers. */
export interface WorkerConfig extends HostConfig {
  /** Int32 per channel, 1 once a worker claimed it (Atomics): a respawned worker finds its channel taken. */
  channelClaims: SharedArrayBuffer;
}

/** The plan as it travels: the worker compiles it (cached per revision) with compileChainPlan. */
export interface WirePlan {
  /** Which profile and event the worker runs the hooks as (VCP: `vcp` and the hook type; chain/plan.ts). */
  profile: ProfilePlanRef;
  revision: number;
  hooks: readonly ResolvedHook[];
}

/**
 * One chain as the worker decodes it from its frame: the text sections, parsed only where it needs them.
 */
export interface ChainTask {
  /** Supervisor task id: names the chain in crash-attribution slots and its reply frame. */
  id: number;
  /** Plan key: names one hook list for the life of the supervisor (never reused). */
  key: number;
  /** The ChainRequest as JSON text, serialized once in the main process; the worker parses it once. */
  rq: string;
  /** Quarantined digests of this plan as a JSON array; their hooks are answered `crashed` without running. */
  q?: string;
  /** The hook list (WirePlan JSON) of `key`, when the frame carries it. */
  plan?: string;
  /**
   * A one-action task (a chain with exec hooks runs its executor in the main process, PROFILES §6), as
   * the frame's invoke section: `<budgetMs>\n<inputJson>` (no JSON around the hook input, so it is not
   * escaped). The worker invokes the plan's only hook on the input (native) within the budget and
   * answers a one-hook result plus the raw outcome (`WireChainValue.invoked`) instead of running a chain.
   */
  inv?: string;
}

/**
 * What a reply frame on a worker channel answers, in its header's `key` field (frames.ts). Only
 * `answer` carries a payload; the others ran no code and wrote no slot record, so the chain goes again.
 */
export const ReplyKey = {
  /** The chain's WireReply as JSON text (the worker checked its size). */
  answer: 0,
  /** The worker has not compiled the chain's plan key and the frame carried no plan: nothing ran. */
  planMiss: 1,
  /** The worker stopped its batch before this chain (worker-channels.ts shouldStopBatch): not started. */
  notStarted: 2,
} as const;
export type ReplyKey = (typeof ReplyKey)[keyof typeof ReplyKey];

export interface LoadMessage {
  t: "load";
  id: number;
  digest: string;
}

/** Messages to the host in the payload of a `call` frame (rare: bundle loads, unloads, close). */
export type CallMessage = LoadMessage | { t: "unload"; id: number; digest: string } | { t: "close"; id: number };

/** On the IPC channel. */
export type ToHost = { t: "init"; config: HostConfig };
export type FromHost = { t: "ready"; pid: number };

/**
 * The payload of a reply frame; the frame's header carries the task id. For a chain, `value` is the
 * WireChainValue (serialized by the worker in one pass, parsed by the supervisor in one).
 */
export type WireReply =
  | { ok: true; value?: unknown; logs?: GuestLogLine[] }
  | { ok: false; error: WireError; logs?: GuestLogLine[] };

/** A chain result plus all of its lifecycle events, in emission order (what the runtime consumes). */
export interface ChainValue {
  result: ChainResult;
  events: LifecycleEvent[];
}

/**
 * A hook record on the wire. Most of a record names its hook — name, bundle, scope, trust, revision —
 * which the supervisor has in the hook list it sent, so a record is sent as
 * `[position in that list, status, outcome, duration_ms, the other members in their order?]`, and
 * whole only when it does not name the hook at that position in the usual member order (never for
 * the executor's records; a guard, not a second format to maintain).
 */
export type WireHookRecord = HookExecution | [number, HookExecution["status"], HookExecution["outcome"], number, Partial<HookExecution>?];

/**
 * A chain result as it crosses back (see events.ts for the rebuild):
 * - `result.context` / `result.constitution` are absent when they are the request's own;
 * - `events` holds every event except `hook.fired` and `hook.completed`;
 * - `sums` holds the `input_summary` of each executed hook in order, `0` meaning "same as the previous".
 */
export interface WireChainValue {
  /** The result without the unchanged context and constitution, its hook records packed (events.ts WireHookRecord). */
  result: Omit<ChainResult, "context" | "constitution" | "hook_results"> & Partial<Pick<ChainResult, "context" | "constitution">> & { hook_results: WireHookRecord[] };
  events: LifecycleEvent[];
  sums: (InputSummary | 0)[];
  /** One-action tasks (`ChainMessage.inv`): what the action did, for the main-process executor. */
  invoked?: InvokeOutcome;
}

/** A VcpError as JSON; `code` is absent for an unexpected (non-Vcp) error. */
export interface WireError {
  code?: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

export function toWireError(err: unknown): WireError {
  if (err instanceof VcpError) return err.toJSON() as WireError;
  return { message: err instanceof Error ? err.message : String(err) };
}

export function fromWireError(wire: WireError): Error {
  return wire.code !== undefined
    ? VcpError.fromJSON({ code: wire.code, message: wire.message, details: wire.details })
    : new Error(wire.message);
}

/** Bundle metadata stored next to its code, so a worker can rebuild a BundleCode on a cache miss. */
export interface BundleMeta {
  name: string;
  digest: string;
  trust: "system" | "deployment" | "session";
  memoryMb?: number;
  isolation?: "shared" | "per_session";
}

/** BroadcastChannel name the host uses to tell every worker to drop a bundle revision. */
export const UNLOAD_CHANNEL = "vcp-pool-unload";

const FILE_STEM = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * File stem of a digest inside the code directory: `sha256:<hex>` → `<hex>`. Anything else that is
 * not a plain token is refused.
 */
export function digestFileStem(digest: string): string | undefined {
  const stem = digest.startsWith("sha256:") ? digest.slice(7) : digest;
  // SECURITY: the stem becomes a file name; only [A-Za-z0-9_-] can never leave the code directory.
  return FILE_STEM.test(stem) ? stem : undefined;
}
