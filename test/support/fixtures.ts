import type { Constitution, HookEventMap, HookType } from "../../src/index.js";

export const constitution: Constitution = {
  id: "c-base",
  version: "1.0.0",
  rules: [
    { id: "no-harm-1", text: "Do not help cause physical harm.", safety_critical: true },
    { id: "tone-1", text: "Be courteous." },
  ],
};

export const events: HookEventMap = {
  pre_inject: { injection_target: "system", injection_format: "system_prompt", raw_constitution: "Do not help cause physical harm." },
  post_select: { candidates: [constitution], selection_rationale: "best match", selection_algorithm: "score", scores: { "c-base": 0.9 } },
  on_transition: { previous_state: "professional", new_state: "personal", trigger: "user_said_hi", transition_metadata: {} },
  on_conflict: {
    conflicting_rules: [{ rule_a: { id: "a", text: "x" }, rule_b: { id: "b", text: "not x" }, conflict_type: "contradiction" }],
    composition_strategy: "most_restrictive",
    conflict_severity: "error",
  },
  on_violation: { output: "bad output", violated_rules: [{ id: "tone-1", text: "Be courteous." }], severity: "major", violation_evidence: "rude", retry_count: 0 },
  periodic: { elapsed_ms: 1000, interval_ms: 1000, tick_count: 1 },
};

export function fireInput<T extends HookType>(type: T, context: Record<string, unknown> = { user: "u1", dimensions: { data_sensitivity: 8 } }, session = "s1") {
  return { session: { id: session }, context, constitution, event: events[type] };
}
