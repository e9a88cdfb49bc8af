import { z } from "zod";

/**
 * Deployment settings of `profiles.amplifier` (PROFILES §8.9), besides `strict`. Unknown keys are
 * refused so a misspelt limit is not silently the default.
 *
 * @example
 * ```ts
 * amplifierSettingsSchema.parse({ injection_size_limit: 4096 }); // ok
 * amplifierSettingsSchema.parse({ injection_size_limmit: 4096 }); // throws: unknown field
 * ```
 */
export const amplifierSettingsSchema = z.strictObject({
  /** Characters per injection; an injection over it is refused with INJECTION_TOO_LARGE. Default 10 240. */
  injection_size_limit: z.number().int().positive().optional(),
  /** Tokens (characters / 4) per turn; crossing it is a warning only. Default 1 000. */
  injection_budget_per_turn: z.number().int().positive().optional(),
  session_ttl_s: z.number().int().positive().optional(),
});
