import type { HookInput, HookResult, PeriodicEvent, VcpContext } from "vcp-hooks";

/**
 * Spec §9.6 context_staleness_check. The sandbox cannot reach the signal sources, so "re-evaluate"
 * means what can be decided from the context itself: stamp it with vcp.now() and reset the volatile
 * dimensions (signals that expire, listed below) to "unknown" so the adaptation layer re-detects
 * them. A periodic `modify` triggers that re-evaluation (spec §3.6). The audit record travels as an
 * annotation.
 */
export const STALENESS_THRESHOLD_MS = 300_000; // 5 minutes

/** Dimensions that describe the moment, not the person: stale after the threshold. */
const VOLATILE_DIMENSIONS: readonly string[] = ["presence", "activity", "location", "attention", "audience"];

export function stalenessCheck(input: HookInput<PeriodicEvent>): HookResult {
  const now = vcp.now();
  const last = input.context["last_evaluated_at_ms"];
  // Never evaluated counts as stale.
  const ageMs = typeof last === "number" && Number.isFinite(last) ? now - last : Number.POSITIVE_INFINITY;
  if (ageMs <= STALENESS_THRESHOLD_MS) return { status: "continue" };

  const dimensions = input.context["dimensions"];
  const changed: string[] = [];
  const fresh: VcpContext = { ...input.context, last_evaluated_at_ms: now };
  if (dimensions !== null && typeof dimensions === "object" && !Array.isArray(dimensions)) {
    const next: Record<string, unknown> = { ...(dimensions as Record<string, unknown>) };
    for (const key of VOLATILE_DIMENSIONS) {
      if (key in next && next[key] !== "unknown") {
        next[key] = "unknown";
        changed.push(key);
      }
    }
    fresh["dimensions"] = next;
  }
  const staleness = Number.isFinite(ageMs) ? ageMs : null;
  return {
    status: "modify",
    modified_context: fresh,
    annotations: {
      staleness_ms: staleness,
      changed_dimensions: changed,
      audit_record: { type: "context_refreshed", session_id: input.session.id, stale_age_ms: staleness, changed_dimensions: changed, tick_count: input.event.tick_count },
    },
  };
}
