/**
 * Default conflict resolution strategies (spec §3.4: "the default conflict resolution strategy
 * defined in the deployment configuration"; DESIGN §6.4 `conflict_strategy`). They run only when no
 * `on_conflict` hook resolved the conflict (spec §5.2). Pure functions: no clock, no I/O.
 *
 * Rules are identified by `id` across constitutions: the same id in two constitutions is the same
 * rule, and the first occurrence (constitution order, then rule order) is the one kept.
 */
import { keepsSafetyRulesOf } from "../integrity/check.js";
import type { Constitution, Rule } from "../model/constitution.js";
import type { RuleConflict } from "../model/events.js";

const NONE: ReadonlySet<string> = new Set();

export const CONFLICT_STRATEGIES = ["most_restrictive", "highest_priority", "reject"] as const;
export type ConflictStrategy = (typeof CONFLICT_STRATEGIES)[number];

export type StrategyResult =
  | { ok: true; constitution: Constitution; dropped: string[] }
  | { ok: false; reason: string };

interface Located {
  rule: Rule;
  /** Index of the first constitution that holds the rule. */
  origin: number;
}

/** Union of all rules in constitution order, deduplicated by id (first occurrence kept). */
function unionOfRules(constitutions: readonly Constitution[]): Map<string, Located> {
  const union = new Map<string, Located>();
  constitutions.forEach((constitution, origin) => {
    for (const rule of constitution.rules) {
      if (!union.has(rule.id)) union.set(rule.id, { rule, origin });
    }
  });
  return union;
}

/** The id of a composition: `composed:<id>+<id>…`, stable for the same inputs in the same order. */
export function compositionId(constitutions: readonly Constitution[]): string {
  return `composed:${constitutions.map((c) => c.id).join("+")}`;
}

function composed(constitutions: readonly Constitution[], rules: Rule[], strategy: string): Constitution {
  // A composition is new content: it carries no signatures of its parts (they would not verify).
  return {
    id: compositionId(constitutions),
    rules,
    composed_from: constitutions.map((c) => c.id),
    composition_strategy: strategy,
  };
}

/**
 * What `on_conflict` hooks receive as `constitution` (the composition context of spec §3.4): every
 * rule of every constitution that is not part of any conflict, deduplicated by id. A hook resolves
 * by merging the winners into it (spec §9.4 `merge_with_resolved_rules(input.constitution, …)`) and
 * returning `modify` with the result.
 *
 * @example
 * ```ts
 * compositionBase([{ id: "a", rules: [r1, r2] }, { id: "b", rules: [r3] }], [{ rule_a: r2, rule_b: r3, conflict_type: "contradiction" }]);
 * // → { id: "composed:a+b", rules: [r1], composed_from: ["a", "b"], composition_strategy: "base" }
 * ```
 */
export function compositionBase(constitutions: readonly Constitution[], conflicts: readonly RuleConflict[]): Constitution {
  const involved = new Set<string>();
  for (const conflict of conflicts) {
    involved.add(conflict.rule_a.id);
    involved.add(conflict.rule_b.id);
  }
  const rules = [...unionOfRules(constitutions).values()].filter((l) => !involved.has(l.rule.id)).map((l) => l.rule);
  return composed(constitutions, rules, "base");
}

/**
 * `most_restrictive`: keep every constraint that can coexist.
 *
 * 1. Start from the union of all rules (constitution order, deduplicated by id).
 * 2. `ambiguity` and `priority_tie` conflicts drop nothing: both rules can be honoured together,
 *    and keeping both is the more restrictive choice.
 * 3. A `contradiction` cannot keep both. The winner is the safety-critical rule (flagged, or listed
 *    in the deployment's `safetyIds`) when exactly one is safety-critical; otherwise the rule whose constitution is listed first; from the same
 *    constitution (or when a rule is in none), `rule_a`. The loser is dropped.
 * 4. A contradiction between two safety-critical rules cannot be resolved without dropping a
 *    safety-critical rule: the strategy fails (the pipeline then falls back to last known-good).
 * 5. A rule that loses any contradiction is dropped, even if it won another.
 *
 * Rules are matched by id, and `safety_critical` is read from the constitution's copy of a rule
 * (the conflict's copy only identifies it). A conflict naming a rule that no constitution holds is
 * ignored: it drops nothing.
 *
 * @example
 * ```ts
 * mostRestrictive([{ id: "a", rules: [share] }, { id: "b", rules: [{ ...noShare, safety_critical: true }] }],
 *   [{ rule_a: share, rule_b: noShare, conflict_type: "contradiction" }]);
 * // → { ok: true, constitution: { id: "composed:a+b", rules: [noShare…], … }, dropped: [share.id] }
 * ```
 */
