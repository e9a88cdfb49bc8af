import { z } from "zod";
import { ConstitutionSchema, type Constitution } from "./constitution.js";
import type { VcpContext } from "./input.js";

/**
 * A duration as the runtime records it: milliseconds to the microsecond (3 decimals). Clock
 * differences carry float noise in their last digits (`0.0007739999998648273`); the microsecond is the
 * precision the clocks really have, and the short form is what every record, reply and decision then
 * carries, parses and hashes.
 *
 * @example
 * ```ts
 * recordedMs(12.3456789); // 12.346
 * ```
 */
export function recordedMs(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

export const RESULT_STATUSES = ["continue", "abort", "modify"] as const;
export type ResultStatus = (typeof RESULT_STATUSES)[number];

/**
 * What a hook action returns (spec §4.3). `duration_ms` is set by the runtime; a value from the
 * guest is ignored. Unknown keys make a result invalid, so typos do not pass silently.
 */
export interface HookResult {
  status: ResultStatus;
  modified_context?: VcpContext | null;
  modified_constitution?: Constitution | null;
  reason?: string;
  annotations?: Record<string, unknown>;
  duration_ms?: number;
}

export const HookResultSchema = z
  .object({
    status: z.enum(RESULT_STATUSES),
    modified_context: z.record(z.string(), z.unknown()).nullable().optional(),
    modified_constitution: ConstitutionSchema.nullable().optional(),
    reason: z.string().max(4096).optional(),
    annotations: z.record(z.string(), z.unknown()).optional(),
    duration_ms: z.number().optional(),
  })
  .strict()
  .refine((r) => r.status !== "abort" || (typeof r.reason === "string" && r.reason.length > 0), {
    message: "reason is required when status is 'abort' (spec §4.3)",
    path: ["reason"],
  });

/**
 * Per-hook outcome (DESIGN §2). Every non-`ok` outcome means the runtime treated the hook as
 * `continue` unless it is `fail_closed`; the outcome keeps *why* visible.
 *
 * Two outcomes come from the optional whole-chain deadline (DESIGN §4.3), never from the hook alone:
 * - `skipped_deadline`: the hook never ran, because its share of the chain deadline was spent
 *   before its turn;
 * - `deadline_exceeded`: the hook ran with a budget the chain deadline had cut below its own
 *   `timeout_ms`, and was stopped there. It did not exceed its `timeout_ms`, so it is not a timeout
 *   in the sense of spec §5.4.
 * Event profiles with class deadlines (ai-memory, `EventProfile.hookBudgetMs`) add
 * `deadline_exhausted`: the event class's chain deadline was spent before the hook's turn, so it never
 * ran; a `fail_closed` hook then contributes the profile's answer for it (ai-memory: deny 504).
 */
export const OUTCOMES = [
  "ok",
  "skipped_disabled",
  "skipped_predicate",
  "skipped_deadline",
  "skipped_matcher",
  "deduplicated",
  "deadline_exhausted",
  "timeout",
  "deadline_exceeded",
  "error",
  "invalid_result",
  "capability_denied",
  "integrity_rejected",
  "crashed",
  // The command lane (PROFILES §6): an exec hook's script exited with a code its profile's table reads
  // as an error (not a decision such as Gemini's exit 2 = deny), or a signal ended it (not our timeout).
  "exec_nonzero",
  "exec_signal",
] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** What a hook's output (or a failure) amounts to for the chain of an event profile; the executor records it. */
export type Verdict = "allow" | "block" | "modify" | "ask" | "observe";

/**
 * Outcomes that count as a failure of the hook itself: spec §7.3 cascades (and cascade disabling),
 * §7.1.5 error counters, the §5.4.4 timeout counter. Time other hooks spent is never one of them.
 */
export const FAILURE_OUTCOMES: ReadonlySet<Outcome> = new Set<Outcome>(["timeout", "error", "invalid_result", "crashed", "exec_nonzero", "exec_signal"]);

/** Outcomes of hooks whose action never ran: not calls, not "executed" for spec §7.3 cascades. */
export const SKIPPED_OUTCOMES: ReadonlySet<Outcome> = new Set<Outcome>([
  "skipped_disabled",
  "skipped_predicate",
  "skipped_deadline",
  // Event profiles (PROFILES §8.6): the definition's matcher did not match, or an identical one ran.
  "skipped_matcher",
  "deduplicated",
  // Event profiles with class deadlines (ai-memory, PROFILES §3.5): the chain deadline was spent before its turn.
  "deadline_exhausted",
]);

/** {@link SKIPPED_OUTCOMES} as a list (for `includes` on plain data). */
export const SKIPPED_OUTCOME_LIST: readonly Outcome[] = Object.freeze([...SKIPPED_OUTCOMES]);

/**
 * Outcomes where the chain deadline left the hook without a verdict. Not failures (above), but a
 * `fail_closed` hook aborts the chain on them: no verdict from a fail-closed hook means no go.
 */
export const DEADLINE_OUTCOMES: ReadonlySet<Outcome> = new Set<Outcome>(["skipped_deadline", "deadline_exceeded", "deadline_exhausted"]);
