import type { ChainRequest, ChainResult, InvokeOutcome, InvokeRequest } from "../model/chain.js";
import type { ProfilePlanRef } from "../chain/plan.js";
import type { ResolvedHook } from "../model/hook.js";
import type { LifecycleEvent } from "../observe/events.js";
import type { BundleCode } from "../sandbox-host/types.js";

/** One chain as sent to a backend: the plan's hooks as plain data plus the request. */
export interface BackendChainTask {
  /** Which chain it is (`vcp` and the hook type for a VCP chain: chain/plan.ts `vcpPlanRef`), its registry revision and hooks. */
  plan: { profile: ProfilePlanRef; revision: number; hooks: readonly ResolvedHook[] };
  request: ChainRequest;
  /** `JSON.stringify(request)` if the caller has it already (chain/request-text.ts); else the backend serializes. */
  requestText?: string;
  /** `false`: nobody listens to `hook.fired` / `hook.completed`, so they need not be built (default true). */
  firedAndCompleted?: boolean;
}

/**
 * Where chains run. The default is the supervised isolated-vm sandbox process (`src/pool/`); tests
 * may pass another implementation to `createRuntime({ backend })`.
 */
export interface ChainBackend {
  loadBundle(bundle: BundleCode): Promise<{ exports: string[] }>;
  unloadBundle(digest: string): Promise<void>;
  runChain(task: BackendChainTask): Promise<{ result: ChainResult; events: LifecycleEvent[] }>;
  /**
   * Run one sandboxed action of an event-profile hook (`request.native`): a chain holding exec hooks
   * runs its executor in the main process (the sandbox never spawns, PROFILES §6) and sends each
   * sandboxed hook here. Without it, installed exec hooks fail their chains with SANDBOX_START_FAILED.
   */
  invokeAction?(request: InvokeRequest): Promise<InvokeOutcome>;
  stats(): {
    restarts: number;
    inFlight: number;
    queued: number;
    quarantined: string[];
    slowBundles: string[];
    /** Revisions capped for holding more than their signer's share of worker time (sandbox backend only). */
    demotedBundles?: string[];
    /** The signers capped: `key:<key id>`, or `bundle:<name>` for an unsigned bundle (sandbox backend only). */
    demotedAccounts?: string[];
    /** Bundles on crash probation: their chains run alone (sandbox backend only). */
    suspectBundles?: string[];
    /** Hosts the watchdog killed for a hook past its time, or wedged (sandbox backend only). */
    watchdogKills?: number;
    /** Pid of the sandbox host process (sandbox backend only). */
    hostPid?: number;
    /** Chains can run now (false while the sandbox host restarts or reloads). Absent ⇒ always ready. */
    ready?: boolean;
  };
  close(): Promise<void>;
}
