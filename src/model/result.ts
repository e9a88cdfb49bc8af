import { z } from "zod";
import { ConstitutionSchema, type Constitution } from "./constitution.js";
import type { VcpContext } from "./input.js";

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
 */
export const OUTCOMES = [
  "ok",
  "skipped_disabled",
  "skipped_predicate",
  "timeout",
  "error",
  "invalid_result",
  "capability_denied",
  "integrity_rejected",
  "crashed",
] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** Outcomes that count as a hook failure: spec §7.3 cascades, §7.4 fail-closed, error counters. */
export const FAILURE_OUTCOMES: ReadonlySet<Outcome> = new Set<Outcome>(["timeout", "error", "invalid_result", "crashed"]);
