import type { ChainRequest, ChainResult } from "../chain/types.js";
import type { ErrorCode } from "../errors.js";
import { VcpError } from "../errors.js";
import type { HookType } from "../model/hook-type.js";
import type { ResolvedHook } from "../model/hook.js";
import type { LifecycleEvent } from "../observe/events.js";
import type { FetchPolicy, GuestLogLine, SandboxLimits } from "../sandbox-host/types.js";

/**
 * Wire shapes between the three layers of the sandbox (DESIGN §4.1):
 *
 * ```
 *  supervisor (main process)          sandbox host process               piscina worker
 *  ─────────────────────────          ────────────────────               ──────────────
 *  {t:"init", config}           ───▶  new Piscina(...)
 *                               ◀───  {t:"ready"}
 *  {t:"chain", id, plan, …}     ───▶  pool.run(msg)                ───▶  runChain → {ok, value, logs}
 *                               ◀───  {t:"reply", id, ok, value|error, logs?}
 *  {t:"load", id, digest}       ───▶  pool.run(msg)                ───▶  IsolateHost.load(codeDir file)
 *  {t:"unload", id, digest}     ───▶  BroadcastChannel to every worker
 *  {t:"close", id}              ───▶  pool.close() (graceful), reply, exit 0
 * ```
 *
 * IPC uses `serialization: "json"` (≈30 µs round trip against ≈120 µs for "advanced", DESIGN §4.1),
 * so every message is plain JSON: errors cross as `VcpError.toJSON()` and are rebuilt on arrival.
 * Bundle code never travels in a message; workers read it from the content-addressed code directory.
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
}

/** The plan as it travels: the worker compiles it (cached per revision) with compileChainPlan. */
export interface WirePlan {
  type: HookType;
  revision: number;
  hooks: readonly ResolvedHook[];
}

export interface ChainMessage {
  t: "chain";
  /** Supervisor task id: matches the reply and names the chain in crash-attribution slots. */
  id: number;
  plan: WirePlan;
  request: ChainRequest;
  /** Digests of this plan that are quarantined; their hooks are answered `crashed` without running. */
  q?: string[];
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
  | { t: "close"; id: number };

export type FromHost =
  | { t: "ready"; pid: number }
  | { t: "reply"; id: number; ok: true; value: unknown; logs?: GuestLogLine[] }
  | { t: "reply"; id: number; ok: false; error: WireError; logs?: GuestLogLine[] };

/** What a piscina task returns; errors are values, because structured clone drops `code`. */
export type WorkerReply =
  | { ok: true; value: unknown; logs?: GuestLogLine[] }
  | { ok: false; error: WireError; logs?: GuestLogLine[] };

export interface ChainValue {
  result: ChainResult;
  events: LifecycleEvent[];
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