export function mostRestrictive(constitutions: readonly Constitution[], conflicts: readonly RuleConflict[], safetyIds: ReadonlySet<string> = NONE): StrategyResult {
  const union = unionOfRules(constitutions);
  const isCritical = (rule: Rule): boolean => rule.safety_critical === true || safetyIds.has(rule.id);
  const dropped = new Set<string>();
  for (const conflict of conflicts) {
    if (conflict.conflict_type !== "contradiction") continue;
    const a = union.get(conflict.rule_a.id);
    const b = union.get(conflict.rule_b.id);
    // A conflict naming a rule that no constitution holds has nothing to decide.
    if (a === undefined || b === undefined) continue;
    const aCritical = isCritical(a.rule);
    const bCritical = isCritical(b.rule);
    if (aCritical && bCritical) {
      return {
        ok: false,
        reason: `most_restrictive: safety-critical rules '${conflict.rule_a.id}' and '${conflict.rule_b.id}' contradict each other; neither may be dropped`,
      };
    }
    const aWins = aCritical !== bCritical ? aCritical : a.origin <= b.origin;
    dropped.add(aWins ? conflict.rule_b.id : conflict.rule_a.id);
  }
  const rules = [...union.values()].filter((l) => !dropped.has(l.rule.id)).map((l) => l.rule);
  return { ok: true, constitution: composed(constitutions, rules, "most_restrictive"), dropped: [...dropped] };
}

/** The numeric `priority` field of a constitution, or undefined when absent or not a finite number. */
function priorityOf(constitution: Constitution): number | undefined {
  const raw = (constitution as Record<string, unknown>)["priority"];
  return typeof raw === "number" && Number.isFinite(raw) ? raw : undefined;
}

/**
 * `highest_priority`: the constitution with the highest numeric `priority` field wins whole (its
 * signatures kept, since it is unchanged). Constitutions without a numeric `priority` rank below
 * every one that has it; ties, and the case where none has one, go to the constitution listed first.
 * The winner must itself hold every safety-critical rule (flagged, or listed in `safetyIds`) of the
 * others, byte-identical; otherwise the strategy fails rather than drop one (spec §8.2.4).
 *
 * @example
 * ```ts
 * highestPriority([{ id: "a", priority: 1, rules }, { id: "b", priority: 5, rules }]); // → { ok: true, constitution: { id: "b", … }, dropped: […] }
 * ```
 */
export function highestPriority(constitutions: readonly Constitution[], safetyIds: ReadonlySet<string> = NONE): StrategyResult {
  let best: Constitution | undefined;
  let bestPriority = Number.NEGATIVE_INFINITY;
  for (const constitution of constitutions) {
    const priority = priorityOf(constitution) ?? Number.NEGATIVE_INFINITY;
    if (best === undefined || priority > bestPriority) {
      best = constitution;
      bestPriority = priority;
    }
  }
  if (best === undefined) return { ok: false, reason: "highest_priority: no constitution to choose from" };
  const unsafe = keepsSafetyRulesOf(constitutions, best, safetyIds);
  if (unsafe !== null) return { ok: false, reason: `highest_priority: constitution ${best.id} wins, but it ${unsafe}; no safety-critical rule may be dropped` };
  const dropped = constitutions.filter((c) => c !== best).flatMap((c) => c.rules.map((r) => r.id)).filter((id) => !best.rules.some((r) => r.id === id));
  return { ok: true, constitution: best, dropped: [...new Set(dropped)] };
}

/**
 * Apply the configured default strategy. `reject` always fails: the deployment wants no automatic resolution.
 *
 * @example
 * ```ts
 * const verdict = applyConflictStrategy(config.conflict_strategy, constitutions, conflicts);
 * if (!verdict.ok) fallBackToLastKnownGood(verdict.reason);
 * ```
 */
export function applyConflictStrategy(
  strategy: ConflictStrategy,
  constitutions: readonly Constitution[],
  conflicts: readonly RuleConflict[],
  safetyIds: ReadonlySet<string> = NONE,
): StrategyResult {
  switch (strategy) {
    case "most_restrictive":
      return mostRestrictive(constitutions, conflicts, safetyIds);
    case "highest_priority":
      return highestPriority(constitutions, safetyIds);
    case "reject":
      return { ok: false, reason: "reject: the deployment's conflict strategy refuses to resolve conflicts automatically" };
  }
}
