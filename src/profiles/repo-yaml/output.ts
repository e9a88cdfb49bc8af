import { z } from "zod";
import type { Decoded, NativeObject } from "../types.js";
import { describeIssues } from "../../model/zod-errors.js";

const STAGE = z.enum(["understand", "plan", "act", "review"]);

/**
 * A handler's `HookResult` (spec/related/repo-local-yaml-hooks.md §4.2). Strict: a misspelt field is
 * refused rather than silently ignored. `follow_up_actions[]` keep extra keys (the document's own
 * example writes `{ kind: "open_file", path }` beside the typed `payload`).
 */
export const RepoYamlOutput = z.strictObject({
  logs: z.array(z.strictObject({ level: z.enum(["debug", "info", "warn", "error"]), message: z.string() })).optional(),
  messages_to_user: z.array(z.string()).optional(),
  suggested_abilities: z.array(z.strictObject({ id: z.string(), reason: z.string(), confidence: z.number().optional() })).optional(),
  suggested_documents: z.array(z.strictObject({ path: z.string(), reason: z.string(), stage: STAGE.optional() })).optional(),
  new_intent: z
    .strictObject({
      scope: z.string().optional(),
      topic: z.string().optional(),
      stage: STAGE.optional(),
      intent: z.string(),
      signals: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
  follow_up_actions: z
    .array(z.looseObject({ kind: z.enum(["open_file", "run_command", "create_task"]), payload: z.record(z.string(), z.unknown()).optional() }))
    .optional(),
  usage_recorded: z.boolean().optional(),
  error: z.string().optional(),
});
export type RepoYamlHookResult = z.infer<typeof RepoYamlOutput>;

/** The error value by which a `blocking` hook blocks a PreAbilityCall. */
export const BLOCKED_BY_POLICY = "blocked_by_policy";

/**
 * Decode what a repo-yaml action returned. `undefined`/`null` is an empty result (nothing to say).
 *
 * @example
 * ```ts
 * decodeRepoYamlOutput({ messages_to_user: ["hi"] });  // ok
 * decodeRepoYamlOutput({ message_to_user: ["hi"] });   // error: "(root): unknown field(s): message_to_user"
 * ```
 */
export function decodeRepoYamlOutput(raw: unknown): Decoded<NativeObject> {
  if (raw === undefined || raw === null) return { ok: true, value: {} };
  const parsed = RepoYamlOutput.safeParse(raw);
  if (parsed.success) return { ok: true, value: parsed.data as NativeObject };
  return { ok: false, error: describeIssues(parsed.error).map((i) => `${i.field}: ${i.rule}`).join("; ") };
}
