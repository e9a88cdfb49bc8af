/**
 * The optional whole-chain deadline (DESIGN §4.3, `chain_deadline_ms`), charged per trust tier.
 *
 * Spec §8.3 makes `session`-trust hooks observers: they cannot modify or abort. If their time counted
 * against the hooks after them, an observer could stop deployment policy anyway, by spending the
 * deadline so that policy hooks get no time. So the deadline is kept as two clocks:
 *
 * ```
 *   chain:     |--policy--|---observer (session trust)---|--policy--|--observer--|
 *   observers: every millisecond counts            ─▶ budget = min(timeout_ms, deadline − all time)
 *   policy:    observer hooks' time does not count ─▶ budget = min(timeout_ms, deadline − (all time − observer time))
 * ```
 *
 * Policy hooks (`deployment` and `system` trust) are charged for their own time (conditions
 * included), each other's, and the executor's (copying, results); observers for everything. A chain therefore lasts at most
 * about twice the deadline: the policy share plus at most one deadline of observer time
 * ({@link chainTimeBoundMs}).
 *
 * @module
 */
import type { ResolvedHook } from "../model/hook.js";
import type { Clock } from "../observe/events.js";

type Timed = Pick<ResolvedHook, "trust" | "timeout_ms">;

/** Observer hooks (spec §8.3 `session` trust) are charged for all chain time; policy hooks are not charged for theirs. */
function isObserver(hook: Pick<ResolvedHook, "trust">): boolean {
  return hook.trust === "session";
}

/**
 * One chain's deadline account.
 *
 * @example
 * ```ts
 * const deadline = new ChainDeadline(2000, clock, clock.now());
 * const budgetMs = deadline.budgetFor(hook); // ≤ 0 ⇒ the hook does not run (skipped_deadline)
 * // … run the hook for durationMs …
 * deadline.charge(hook, durationMs);
 * ```
 */
export class ChainDeadline {
  private observerMs = 0;
  /** A hook of that tier was stopped at the deadline: the tier has no time left. */
  private policySpent = false;
  private observerSpent = false;

  constructor(
    private readonly deadlineMs: number | undefined,
    private readonly clock: Clock,
    private readonly startedAt: number,
  ) {}

  /** Whether a deadline applies at all. */
  get enabled(): boolean {
    return this.deadlineMs !== undefined;
  }

  /** Milliseconds `hook` may run now: its `timeout_ms`, cut to what is left of its tier's share of the deadline. */
  budgetFor(hook: Timed): number {
    if (this.deadlineMs === undefined) return hook.timeout_ms;
    if (isObserver(hook) ? this.observerSpent : this.policySpent) return 0;
    const elapsed = this.clock.now() - this.startedAt;
    // SECURITY: observer (session-trust) time is never taken from policy hooks (spec §8.3).
    const charged = isObserver(hook) ? elapsed : elapsed - this.observerMs;
    return Math.min(hook.timeout_ms, Math.floor(this.deadlineMs - charged));
  }

  /**
   * A hook was stopped because its budget reached the deadline: its tier's share is spent, even if
   * the measured time falls a little short of it (timers and clocks disagree by a millisecond or so),
   * so the hooks after it are `skipped_deadline` rather than run on a sliver of time. A policy hook's
   * stop spends the observers' share too (observers are charged for all chain time).
   */
  exhaust(hook: Pick<ResolvedHook, "trust">): void {
    if (this.deadlineMs === undefined) return;
    this.observerSpent = true;
    if (!isObserver(hook)) this.policySpent = true;
  }

  /** Record time a hook used (its run, or its condition); an observer's is then left off policy hooks' account. */
  charge(hook: Pick<ResolvedHook, "trust">, durationMs: number): void {
    if (isObserver(hook)) this.observerMs += durationMs;
  }
}

/**
 * The longest a chain of these (enabled) hooks can legitimately run under {@link ChainDeadline}:
 * the sum of their `timeout_ms`, and with a deadline at most one deadline of policy time plus at most
 * one deadline of observer time. The supervisor's hard deadline is built on this.
 *
 * @example
 * ```ts
 * chainTimeBoundMs([{ trust: "session", timeout_ms: 5000 }, { trust: "deployment", timeout_ms: 5000 }], 1000); // 2000
 * ```
 */
export function chainTimeBoundMs(hooks: readonly Timed[], deadlineMs: number | undefined): number {
  let policyMs = 0;
  let observerMs = 0;
  for (const hook of hooks) {
    if (isObserver(hook)) observerMs += hook.timeout_ms;
    else policyMs += hook.timeout_ms;
  }
  if (deadlineMs === undefined) return policyMs + observerMs;
  const deadline = Math.max(0, deadlineMs);
  return Math.min(policyMs, deadline) + Math.min(observerMs, deadline);
}
