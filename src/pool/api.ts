import type { ChainRequest, ChainResult, InvokeOutcome, InvokeRequest } from "../model/chain.js";
import type { ProfilePlanRef } from "../chain/plan.js";
import type { IntegrityOptions } from "../integrity/check.js";
import type { ResolvedHook } from "../model/hook.js";
import type { LifecycleEvent, Logger } from "../observe/events.js";
import type { BundleCode, FetchPolicy, GuestLogLine, SandboxLimits } from "../sandbox-host/types.js";

// The sandbox as its callers see it (src/pool/index.ts exports these): the options of startSandbox,
// the Sandbox interface the supervisor (supervisor.ts) implements, and what it answers.
/**
 * Options of {@link startSandbox}.
 *
 * @example
 * ```ts
 * const sandbox = await startSandbox({ threads: 4, maxQueue: 2048, limits: { isolateMemoryMb: 128 } });
 * ```
 */
export interface SandboxOptions {
  /** Worker threads in the sandbox host; one chain runs per thread at a time. Default 2. */
  threads?: number;
  /** Chains that may wait for a thread before runChain rejects with SANDBOX_OVERLOADED. Default 1024. */
  maxQueue?: number;
  limits?: Partial<SandboxLimits>;
  /** `vcp.fetch` policy for `system`-trust bundles. Default: no host allowed. */
  fetch?: FetchPolicy;
  logger?: Logger;
  /** Receives guest `vcp.log` lines in order; without it they go to `logger`. */
  onGuestLog?: (line: GuestLogLine) => void;
  /** A bundle with this many hook timeouts within `windowMs` is slow (one chain at a time). Default 3 in 60 000 ms. */
  slowBundle?: { timeouts: number; windowMs: number };
  /**
   * Fair share of worker time (admission.ts, WorkerShareTracker): a bundle whose hooks held more than
   * max(1 / active bundles, 1 / threads) of the workers' time over about `windowMs`, while chains
   * without it ran too, is capped at that share of the threads (at least one chain in flight) until
   * its share drops. `false` turns it off. Default `{ windowMs: 3000 }`.
   */
  fairShare?: { windowMs: number } | false;
  /** Content-addressed bundle files. Default: a fresh temporary directory, removed on close. */
  codeDir?: string;
  /**
   * Constitution integrity checks after every modifying hook (DESIGN §4.5, spec §8.2.4). Always on;
   * these settings add deployment-listed safety-critical rules, a runtime signing key and trusted keys.
   */
  integrity?: IntegrityOptions;
  /** Attach RFC 6902 diffs of each modification to hook results (for the audit log). Default false. */
  auditDiffs?: boolean;
  /** Module URLs of event profiles (default export) the workers register besides the built-in ones. */
  profileModules?: readonly string[];
  /**
   * Largest frame between the runtime and the sandbox host, bytes (frames.ts): a chain whose request
   * or reply would be larger fails with SANDBOX_FRAME_TOO_LARGE. Default 64 MiB.
   */
  frameBytes?: number;
  /**
   * The time the sandbox host has to start — at startSandbox and after each crash — retries included
   * (a host that dies before it is ready is started again with backoff; a slow one is waited for).
   * Past it: SANDBOX_START_FAILED. Default 90 000 (config `pool.start_timeout_ms`).
   */
  startTimeoutMs?: number;
}

/** One chain for the sandbox: the hooks in spec §5.1 order (as the registry snapshot lists them) and the request. */
export interface ChainTask {
  /** Which chain it is (`vcp` and the hook type for a VCP chain: chain/plan.ts `vcpPlanRef`), its registry revision and hooks. */
  plan: { profile: ProfilePlanRef; revision: number; hooks: readonly ResolvedHook[] };
  request: ChainRequest;
  /**
   * `JSON.stringify(request)`, if the caller made it already (the runtime splices it from the input
   * bounds check's texts, chain/request-text.ts); the frame carries it as is. Absent: serialized here.
   */
  requestText?: string;
  /** `false`: nobody listens to `hook.fired` / `hook.completed`, so they are not rebuilt (default true). */
  firedAndCompleted?: boolean;
}

