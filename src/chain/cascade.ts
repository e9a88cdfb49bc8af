/**
 * Cascading failures (spec §7.3) and which failing hooks a cascade may disable (§7.3.4, with
 * `cascade.disable_failing_hooks`).
 *
 * Spec §7.3: "If more than 50% of hooks in a single chain fail (exception or timeout), the runtime
 * MUST … Optionally disable the failing hooks until manually re-enabled." Counted here:
 * - only hooks that ran (skipped ones, including `skipped_deadline`, are not "hooks that ran");
 * - only failures of the hook itself ({@link FAILURE_OUTCOMES}); a hook stopped or skipped by the chain
 *   deadline that others spent (`deadline_exceeded`, `skipped_deadline`) has not failed.
 *
 * What is disabled is off in the cascading chain's session only (runtime.ts `disableFailing`,
 * registry `setEnabled` with a session): one client's input never switches a deployment hook off for
 * other sessions; only an operator disables a hook globally. Within the session, disabling is still
 * stricter than detecting: a cause never crosses to a more trusted or more widely scoped
 * hook: a failing hook is disabled only when more than half of the hooks that ran *at its level or
 * above* (trust at least its trust, scope at least its scope) failed. So a session-trust hook's
 * failures never count towards disabling a deployment- or system-trust hook, and session-scope hooks
 * never count towards disabling a deployment-scope hook.
 *
 * @module
 */
import type { Scope, TrustLevel } from "../model/hook-type.js";
import { FAILURE_OUTCOMES, SKIPPED_OUTCOMES } from "../model/result.js";
import type { HookExecution } from "../model/chain.js";

const TRUST_RANK: Readonly<Record<TrustLevel, number>> = { session: 0, deployment: 1, system: 2 };
const SCOPE_RANK: Readonly<Record<Scope, number>> = { session: 0, deployment: 1 };

/** The spec §7.3 counts of one chain: hooks that ran and those of them that failed. */
export interface CascadeCount {
  total: number;
  failing: string[];
}

/** Count the hooks that ran and failed (spec §7.3). */
export function countFailures(results: readonly HookExecution[]): CascadeCount {
  let total = 0;
  const failing: string[] = [];
  for (const r of results) {
    if (SKIPPED_OUTCOMES.has(r.outcome)) continue;
    total++;
    if (FAILURE_OUTCOMES.has(r.outcome)) failing.push(r.hook);
  }
  return { total, failing };
}

/** Spec §7.3: more than 50% of the hooks that ran failed. */
export function isCascade(count: CascadeCount): boolean {
  return count.total > 0 && count.failing.length / count.total > 0.5;
}

/** `peer` stands at `hook`'s level or above: at least as trusted and at least as widely scoped. */
function atOrAbove(peer: HookExecution, hook: HookExecution): boolean {
  return TRUST_RANK[peer.trust] >= TRUST_RANK[hook.trust] && SCOPE_RANK[peer.scope] >= SCOPE_RANK[hook.scope];
}

/**
 * The failing hooks of a cascading chain that the runtime may disable: those for which the hooks at
 * their level or above cascade on their own. Empty when the chain is no cascade.
 *
 * @example
 * ```ts
 * // Session-trust "obs" timed out, deployment "pii" was ok, deployment "audit" threw: 2 of 3 failed, a
 * // cascade. "obs" may be disabled (every hook is at its level or above); "audit" may not (1 of the 2
 * // deployment hooks failed).
 * cascadeDisableTargets(result.hook_results).map((h) => h.hook); // ["obs"]
 * ```
 */
export function cascadeDisableTargets(results: readonly HookExecution[]): HookExecution[] {
  if (!isCascade(countFailures(results))) return [];
  const targets: HookExecution[] = [];
  for (const hook of results) {
    if (!FAILURE_OUTCOMES.has(hook.outcome)) continue;
    // SECURITY: only hooks at this hook's trust and scope or above decide whether it is disabled.
    if (isCascade(countFailures(results.filter((peer) => atOrAbove(peer, hook))))) targets.push(hook);
  }
  return targets;
}
