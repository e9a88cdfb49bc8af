/**
 * Author types of the `goose` profile (goose plugin hooks, Open Plugins hooks specification): `import type
 * { HookInput, HookOutput } from "vcp-hooks/profiles/goose"`. An action receives exactly the JSON a goose
 * command hook reads on stdin and returns the JSON it would print.
 *
 * @example
 * ```ts
 * import type { HookInput, HookOutput } from "vcp-hooks/profiles/goose";
 * export const noSudo = (input: HookInput): HookOutput =>
 *   String(input.tool_input?.["command"] ?? "").startsWith("sudo ") ? { decision: "block", reason: "no sudo" } : {};
 * ```
 */

export type HookEventName =
  | "SessionStart"
  | "SessionEnd"
  | "Stop"
  | "UserPromptSubmit"
  | "PreToolUse"
  | "PreToolUseResult"
  | "PostToolUse"
  | "PostToolUseFailure"
  | "BeforeReadFile"
  | "AfterFileEdit"
  | "BeforeShellExecution"
  | "AfterShellExecution";

/** One shape for every event; a field is present only where it applies. */
export interface HookInput {
  event: HookEventName;
  session_id: string;
  /** What a rule's matcher is tested against: the tool name, the prompt, the file path, the command. */
  matcher_context?: string;
  /** Namespaced (`developer__shell`, `developer__write`, `developer__edit` …). */
  tool_name?: string;
  tool_input?: Record<string, unknown>;
  message?: string;
  last_assistant_message?: string;
  working_dir?: string;
  tool_call_id?: string;
  /** PreToolUseResult: how the PreToolUse chain ended. */
  decision?: "allow" | "deny";
  policy_evaluated?: boolean;
  blocked_by?: string;
  reason?: string;
  cause?: "policy_denial" | "hook_failure";
}

/** PreToolUse and Stop read `decision`; goose ignores every other event's answer. */
export interface HookOutput {
  decision?: "allow" | "block";
  reason?: string;
}
