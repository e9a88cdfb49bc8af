/**
 * Author types of the `openhands` profile (OpenHands agent SDK hooks, `.openhands/hooks.json`): `import
 * type { HookInput, HookOutput } from "vcp-hooks/profiles/openhands"`. An action receives exactly the
 * JSON an OpenHands command hook reads on stdin and returns the JSON it would print.
 *
 * @example
 * ```ts
 * import type { HookInput, HookOutput } from "vcp-hooks/profiles/openhands";
 * export const noSudo = (input: HookInput): HookOutput =>
 *   String(input.tool_input?.["command"] ?? "").startsWith("sudo ") ? { decision: "deny", reason: "no sudo" } : {};
 * ```
 */

export type HookEventName = "PreToolUse" | "PostToolUse" | "UserPromptSubmit" | "SessionStart" | "SessionEnd" | "Stop" | "Notification";

/** One shape for every event; the fields an event does not use are null or absent. */
export interface HookInput {
  event_type: HookEventName;
  tool_name?: string | null;
  tool_input?: Record<string, unknown> | null;
  tool_output?: string | null;
  /** The user's message (UserPromptSubmit) or a notification. */
  message?: string | null;
  session_id?: string | null;
  working_dir?: string | null;
  metadata?: Record<string, unknown>;
}

export interface HookOutput {
  /** `deny` (or `block`) stops the operation: no later hook runs; `allow` / `approve` let it go on. */
  decision?: "allow" | "approve" | "deny" | "block";
  reason?: string;
  /** UserPromptSubmit: added to the user's message. */
  additionalContext?: string;
  /** `false` blocks, like a deny. */
  continue?: boolean;
}
