import type { DecisionRecord } from "../model/decision.js";
import type { HookType, Scope } from "../model/hook-type.js";
import type { Outcome, ResultStatus } from "../model/result.js";
import type { InputSummary } from "../model/input.js";

/**
 * Lifecycle events of spec §6.4 plus `hook.cascade_failure` (spec §7.3). Payloads are plain JSON so
 * they can be returned from a piscina worker and sent over IPC in order.
 */
export interface LifecycleEventMap {
  /** `owner`: the owner of `session_id`'s session when a principal opened it (ids are per owner). */
  // One stream for every hook of the registry, keyed by (profile, event): a VCP hook is profile `vcp`,
  // its event its `type`; an event-profile hook has no `type`. `reason` says why a hook went when the
  // registry itself took it out (a bundle revision that no longer offers a session hook, a removal).
  "hook.registered": { hook: string; profile: string; event: string; type?: HookType; scope: Scope; session_id?: string; owner?: string; bundle: string; priority: number; principal: string };
  "hook.deregistered": { hook: string; profile: string; event: string; type?: HookType; scope: Scope; session_id?: string; owner?: string; bundle: string; principal: string; reason?: string };
  // The hook events of a chain fire for VCP chains and event-profile chains alike: `ChainOrigin` says which.
  "hook.fired": ChainOrigin & { hook: string; chain_id: string; session_id: string; input_summary: InputSummary };
  "hook.completed": ChainOrigin & { hook: string; chain_id: string; status: ResultStatus; outcome: Outcome; duration_ms: number };
  /** A hook stopped at its own `timeout_ms` (a cut by the chain deadline is `hook.completed` with outcome `deadline_exceeded`). */
  "hook.timeout": ChainOrigin & { hook: string; chain_id: string; timeout_ms: number; elapsed_ms: number; input_summary: InputSummary };
  "hook.error": ChainOrigin & { hook: string; chain_id: string; outcome: Outcome; error: string; stack?: string; input_summary: InputSummary };
  /**
   * `chain_deadline`: the hook's share of the whole-chain deadline (or an ai-memory event class's
   * deadline) was spent before its turn (outcome `skipped_deadline` / `deadline_exhausted`).
   */
  "hook.skipped": ChainOrigin & { hook: string; chain_id: string; reason: "disabled" | "predicate_false" | "chain_deadline"; predicate?: unknown };
  /**
   * `failing_hooks` failed on their own account (spec §7.3); `disabled_hooks` are those the runtime
   * actually disabled (`cascade.disable_failing_hooks`, chain/cascade.ts); `disabled` is true when
   * there is at least one.
   */
  "hook.cascade_failure": {
    type: HookType; chain_id: string; total: number; failed: number; failing_hooks: string[]; disabled: boolean; disabled_hooks: string[];
    /** With `disabled`: always `"session"`: the hooks are off in `disabled_session` only (spec §7.3.4). */
    disabled_scope?: "session";
    disabled_session?: string;
    /** The owner of `disabled_session` (null: the embedding application); ids are per owner. */
    disabled_owner?: string | null;
  };
  /**
   * One finished chain with its per-hook results, as the audit trail records it: annotations, error
   * text, reasons and the RFC 6902 modification diffs with secrets redacted (DESIGN §5). Emitted after
   * the chain's audit records are durable, and built only while someone listens (the operator
   * console's live decisions stream, `GET /v1/decisions/stream`).
   */
  "chain.completed": ChainCompletedEvent;
}

/**
 * Which kind of chain a hook event or `chain.completed` belongs to. A VCP chain: `type`, the spec's hook
 * type. An event-profile chain (`runtime.fireProfile`, PROFILES §2): `profile` (bare name, e.g.
 * `gemini-cli`) and its native `event` (e.g. `BeforeTool`), and no `type`. Subscribers tell them apart
 * by `profile`.
 */
export type ChainOrigin = { type: HookType; profile?: never; event?: never } | { type?: never; profile: string; event: string };

/** Payload of `chain.completed`: a chain result without the context and constitution themselves. */
export type ChainCompletedEvent = ChainOrigin & ChainCompletedFields;

