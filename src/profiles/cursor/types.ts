/**
 * Author types of the `cursor` profile (Cursor agent hooks, `~/.cursor/hooks.json`): `import type {
 * BeforeShellExecutionInput, PermissionOutput } from "vcp-hooks/profiles/cursor"`. An action receives
 * exactly the JSON a Cursor command hook reads on stdin and returns the JSON it would print.
 *
 * @example
 * ```ts
 * import type { BeforeShellExecutionInput, PermissionOutput } from "vcp-hooks/profiles/cursor";
 * export const noSudo = (input: BeforeShellExecutionInput): PermissionOutput =>
 *   input.command.startsWith("sudo ") ? { permission: "deny", agent_message: "no sudo", user_message: "sudo blocked" } : {};
 * ```
 */

export type HookEventName =
  | "beforeShellExecution"
  | "beforeMCPExecution"
  | "beforeReadFile"
  | "preToolUse"
  | "beforeSubmitPrompt"
  | "afterShellExecution"
  | "afterMCPExecution"
  | "afterFileEdit"
  | "postToolUse"
  | "afterAgentResponse"
  | "afterAgentThought"
  | "sessionStart"
  | "sessionEnd"
  | "preCompact"
  | "stop"
  | "subagentStop";

export interface HookInput {
  hook_event_name: HookEventName;
  conversation_id: string;
  generation_id?: string;
  workspace_roots?: string[];
  model?: string;
  cursor_version?: string;
  user_email?: string;
}

export interface BeforeShellExecutionInput extends HookInput {
  command: string;
  cwd?: string;
}
export interface BeforeMCPExecutionInput extends HookInput {
  tool_name: string;
  /** An object, or a JSON string of one (older Cursor versions). */
  tool_input: unknown;
  url?: string;
  command?: string;
}
export interface BeforeReadFileInput extends HookInput {
  file_path: string;
  content?: string;
  attachments?: unknown[];
}
export interface PreToolUseInput extends HookInput {
  tool_name: string;
  tool_input: Record<string, unknown>;
}
export interface BeforeSubmitPromptInput extends HookInput {
  prompt: string;
  attachments?: unknown[];
}
export interface AfterFileEditInput extends HookInput {
  file_path: string;
  edits?: Array<{ old_string: string; new_string: string }>;
}
export interface StopInput extends HookInput {
  status?: "completed" | "aborted" | "error" | (string & {});
  loop_count?: number;
}

/** beforeShellExecution, beforeMCPExecution, beforeReadFile, preToolUse. */
export interface PermissionOutput {
  permission?: "allow" | "deny" | "ask";
  /** Shown to the user. */
  user_message?: string;
  /** Shown to the model. */
  agent_message?: string;
  /** preToolUse only: the tool runs with this input. */
  updated_input?: Record<string, unknown>;
}
export interface BeforeSubmitPromptOutput {
  continue?: boolean;
  user_message?: string;
}
export interface StopOutput {
  /** Sent as the next user message: the agent keeps going. */
  followup_message?: string;
}
export interface ContextOutput {
  additional_context?: string;
}
export type HookOutput = PermissionOutput | BeforeSubmitPromptOutput | StopOutput | ContextOutput;
