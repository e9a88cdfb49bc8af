/**
 * The chain's record types (DESIGN §2, §6.2): the plan the executor runs, the request and result of
 * one chain, one hook's execution record, and the calls into the sandbox. Shared record types, here at
 * the bottom, because the executor (chain/), the profile descriptors that read and build them
 * (profiles/), the sandbox pool and the fire paths all carry them.
 */
import type { Constitution } from "./constitution.js";
import type { HookType, Scope, TrustLevel } from "./hook-type.js";
import type { ResolvedHook } from "./hook.js";
import type { SessionInfo, VcpContext } from "./input.js";
import type { Outcome, ResultStatus } from "./result.js";
import type { HookEvent } from "./events.js";
import type { CompiledPredicate } from "./predicate.js";
import type { DecisionRecord } from "./decision.js";
import type { CompiledMatcher, ExitCode, NativeObject } from "./native.js";
import type { Verdict } from "./result.js";

/**
 * A hook as the executor runs it: the registry's frozen definition plus its condition and matcher,
 * compiled once when the plan is built (never per event), and its dedup verdict.
 */
export interface PlannedHook {
  readonly hook: ResolvedHook;
  readonly predicate: CompiledPredicate | null;
  /** Its `matcher` AND `match` filters (VCP hooks have none: every input matches). */
  readonly matcher: CompiledMatcher;
  /** Name of the earlier hook in plan order with the same (bundle digest, action, matcher): this one is `deduplicated` (PROFILES §8.6). */
  readonly duplicateOf?: string;
}

/** Which chain a plan runs, and the deployment's settings for its profile: all a worker needs to look the profile up. */
export interface ProfilePlanRef {
  /** The profile: `vcp` for VCP chains. */
  readonly id: string;
  /** The event: for VCP, the hook type (spec §3). */
  readonly event: string;
  readonly strict: boolean;
  readonly settings: Readonly<Record<string, unknown>>;
}

/**
 * The ordered hooks of one (profile, event) — for VCP one hook type for one session — built when the
 * hooks change (plan.ts `compilePlan`), never per event. One shape for every profile.
 */
export interface ChainPlan {
  readonly profile: ProfilePlanRef;
  /** Revision the plan was built from; plans are immutable. */
  readonly revision: number;
  readonly hooks: readonly PlannedHook[];
}

/**
 * One call of one hook action. Only JSON crosses to the invoker: `inputJson` is the whole HookInput
 * (`{"context":…,"constitution":…,"event":…,"session":…,"chain_state":…}`), assembled from parts the
 * executor serialized once per chain and again only after a `modify`.
 */
export interface InvokeRequest {
  readonly hook: ResolvedHook;
  readonly chainId: string;
  readonly sessionId: string;
  /** `"chain"`: `sessionId` names one sessionless chain (ChainRequest.sessionScope); its contexts are released after the task. */
  readonly sessionScope?: "chain";
  readonly inputJson: string;
  /** Time the action may use: min(timeout_ms, remaining chain deadline). */
  readonly budgetMs: number;
  /**
   * An event-profile call (PROFILES §1.3): `inputJson` is the agent's native input, handed to the
   * action as is (no `chain_state`), and an `undefined` result comes back as `null` for the profile
   * to decode. Absent ⇒ a VCP call.
   */
  readonly native?: boolean;
}

/**
 * What happened when the action ran. `returned` carries the result and the chain state as JSON text
 * serialized *inside* the sandbox; the executor parses and validates them.
 */
export type InvokeOutcome =
  | { kind: "returned"; resultJson: string; chainStateJson: string; cpuMs?: number }
  | { kind: "threw"; message: string; stack?: string; cpuMs?: number }
  | { kind: "timeout"; elapsedMs: number; cpuMs?: number }
  /** The result could not be serialized, was too large, or was not JSON. */
  | { kind: "invalid"; message: string; cpuMs?: number }
  /** The sandbox host died while the action ran (DESIGN §4.1). */
  | { kind: "crashed"; message: string }
  /**
   * An exec hook (the command lane, PROFILES §6; never from the sandbox): how its script ended, for the
   * profile's exit-code table to read, or why it was not started (`refused`: a coded error such as
   * EXEC_HASH_MISMATCH). `sha256` is the pinned hash (the hash it ran with, when it ran).
   */
  | { kind: "command"; sha256: string; run?: CommandRun; refused?: { code: string; message: string } };

