import type { IntegrityOptions } from "../integrity/check.js";
import type { ChainResult, InvokeOutcome } from "../chain/types.js";
import type { ErrorCode } from "../errors.js";
import { VcpError } from "../errors.js";
import type { ProfilePlanRef } from "../chain/plan.js";
import type { HookType } from "../model/hook-type.js";
import type { ResolvedHook } from "../model/hook.js";
import type { InputSummary, LifecycleEvent } from "../observe/events.js";
import type { FetchPolicy, GuestLogLine, SandboxLimits } from "../sandbox-host/types.js";

/**
 * Wire shapes between the three layers of the sandbox (DESIGN §4.1):
 *
 * ```
 *  supervisor (main process)          sandbox host process               piscina worker
 *  ─────────────────────────          ────────────────────               ──────────────
 *  {t:"init", config}           ───▶  new Piscina(...)
 *                               ◀───  {t:"ready"}
 *  {t:"chain", id, k, plan?, …} ───▶  plans[k] ??= plan; pool.run  ───▶  plans[k] ?? miss → runChain
 *                               ◀───  {t:"reply", id, ok, value|error, logs?}   (on a worker miss the host
 *                                                                 runs the task again with the plan attached)
 *  {t:"forget", keys}           ───▶  drop plans the supervisor evicted
 *  {t:"load", id, digest}       ───▶  pool.run(msg)                ───▶  IsolateHost.load(codeDir file)
 *  {t:"unload", id, digest}     ───▶  BroadcastChannel to every worker
 *  {t:"close", id}              ───▶  pool.close() (graceful), reply, exit 0
 * ```
 *
 * IPC uses `serialization: "json"` (≈30 µs round trip against ≈120 µs for "advanced", DESIGN §4.1),
 * so every message is plain JSON: errors cross as `VcpError.toJSON()` and are rebuilt on arrival.
 * Bundle code never travels in a message; workers read it from the content-addressed code directory.
 *
 * SECURITY: every copy below (IPC JSON both ways, structured clone host ⇄ worker) recurses once per
 * nesting level, on stacks of different sizes. Nothing crosses deeper than the depth bound
 * (model/json-bounds.ts, `limits.json_depth` ≤ 256) plus these envelopes: requests are bounded by the
 * runtime before `runChain`; in a reply, hook results and chain state are bounded inside the isolate
 * and again in the worker (chain/result.ts, chain/execute.ts), log fields in capabilities.ts, and
 * audit diffs are capped (audit/diff.ts). A structured clone that failed on the receiving side would
 * drop the reply silently (the task never settles and the watchdog kills the host), which is why the
 * bound is enforced before a value is accepted, not when it is sent. A send that throws anyway fails
 * that one chain (supervisor.ts dispatch, host-main.ts sendReply).
 *
 * Copying is the cost of a chain (DESIGN §4.1). The payloads of a chain cross as JSON text made once
 * at each end (`rq` in, `json` out): the host's main thread only relays strings, where it would
 * otherwise parse, structured-clone and re-serialize both object trees (measured with
 * bench/profile-chain.ts: about half of that thread's time per chain). Neither direction repeats what
 * the receiver has:
 * - the hook list of a plan crosses once per (plan key, host generation); later chains name the key;
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
}

/** The plan as it travels: the worker compiles it (cached per revision) with compileChainPlan. */
export interface WirePlan {
  type: HookType;
  revision: number;
  hooks: readonly ResolvedHook[];
  /** Event-profile chains: which profile and event the worker runs the hooks as (chain/plan.ts). */
  profile?: ProfilePlanRef;
}

export interface ChainMessage {
  t: "chain";
  /** Supervisor task id: matches the reply and names the chain in crash-attribution slots. */
  id: number;
  /** Plan key: names one hook list for the life of the supervisor (never reused). */
  k: number;
  /** The hook list, present the first time key `k` goes to this host (or, host → worker, to a worker that missed it). */
  plan?: WirePlan;
  /**
   * The ChainRequest as JSON text, serialized once in the main process. The host forwards it as one
   * string (nothing to parse into objects, and a string crosses to the worker as a copy of its bytes
   * rather than a structured clone of a tree); the worker parses it once.
   */
  rq: string;
  /** Digests of this plan that are quarantined; their hooks are answered `crashed` without running. */
  q?: string[];
  /**
   * A one-action task (a chain with exec hooks runs its executor in the main process, PROFILES §6):
   * the worker invokes the plan's only hook on `inputJson` (native) within `budgetMs` and answers a
   * one-hook result plus the raw outcome (`WireChainValue.invoked`) instead of running a chain.
   */
  inv?: { inputJson: string; budgetMs: number };
}

export interface LoadMessage {
  t: "load";
  id: number;
  digest: string;
}

export type ToHost =
  | { t: "init"; config: HostConfig }
  | ChainMessage
  | LoadMessage
  | { t: "unload"; id: number; digest: string }
  | { t: "forget"; keys: number[] }
  | { t: "close"; id: number };

export type FromHost =
  | { t: "ready"; pid: number }
  /** `json`: a chain reply, the WireChainValue as JSON text (the worker serialized it); `value`: anything else. */
  | { t: "reply"; id: number; ok: true; value?: unknown; json?: string; logs?: GuestLogLine[] }
  | { t: "reply"; id: number; ok: false; error: WireError; logs?: GuestLogLine[] };

/**
 * What a piscina task returns; errors are values, because structured clone drops `code`. `miss`: the
 * worker does not have the plan of key `k` (nothing ran); the host runs the task again with the plan.
 */
export type WorkerReply =
  | { ok: true; value?: unknown; json?: string; logs?: GuestLogLine[] }
  | { ok: false; error: WireError; logs?: GuestLogLine[]; miss?: true };

/** A chain result plus all of its lifecycle events, in emission order (what the runtime consumes). */
export interface ChainValue {
  result: ChainResult;
  events: LifecycleEvent[];
}

/**
 * A chain result as it crosses back (see events.ts for the rebuild):
 * - `result.context` / `result.constitution` are absent when they are the request's own;
 * - `events` holds every event except `hook.fired` and `hook.completed`;
 * - `sums` holds the `input_summary` of each executed hook in order, `0` meaning "same as the previous".
 */
export interface WireChainValue {
  result: Omit<ChainResult, "context" | "constitution"> & Partial<Pick<ChainResult, "context" | "constitution">>;
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