/** The chain result plus its lifecycle events, in emission order, for the caller to emit and audit. */
export interface ChainTaskResult {
  result: ChainResult;
  events: LifecycleEvent[];
  /** One-action tasks only (`invokeAction`): the action's raw outcome, absent when the host died first. */
  invoked?: InvokeOutcome;
}

/**
 * The sandbox as the runtime sees it: a supervised child process running a piscina pool of isolate
 * workers (DESIGN §4.1).
 *
 * @example
 * ```ts
 * const sandbox = await startSandbox();
 * await sandbox.loadBundle({ name: "pii", digest, code, trust: "deployment" });
 * const { result, events } = await sandbox.runChain({ plan: { profile: vcpPlanRef(type), revision, hooks }, request });
 * await sandbox.close();
 * ```
 */
export interface Sandbox {
  /**
   * Store the code content-addressed in the code directory and load it in a real isolate of the
   * host. Rejects with INVALID_BUNDLE when it does not load. Loading a quarantined digest again
   * lifts its quarantine (and forgets its timeouts).
   */
  loadBundle(bundle: BundleCode): Promise<{ exports: string[] }>;
  /** Forget a revision and release its isolates in every worker. Chains that name it then fail with UNKNOWN_BUNDLE. */
  unloadBundle(digest: string): Promise<void>;
  /**
   * Run one chain in one worker. Rejects with UNKNOWN_BUNDLE (an enabled hook names a revision that
   * is not loaded), SANDBOX_OVERLOADED (more than `maxQueue` chains waiting), SANDBOX_CLOSED, or
   * SANDBOX_START_FAILED (the host cannot be restarted). Hooks of a quarantined bundle are not run:
   * they are recorded `crashed` with error "bundle quarantined…" (or abort the chain when fail_closed).
   */
  runChain(task: ChainTask): Promise<ChainTaskResult>;
  /**
   * Run ONE sandboxed action of an event-profile hook (`request.native`), for a chain whose executor
   * runs in the main process because it holds exec hooks (PROFILES §6). It is a chain task of one hook
   * to the supervisor (admission, watchdog, crash attribution and quarantine apply unchanged); the
   * worker invokes the action and answers its raw outcome. A host that dies meanwhile answers
   * `crashed` (or `timeout` when the watchdog stopped the hook).
   */
  invokeAction(request: InvokeRequest): Promise<InvokeOutcome>;
  stats(): SandboxStats;
  on(event: "restart" | "quarantine", listener: (info: Record<string, unknown>) => void): void;
  /** Graceful: refuse new work (SANDBOX_CLOSED), finish queued and in-flight chains, stop the host. */
  close(): Promise<void>;
}

export interface SandboxStats {
  /** Host processes started after the first one (crash recoveries). */
  restarts: number;
  /** Chains admitted for the host (waiting for one of its workers or running) and not answered yet. */
  inFlight: number;
  /** Chains waiting for a thread (before admission, or admitted and waiting for a free worker). */
  queued: number;
  /** Digests whose hooks are not run until the bundle is loaded again. */
  quarantined: string[];
  /** Digests admitted one chain at a time because their hooks keep timing out. */
  slowBundles: string[];
  /** Digests capped at their share of the threads: the loaded revisions of the demoted accounts. */
  demotedBundles: string[];
  /**
   * Fair-share accounts whose hooks held more than their share of worker time, capped: `key:<key id>`
   * (every bundle that key signed) or `bundle:<name>` (an unsigned bundle).
   */
  demotedAccounts: string[];
  /**
   * Digests that were running during a crash that could not be pinned on one bundle: their chains run
   * alone in the sandbox host (nothing else in flight) until they pass probation, so their next crash
   * is unambiguous. Never quarantined for being a suspect.
   */
  suspectBundles: string[];
  /** Chain messages that carried a hook list (once per plan and host generation; others name a key). */
  plansSent: number;
  /** Host processes the watchdog killed (a hook past its budget, a wedged host). */
  watchdogKills: number;
  /** Process id of the current sandbox host, if one is running. */
  hostPid: number | undefined;
  /** A host is up and its bundles are loaded: chains run now rather than wait (GET /readyz). */
  ready: boolean;
}
