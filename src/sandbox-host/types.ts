import type { ActionInvoker } from "../model/chain.js";
import type { TrustLevel } from "../model/hook-type.js";

/**
 * A bundle revision as the sandbox loads it: esbuild output that, run as a classic script, leaves
 * its exports on `globalThis.__vcp_bundle` (esbuild `format: "iife", globalName: "__vcp_bundle"`).
 * The prelude captures that object and deletes the global before any hook runs.
 */
export interface BundleCode {
  /** Bundle name, `[a-z0-9_-]{1,64}`. */
  readonly name: string;
  /** Content digest of the revision (`sha256:<hex>`); isolates are keyed by it. */
  readonly digest: string;
  readonly code: string;
  /** Trust granted at install; decides which `vcp.*` capabilities exist in the isolate. */
  readonly trust: TrustLevel;
  /** Requested isolate heap limit in MiB (manifest `limits.memory_mb`); capped by host options. */
  readonly memoryMb?: number;
  /** `shared` (default): one context per isolate; `per_session`: one context per session (LRU). */
  readonly isolation?: "shared" | "per_session";
  /**
   * The key id that signed the revision (null or absent: unsigned). Fair share of worker time is
   * charged per signer, so every bundle one key signed draws on one share (pool/admission.ts
   * shareAccount); an unsigned bundle is its own. Not passed to the isolate.
   */
  readonly signedBy?: string | null;
}

export interface SandboxLimits {
  /** Upper bound on any bundle's isolate heap, MiB (config `pool.isolate_memory_mb`, default 64). */
  readonly isolateMemoryMb: number;
  /** Maximum size of a serialized hook result + chain state, bytes (config `limits.result_bytes`, default 1 MiB). */
  readonly resultBytes: number;
  /** Maximum bundle code size, bytes (default 5 MiB). */
  readonly codeBytes: number;
  /** Per-hook-call cap on `vcp.log` lines and bytes per line. */
  readonly logLinesPerCall: number;
  readonly logLineBytes: number;
  /** Contexts kept per `per_session` bundle before the least recently used is released. */
  readonly perSessionContexts: number;
  /**
   * Deepest nesting of each hook result field, of chain state and of `vcp.log` fields (config
   * `limits.json_depth`, default 64): the runtime sets it to its input depth bound, one rule for both.
   */
  readonly jsonDepth: number;
  /** Largest serialized `annotations` of one hook result, bytes (config `limits.annotation_bytes_per_hook`, default 64 KiB). */
  readonly annotationBytesPerHook: number;
  /** Largest serialized `annotations` of all hooks of one chain together, bytes (config `limits.annotation_bytes_per_chain`, default 256 KiB). */
  readonly annotationBytesPerChain: number;
  /**
   * Budget of a bundle's top-level code, the prelude and `finish()` at load, ms (config
   * `pool.load_timeout_ms`, default 1000); a hook call that runs top-level code first gets the smaller
   * of this and its own budget.
   */
  readonly loadTimeoutMs: number;
}

export interface FetchPolicy {
  /** Hosts a `system`-trust bundle may fetch from (exact host names). Empty: none. */
  readonly allowHosts: readonly string[];
  /** LLM endpoints always refused (spec §5.5), even when allowlisted. */
  readonly denyLlmHosts: readonly string[];
}

/** A guest log line, already redacted and truncated, tagged with where it came from. */
export interface GuestLogLine {
  bundle: string;
  hook: string;
  level: "debug" | "info" | "warn" | "error";
  message: string;
  fields?: Record<string, unknown>;
}

/**
 * The isolate side of one worker: owns one isolate per loaded bundle revision, runs hook actions
 * in them. `invoke` uses `request.hook.action.digest` to find the isolate, loading it through
 * `codeSource` on a miss.
 */
/** One bundle's isolate on one worker (IsolateHost.stats). */
export interface IsolateStats {
  recreated: number;
  heapUsedBytes: number;
  externalBytes: number;
  calls: number;
}

export interface IsolateHost extends ActionInvoker {
  /** Compile and initialise a bundle; returns the names of its exported functions. Throws VcpError INVALID_BUNDLE. */
  load(bundle: BundleCode): Promise<{ exports: string[] }>;
  /** Release the isolate(s) of a revision. */
  unload(digest: string): void;
  /**
   * Release every `per_session` context kept for `sessionId` (a sessionless chain's own key, once the
   * chain ends): its state is gone and it holds no place in the LRU of real sessions.
   */
  releaseSession(sessionId: string): void;
  /**
   * Per-bundle counters for status and the bench: isolate recreations, V8 heap in use, and
   * `externalBytes`, the memory outside the V8 heap that isolated-vm counts against the isolate's
   * memory limit (external strings, ArrayBuffer contents).
   */
  stats(): Record<string, IsolateStats>;
  dispose(): void;
}