/** An exec hook's outcome: the command lane's answer (pool/exec/invoker.ts `runExecHook`). */
export type CommandInvokeOutcome = Extract<InvokeOutcome, { kind: "command" }>;

/** An exec hook's script as it ended (pool/exec/run.ts `CommandResult`, the part a chain needs). */
export interface CommandRun {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stdout: string;
  /** Redacted by the lane before anyone sees it. */
  readonly stderr: string;
  /** The lane stopped it at its budget (SIGTERM, then SIGKILL after the profile's grace). */
  readonly timedOut: boolean;
  /** stdout or stderr went over `exec.max_output_bytes` and was cut. */
  readonly truncated: boolean;
  readonly durationMs: number;
}

/** What results, audit and status say about an exec hook's run (PROFILES §6); always with `sandboxed: false`. */
export interface ExecRunRecord {
  /** The SHA-256 the executable had when it was started (the pin), or the pin when it was refused. */
  command_sha256: string;
  /** null when a signal ended it or it never started. */
  exit_code: number | null;
  signal: string | null;
  duration_ms: number;
  timed_out: boolean;
  truncated: boolean;
  /** Why it was not started (EXEC_HASH_MISMATCH, EXEC_SPAWN_FAILED, EXEC_SHELL_DISABLED, …). */
  error_code?: string;
}

/** Runs hook actions. The isolated-vm sandbox implements it; unit tests may use a test invoker. */
export interface ActionInvoker {
  invoke(request: InvokeRequest): Promise<InvokeOutcome>;
  /**
   * `invoke` may be called again before an earlier call has settled (each call is its own process or
   * sandbox task). The profile executor then starts every hook of a parallel group at once and folds
   * them in plan order; without it (an isolate in a worker runs one action at a time) they run one
   * after another. The answer is the same either way.
   */
  readonly concurrent?: boolean;
}

/**
 * The integrity checker's verdict on a modified constitution (DESIGN §4.5); plugged in by the pipeline.
 * `composedFrom`: constitutions the proposal is made from, whose safety-critical rules it must keep
 * too (see `constitutionsToKeep` in execute.ts).
 */
export type ConstitutionCheck = (
  previous: Constitution,
  proposed: Constitution,
  hook: ResolvedHook,
  composedFrom?: readonly Constitution[],
) => { ok: true; constitution: Constitution; provenance?: ConstitutionProvenance } | { ok: false; reason: string };

/**
 * Which content a hook's accepted constitution change turned into which: RFC 8785 content digests
 * (without `signatures`) before and after. Kept in the hook result and the audit record for every
 * modification, signed or not; a signed constitution also carries it in its modification link.
 */
export interface ConstitutionProvenance {
  parent_digest: string;
  digest: string;
}

/** One entry of `hook_results` (DESIGN §6.2): what the hook returned and what the runtime made of it. */
export interface HookExecution {
  hook: string;
  bundle: string;
  scope: Scope;
  trust: TrustLevel;
  /** The status the chain acted on (a failed hook is `continue`, or `abort` when fail-closed). */
  status: ResultStatus;
  outcome: Outcome;
  duration_ms: number;
  cpu_ms?: number;
  reason?: string;
  annotations?: Record<string, unknown>;
  /** Error text for non-ok outcomes, truncated, host paths removed. */
  error?: string;
  modified_context?: boolean;
  modified_constitution?: boolean;
  /** For an accepted constitution change: its content digests before and after (with hook, bundle and bundle_digest: who changed what). */
  provenance?: ConstitutionProvenance;
  /** Digest of the bundle revision that ran the hook. */
  bundle_digest?: string;
  /**
   * RFC 6902 diff of what a `modify` changed: VCP chains, `{context, constitution}`-rooted with values
   * (for the audit log); event-profile chains, rooted at the native input, op and path only (no values).
   */
  modification?: unknown[];
  /** Event-profile chains: what the hook's output (or its failure output) amounts to (profiles/types.ts). */
  verdict?: Verdict;
  /** Event-profile chains: output fields removed from a `session`-trust hook's output (spec §8.3). */
  stripped?: string[];
  /** Exec hooks only (PROFILES §6): nothing of this hook ran in the sandbox. */
  sandboxed?: false;
  /** Exec hooks only: the script's run (command hash, exit code, signal, duration) or its refusal. */
  exec?: ExecRunRecord;
}