/** The fields of `chain.completed` every chain has, VCP or event profile. */
export interface ChainCompletedFields {
  chain_id: string;
  /** ISO-8601 wall-clock time the chain finished. */
  ts: string;
  session_id: string;
  /** The owner of the session when a principal opened it (session ids are per owner). */
  owner?: string;
  status: "completed" | "aborted";
  reason: string | null;
  aborted_by: string | null;
  cascade_failure: boolean;
  duration_ms: number;
  hooks: Array<{
    hook: string;
    bundle: string;
    scope: Scope;
    status: ResultStatus;
    outcome: Outcome;
    duration_ms: number;
    reason?: string;
    error?: string;
    annotations?: unknown;
    /** RFC 6902 diff of a `modify`, `{context, constitution}`-rooted, redacted. */
    modification?: unknown;
  }>;
  /**
   * The chain's decision record (chain/decision.ts, docs/decisions.md), redacted and bounded: what the
   * audit log's chain record and `GET /v1/decisions` carry.
   */
  decision?: DecisionRecord;
}
export type LifecycleEventName = keyof LifecycleEventMap;
export type LifecycleEvent = { [K in LifecycleEventName]: { event: K; payload: LifecycleEventMap[K] } }[LifecycleEventName];

/** The input summary of hook events (a shared record type: model/input.ts). */
export type { InputSummary } from "../model/input.js";

/** Receives lifecycle events in emission order. Must not throw; errors are the sink's problem. */
export type EventSink = (event: LifecycleEvent) => void;

/** Milliseconds clock; injected so core modules run the same in a worker, a test or the main thread. */
export interface Clock {
  /** Monotonic milliseconds with sub-millisecond resolution (performance.now). */
  now(): number;
  /** Wall-clock milliseconds since the epoch. */
  wallNow(): number;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  wallNow: () => Date.now(),
};

/** The logger interface core modules take (pino satisfies it). */
export interface Logger {
  isLevelEnabled(level: "debug" | "info" | "warn" | "error"): boolean;
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLogger: Logger = {
  isLevelEnabled: () => false,
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
};

/** What a loop that retries by itself reports to its {@link OutageLog}. */
export interface OutageLog {
  /** A round failed: a warning the first time, then one per `repeatMs` while it keeps failing. */
  failed(err: unknown): void;
  /** A round succeeded: one info line if it had been failing. */
  succeeded(): void;
}

/**
 * How a background loop that retries by itself (the approval sweep, the periodic scan, a replica's
 * heartbeat) logs a dependency that stopped answering — usually Redis: one warning when it fails, one
 * reminder per `repeatMs` (default 60 s) while it keeps failing (with the failures counted), and one
 * info line when it answers again. A loop ticking every 500 ms through a Redis
 * outage would otherwise write 120 warnings a minute, burying the line that says when it began.
 *
 * @example
 * ```ts
 * const outage = createOutageLog({ logger, clock, failing: "approval sweep could not reach the shared store", recovered: "approval sweep reached the shared store again" });
 * setInterval(() => sweep().then(() => outage.succeeded(), (err) => outage.failed(err)), 500);
 * ```
 */
export function createOutageLog(options: { logger: Logger; clock: Pick<Clock, "now">; failing: string; recovered: string; repeatMs?: number; fields?: object }): OutageLog {
  const { logger, clock } = options;
  const repeatMs = options.repeatMs ?? 60_000;
  let since: number | undefined;
  let lastLine = 0;
  let failures = 0;
  return {
    failed(err) {
      const at = clock.now();
      failures++;
      if (since !== undefined && at - lastLine < repeatMs) return;
      since ??= at;
      lastLine = at;
      const error = err instanceof Error ? err.message : String(err);
      logger.warn({ ...options.fields, error, failures, down_for_ms: Math.round(at - since) }, options.failing);
    },
    succeeded() {
      if (since === undefined) return;
      logger.info({ ...options.fields, failures, down_for_ms: Math.round(clock.now() - since) }, options.recovered);
      since = undefined;
      failures = 0;
    },
  };
}
