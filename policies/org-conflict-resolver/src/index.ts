import type { ConflictEvent, Constitution, HookInput, HookResult, Rule, RuleConflict } from "vcp-hooks";
import { ORG_POLICY } from "./org-policy.js";

/**
 * Spec §9.4 org_policy_conflict_resolver. For each conflict the org policy picks a winner (a
 * safety-critical rule, else the rule with the stronger id prefix); the loser is dropped from the
 * constitution. Rules that stay are kept as the very objects received, so safety-critical rules leave
 * byte-identical (DESIGN §4.5), and `signatures` is passed through untouched. One unresolvable
 * conflict aborts the composition (the runtime falls back to the last known-good constitution) with
 * an escalation record as annotation — the sandbox has no queue to put it on.
 */
interface Resolution {
  winner: string;
  loser: string;
  by: string;
}

function rank(rule: Rule): number {
  const i = ORG_POLICY.precedence.findIndex((prefix) => rule.id.startsWith(prefix));
  return i === -1 ? ORG_POLICY.precedence.length : i;
}

/** The winning rule and why, or undefined when the org policy cannot decide. */
function decide(conflict: RuleConflict, safetyCritical: ReadonlySet<string>): { winner: Rule; loser: Rule; by: string } | undefined {
  const { rule_a: a, rule_b: b } = conflict;
  const aSafe = a.safety_critical === true || safetyCritical.has(a.id);
  const bSafe = b.safety_critical === true || safetyCritical.has(b.id);
  if (ORG_POLICY.safetyCriticalWins && aSafe !== bSafe) return aSafe ? { winner: a, loser: b, by: "safety_critical" } : { winner: b, loser: a, by: "safety_critical" };
  if (aSafe && bSafe) return undefined; // never drop a safety-critical rule on our own authority
  const ra = rank(a);
  const rb = rank(b);
  if (ra === rb) return undefined;
  const [winner, loser] = ra < rb ? [a, b] : [b, a];
  return { winner, loser, by: `precedence:${ORG_POLICY.precedence[Math.min(ra, rb)]}` };
}

export function resolveConflicts(input: HookInput<ConflictEvent>): HookResult {
  const event = input.event;
  if (event.conflicting_rules.length === 0) return { status: "continue", annotations: { conflicts_resolved: 0 } };
  const constitution = input.constitution;
  const safetyCritical = new Set(constitution.rules.filter((r) => r.safety_critical === true).map((r) => r.id));
  const resolutions: Resolution[] = [];
  const winners: Rule[] = [];
  const losers = new Set<string>();
  for (const conflict of event.conflicting_rules) {
    const decision = decide(conflict, safetyCritical);
    if (decision === undefined) {
      const a = conflict.rule_a.id;
      const b = conflict.rule_b.id;
      return {
        status: "abort",
        reason: `Unresolvable conflict between ${a} and ${b}; escalated to governance`,
        annotations: {
          escalation: { session_id: input.session.id, constitution: constitution.id, rule_a: a, rule_b: b, conflict_type: conflict.conflict_type, severity: event.conflict_severity },
        },
      };
    }
    resolutions.push({ winner: decision.winner.id, loser: decision.loser.id, by: decision.by });
    winners.push(decision.winner);
    losers.add(decision.loser.id);
  }
  // A rule that wins one conflict and loses another is contradictory policy: escalate.
  const both = winners.find((w) => losers.has(w.id));
  if (both !== undefined) {
    return { status: "abort", reason: `Rule ${both.id} both wins and loses conflicts; escalated to governance`, annotations: { resolutions } };
  }
  const present = new Set(constitution.rules.map((r) => r.id));
  const rules: Rule[] = constitution.rules.filter((r) => !losers.has(r.id));
  for (const w of winners) {
    if (!present.has(w.id) && !rules.some((r) => r.id === w.id)) rules.push(w);
  }
  const merged: Constitution = { ...constitution, rules };
  return {
    status: "modify",
    modified_constitution: merged,
    annotations: { conflicts_resolved: resolutions.length, resolutions },
  };
}
