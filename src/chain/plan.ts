import type { HookType } from "../model/hook-type.js";
import type { ResolvedHook } from "../model/hook.js";
import { compilePredicate, type CompiledPredicate } from "./predicate.js";
import type { ChainPlan, PlannedHook } from "./types.js";

// Predicates compile once per hook object; hooks are frozen and replaced (never mutated) on change,
// so a WeakMap keyed by the hook is an exact cache and frees itself when a hook is deregistered.
const compiledConditions = new WeakMap<ResolvedHook, CompiledPredicate | null>();

function compiledConditionOf(hook: ResolvedHook): CompiledPredicate | null {
  let compiled = compiledConditions.get(hook);
  if (compiled === undefined) {
    compiled = hook.condition == null ? null : compilePredicate(hook.condition);
    compiledConditions.set(hook, compiled);
  }
  return compiled;
}

/**
 * Build the immutable plan of one chain. Called when the registry changes (or when a worker first
 * sees a registry revision), never per event. `hooks` must already be in spec §5.1 order.
 *
 * @example
 * ```ts
 * const plan = compileChainPlan("pre_inject", snapshot.hooks().filter((h) => h.type === "pre_inject"), 7);
 * ```
 */
export function compileChainPlan(type: HookType, hooks: readonly ResolvedHook[], revision: number): ChainPlan {
  const planned: PlannedHook[] = hooks.map((hook) => Object.freeze({ hook, predicate: compiledConditionOf(hook) }));
  return Object.freeze({ type, revision, hooks: Object.freeze(planned) });
}
