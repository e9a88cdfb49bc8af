import { z } from "zod";

/** One rule of a constitution (DESIGN §4.5). Extra fields are kept: rules are operator data. */
export const RuleSchema = z
  .object({
    id: z.string().min(1),
    text: z.string(),
    safety_critical: z.boolean().optional(),
  })
  .loose();
export type Rule = z.infer<typeof RuleSchema>;

/** One link of a constitution's signature chain (DESIGN §4.5). */
export const SignatureLinkSchema = z
  .object({
    key_id: z.string().optional(),
    alg: z.string().optional(),
    sig: z.string().optional(),
    digest: z.string().optional(),
    parent_digest: z.string().optional(),
  })
  .loose();
export type SignatureLink = z.infer<typeof SignatureLinkSchema>;

/** A constitution: `{ id, version, rules, signatures? }`; other fields are kept as given. */
export const ConstitutionSchema = z
  .object({
    id: z.string().min(1),
    version: z.string().optional(),
    rules: z.array(RuleSchema),
    signatures: z.array(SignatureLinkSchema).optional(),
  })
  .loose();
export type Constitution = z.infer<typeof ConstitutionSchema>;
