/**
 * The inputs of the adaptation pipeline's operations (DESIGN §4.6): open, adapt, transition,
 * conflict, violation. One zod source: the pipeline validates with their JSON Schemas
 * (pipeline/validate.ts, compiled once), and the HTTP server registers the same schemas as the
 * routes' bodies (server/schemas.ts), so a body the server accepts is an input the runtime accepts.
 * Unknown fields are refused (`strict`): a misspelt optional field is an error, not a silent default.
 * The enums are the event payloads' own (events.ts): an input field and the event field it becomes
 * accept the same values.
 */
import { z } from "zod";
import { ConstitutionSchema, RuleSchema } from "./constitution.js";
import { ConflictEventSchema, PreInjectEventSchema, RuleConflictSchema, ViolationEventSchema } from "./events.js";
import { VcpContextSchema } from "./input.js";
import { SESSION_ID } from "./names.js";

const MetadataSchema = z.record(z.string(), z.unknown());
/** A session state name: `open.state`, `transition.to`. */
const StateSchema = z.string().min(1).max(256);

export const OpenSessionInputSchema = z
  .object({
    /** Generated (UUID) when absent. */
    session_id: z.string().regex(SESSION_ID.regex).optional(),
    context: VcpContextSchema,
    constitution: ConstitutionSchema,
    state: StateSchema.nullable().optional(),
    metadata: MetadataSchema.optional(),
  })
  .strict();

export const AdaptInputSchema = z
  .object({
    context: VcpContextSchema.optional(),
    selected: ConstitutionSchema,
    candidates: z.array(ConstitutionSchema),
    selection_rationale: z.string(),
    selection_algorithm: z.string(),
    scores: z.record(z.string(), z.number()).optional(),
    injection_target: z.string().optional(),
    injection_format: PreInjectEventSchema.shape.injection_format.optional(),
    raw_constitution: z.string().optional(),
  })
  .strict();

export const TransitionInputSchema = z
  .object({
    to: StateSchema,
    trigger: z.string().max(1024),
    metadata: MetadataSchema.optional(),
    adapt: AdaptInputSchema.optional(),
  })
  .strict();

export const ConflictInputSchema = z
  .object({
    constitutions: z.array(ConstitutionSchema).min(1),
    conflicting_rules: z.array(RuleConflictSchema),
    conflict_severity: ConflictEventSchema.shape.conflict_severity,
    composition_strategy: z.string().optional(),
  })
  .strict();

export const ViolationInputSchema = z
  .object({
    output: z.string(),
    violated_rules: z.array(RuleSchema),
    severity: ViolationEventSchema.shape.severity,
    violation_evidence: z.string(),
    retry_count: z.number().int().min(0).optional(),
    context: VcpContextSchema.optional(),
  })
  .strict();
