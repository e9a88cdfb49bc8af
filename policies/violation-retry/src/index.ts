import type { HookInput, HookResult, ViolationEvent } from "vcp-hooks";

/**
 * Spec §9.5 violation_retry_with_strictness. Below MAX_RETRIES: a retry directive as a modified
 * context (strictness +2, capped at 10, and the violated rules to emphasize). At MAX_RETRIES: abort,
 * so the runtime suppresses the output; the audit record travels as an annotation.
 */
export const MAX_RETRIES = 3;
const MAX_STRICTNESS = 10;
/** Strictness assumed when the context has none (the middle of 0–10). */
const DEFAULT_STRICTNESS = 5;

export function violationRetry(input: HookInput<ViolationEvent>): HookResult {
  const event = input.event;
  const ruleIds = event.violated_rules.map((r) => r.id);
  if (event.retry_count >= MAX_RETRIES) {
    return {
      status: "abort",
      reason: `Violation persists after ${MAX_RETRIES} retries; rules: ${ruleIds.join(", ")}`,
      annotations: {
        audit_record: { type: "violation_max_retries", session_id: input.session.id, violated_rules: ruleIds, retry_count: event.retry_count, severity: event.severity },
      },
    };
  }
  const current = input.context["strictness_level"];
  const base = typeof current === "number" && Number.isFinite(current) ? current : DEFAULT_STRICTNESS;
  const strictness = Math.min(base + 2, MAX_STRICTNESS);
  return {
    status: "modify",
    modified_context: { ...input.context, strictness_level: strictness, violated_rules_emphasis: ruleIds },
    annotations: { action: "retry_with_strictness", retry_number: event.retry_count + 1, new_strictness: strictness },
  };
}