/** What an event-profile chain answered the agent (PROFILES §2 `present`), carried on its ChainResult. */
export interface ProfileChainAnswer {
  profile: string;
  event: string;
  /** How the matching hooks ran (PROFILES §1.5: a parallel group gets the original input and is folded in plan order). */
  mode: "sequential" | "parallel";
  native: NativeObject;
  exit_code: ExitCode;
  stderr?: string;
  /**
   * Timeout violations of the chain (PROFILES §8.10): hooks that timed out or were stopped by the
   * chain deadline, and hooks skipped because their class deadline was spent. Counted in the worker;
   * the main process adds them to `vcp_timeout_violations_total{profile,event}`. Absent when none.
   */
  timeout_violations?: number;
}

/**
 * One chain's result. A VCP chain's is the spec's ChainResult (§4.3): `type` is its hook type. An
 * event-profile chain's carries no VCP hook type: `profile` names its profile and event and holds the
 * native answer (absent only while the fire path folds a sandbox crash into one).
 */
export interface ChainResult {
  chain_id: string;
  /** VCP chains only: the hook type (spec §4.3). Absent on an event-profile chain's result. */
  type?: HookType;
  status: "completed" | "aborted";
  reason: string | null;
  aborted_by: string | null;
  context: VcpContext;
  constitution: Constitution;
  cascade_failure: boolean;
  hook_results: HookExecution[];
  duration_ms: number;
  /** Event-profile chains only: the merged native answer (absent for `vcp@1` chains). */
  profile?: ProfileChainAnswer;
  /**
   * The chain's decision record (chain/decision.ts), set by the runtime's fire layer once the chain has
   * run (never by the executor): in the HTTP answer, the audit log and the decision stream.
   */
  decision?: DecisionRecord;
}

/** Everything one chain execution needs besides the plan. */
export interface ChainRequest {
  chainId: string;
  context: VcpContext;
  constitution: Constitution;
  event: HookEvent | Record<string, unknown>;
  session: SessionInfo;
  /**
   * The session's key inside the runtime (pipeline/access.ts `sessionKey`): session ids are per owner,
   * so per-session isolates are kept by this key, never by `session.id` alone. Default `session.id`.
   */
  sessionKey?: string;
  /**
   * `"chain"`: the event has no session and `sessionKey` names this chain alone (pipeline/access.ts
   * `chainSessionKey`): per-session guest contexts made for it are released when it ends, so they
   * neither outlive the chain nor push real sessions' contexts out of the sandbox's LRU.
   */
  sessionScope?: "chain";
  /** Whole-chain deadline for this type (DESIGN §4.3), if configured. */
  deadlineMs?: number;
  /**
   * What the fire path decided before crossing (chain/select.ts): the plan holds the selected hooks
   * only. Absent ⇒ the executor selects from the whole plan itself.
   */
  selection?: PreSelection;
}

/**
 * The fire path's selection, handed to the executor with the selected hooks (indices are positions
 * in the plan the executor runs). The executor asks no matcher again (every hook passed its own),
 * takes a `held` condition as true, fails a `refused` hook with the budget text (as a throw), and
 * meters the conditions it still evaluates from `predicateLeft`, so a bundle's budget stays per chain.
 */
export interface PreSelection {
  /** Every hook of the plan passed its matcher and `match` filters (event-profile chains). */
  readonly matched: true;
  /** Positions whose condition held in the fire path. */
  readonly held: readonly number[];
  /** Position → why its matcher or condition was not evaluated (its bundle's budget was spent). */
  readonly refused: Readonly<Record<string, string>>;
  /** Predicate cost units left per bundle after the conditions evaluated in the fire path. */
  readonly predicateLeft: Readonly<Record<string, number>>;
  /** Event-profile chains: how the hooks that applied run, decided from all of them (plan.ts executionModeOf). */
  readonly mode?: "sequential" | "parallel";
}
