import { z } from "zod";
import { AI_MEMORY_EVENTS } from "./events.js";

/**
 * Deployment settings of `profiles.ai-memory` (PROFILES §3.5), besides `strict`.
 *
 * @example
 * ```ts
 * aiMemorySettingsSchema.parse({ required_events: ["pre_store"] }); // ok
 * aiMemorySettingsSchema.parse({ required_events: ["pre_stor"] });  // throws: required_events[0]: not an ai-memory event
 * ```
 */
export const aiMemorySettingsSchema = z.strictObject({
  /** Events that must have an enabled hook: with none, the event is denied 503 ("enforce" mode). */
  required_events: z
    .array(z.string().refine((e) => Object.hasOwn(AI_MEMORY_EVENTS, e), { message: "not an ai-memory event" }))
    .optional(),
  session_ttl_s: z.number().int().positive().optional(),
});
