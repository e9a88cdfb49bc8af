import { z } from "zod";

/** Deployment settings of `profiles.repo-yaml`, besides `strict` (the profile has no strict fixes). */
export const repoYamlSettingsSchema = z.strictObject({
  session_ttl_s: z.number().int().positive().optional(),
});
