import type { HookInput, HookResult, PostSelectEvent } from "vcp-hooks";

/**
 * Spec §9.2 audit_constitution_selection. The sandbox has no audit log to write to: the record leaves
 * as the annotation `audit_record`, which the runtime puts in its audit log and the caller's result
 * (DESIGN §4.3). The context is represented only by its hash, never its values.
 */

/** JSON with object keys sorted at every level, so equal contexts hash equally whatever their key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const obj = value as Record<string, unknown>;
    return `{${Object.keys(obj)
      .sort()
      .filter((k) => obj[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical(obj[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export function auditSelection(input: HookInput<PostSelectEvent>): HookResult {
  const event = input.event;
  const candidates = event.candidates.map((c) => c.id);
  const selectedInCandidates = candidates.includes(input.constitution.id);
  if (!selectedInCandidates) vcp.log("warn", "selected constitution is not among the candidates", { selected: input.constitution.id });
  return {
    status: "continue",
    annotations: {
      audit_record: {
        type: "constitution_selected",
        timestamp_ms: vcp.now(),
        session_id: input.session.id,
        selected: input.constitution.id,
        selected_version: input.constitution.version ?? null,
        selected_in_candidates: selectedInCandidates,
        candidates,
        rationale: event.selection_rationale,
        algorithm: event.selection_algorithm,
        scores: event.scores ?? null,
        context_hash: `sha256:${vcp.sha256(canonical(input.context))}`,
      },
    },
  };
}
