import { z } from "zod";
import { ConstitutionSchema, RuleSchema } from "./constitution.js";
import type { HookType } from "./hook-type.js";

/** Type-specific event payloads of spec §4.5. Unknown extra fields are kept (`loose`). */
export const PreInjectEventSchema = z
  .object({
    injection_target: z.string(),
    injection_format: z.enum(["system_prompt", "prefix", "suffix", "metadata"]),
    raw_constitution: z.string(),
  })
  .loose();

export const PostSelectEventSchema = z
  .object({
    candidates: z.array(ConstitutionSchema),
    selection_rationale: z.string(),
    selection_algorithm: z.string(),
    scores: z.record(z.string(), z.number()).optional(),
  })
  .loose();

export const TransitionEventSchema = z
  .object({
    previous_state: z.string().nullable(),
    new_state: z.string(),
    trigger: z.string(),
    transition_metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .loose();

export const RuleConflictSchema = z
  .object({
    rule_a: RuleSchema,
    rule_b: RuleSchema,
    conflict_type: z.enum(["contradiction", "ambiguity", "priority_tie"]),
  })
  .loose();

export const ConflictEventSchema = z
  .object({
    conflicting_rules: z.array(RuleConflictSchema),
    composition_strategy: z.string(),
    conflict_severity: z.enum(["warning", "error", "critical"]),
    // Spec §3.4 payload "the conflicting constitutions": a resolution must keep every safety-critical
    // rule they hold (integrity/check.ts keepsSafetyRulesOf).
    constitutions: z.array(ConstitutionSchema).optional(),
  })
  .loose();

export const ViolationEventSchema = z
  .object({
    output: z.string(),
    violated_rules: z.array(RuleSchema),
    severity: z.enum(["minor", "major", "critical"]),
    violation_evidence: z.string(),
    retry_count: z.number().int().min(0),
  })
  .loose();

export const PeriodicEventSchema = z
  .object({
    elapsed_ms: z.number().int().min(0),
    interval_ms: z.number().int().min(1000),
    tick_count: z.number().int().min(0),
  })
  .loose();

export const EVENT_SCHEMAS = {
  pre_inject: PreInjectEventSchema,
  post_select: PostSelectEventSchema,
  on_transition: TransitionEventSchema,
  on_conflict: ConflictEventSchema,
  on_violation: ViolationEventSchema,
  periodic: PeriodicEventSchema,
} as const satisfies Record<HookType, z.ZodType>;

export type PreInjectEvent = z.infer<typeof PreInjectEventSchema>;
export type PostSelectEvent = z.infer<typeof PostSelectEventSchema>;
export type TransitionEvent = z.infer<typeof TransitionEventSchema>;
export type RuleConflict = z.infer<typeof RuleConflictSchema>;
export type ConflictEvent = z.infer<typeof ConflictEventSchema>;
export type ViolationEvent = z.infer<typeof ViolationEventSchema>;
export type PeriodicEvent = z.infer<typeof PeriodicEventSchema>;

/** The event payload for each hook type. */
export interface HookEventMap {
  pre_inject: PreInjectEvent;
  post_select: PostSelectEvent;
  on_transition: TransitionEvent;
  on_conflict: ConflictEvent;
  on_violation: ViolationEvent;
  periodic: PeriodicEvent;
}
export type HookEvent = HookEventMap[HookType];
