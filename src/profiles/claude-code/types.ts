/**
 * Author types of the `claude-code` profile: `import type { PreToolUseInput, HookOutput } from
 * "vcp-hooks/profiles/claude-code"`. An action receives exactly the JSON a Claude Code hook reads (stdin
 * of a command hook, body of an http hook) and returns exactly the JSON it would answer.
 *
 * @example
 * ```ts
 * import type { PreToolUseInput, PreToolUseOutput } from "vcp-hooks/profiles/claude-code";
 * export const noSudo = (input: PreToolUseInput): PreToolUseOutput =>
 *   String(input.tool_input["command"]).startsWith("sudo ")
 *     ? { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "no sudo" } }
 *     : {};
 * ```
 */

export type HookEventName =
  | "PreToolUse"
  | "PostToolUse"
  | "UserPromptSubmit"
  | "Stop"
  | "SubagentStop"
  | "SessionStart"
  | "SessionEnd"
  | "PreCompact"
  | "Notification"
  | "PermissionRequest";

export type PermissionMode = "default" | "plan" | "acceptEdits" | "bypassPermissions" | "dontAsk" | (string & {});

export interface HookInput {
  session_id: string;
  hook_event_name: HookEventName;
  transcript_path?: string;
  cwd?: string;
  permission_mode?: PermissionMode;
}

export interface PreToolUseInput extends HookInput {
  hook_event_name: "PreToolUse";
  tool_name: string;
  tool_input: Record<string, unknown>;
  tool_use_id?: string;
}

export interface PostToolUseInput extends HookInput {
  hook_event_name: "PostToolUse";
  tool_name: string;
  tool_input: Record<string, unknown>;
  tool_response: unknown;
  tool_use_id?: string;
}

export interface PermissionRequestInput extends HookInput {
  hook_event_name: "PermissionRequest";
  tool_name: string;
  tool_input: Record<string, unknown>;
  permission_suggestions?: unknown[];
}

export interface UserPromptSubmitInput extends HookInput {
  hook_event_name: "UserPromptSubmit";
  prompt: string;
}

export interface StopInput extends HookInput {
  hook_event_name: "Stop";
  stop_hook_active?: boolean;
}

export interface SubagentStopInput extends HookInput {
  hook_event_name: "SubagentStop";
  stop_hook_active?: boolean;
}

export interface SessionStartInput extends HookInput {
  hook_event_name: "SessionStart";
  source: "startup" | "resume" | "clear" | "compact";
}

export interface SessionEndInput extends HookInput {
  hook_event_name: "SessionEnd";
  reason: string;
}

export interface PreCompactInput extends HookInput {
  hook_event_name: "PreCompact";
  trigger: "manual" | "auto";
  custom_instructions?: string;
}

export interface NotificationInput extends HookInput {
  hook_event_name: "Notification";
  message: string;
  notification_type?: string;
}

/** Fields every output may carry. Unknown keys are tolerated. */
export interface HookOutput {
  continue?: boolean;
  stopReason?: string;
  suppressOutput?: boolean;
  systemMessage?: string;
  /** `"block"` on PostToolUse, UserPromptSubmit, Stop, SubagentStop; PreToolUse's deprecated `approve`/`block`. */
  decision?: "block" | "approve";
  reason?: string;
  hookSpecificOutput?: Record<string, unknown>;
}

export type PermissionDecision = "allow" | "deny" | "ask" | "defer";

export interface PreToolUseOutput extends HookOutput {
  hookSpecificOutput?: {
    hookEventName: "PreToolUse";
    permissionDecision?: PermissionDecision;
    permissionDecisionReason?: string;
    /** Replaces the whole `tool_input` (the last hook in plan order that sets it wins). */
    updatedInput?: Record<string, unknown>;
    additionalContext?: string;
  };
}

export interface PostToolUseOutput extends HookOutput {
  hookSpecificOutput?: { hookEventName: "PostToolUse"; additionalContext?: string };
}

export interface PermissionRequestOutput extends HookOutput {
  hookSpecificOutput?: {
    hookEventName: "PermissionRequest";
    decision?: { behavior: "allow" | "deny"; updatedInput?: Record<string, unknown>; message?: string; interrupt?: boolean };
  };
}

export interface UserPromptSubmitOutput extends HookOutput {
  hookSpecificOutput?: { hookEventName: "UserPromptSubmit"; additionalContext?: string };
}

export type StopOutput = HookOutput;
export type SubagentStopOutput = HookOutput;

export interface SessionStartOutput extends HookOutput {
  hookSpecificOutput?: { hookEventName: "SessionStart"; additionalContext?: string };
}

export type SessionEndOutput = HookOutput;
export type PreCompactOutput = HookOutput;
export type NotificationOutput = HookOutput;

export interface HookInputs {
  PreToolUse: PreToolUseInput;
  PostToolUse: PostToolUseInput;
  UserPromptSubmit: UserPromptSubmitInput;
  Stop: StopInput;
  SubagentStop: SubagentStopInput;
  SessionStart: SessionStartInput;
  SessionEnd: SessionEndInput;
  PreCompact: PreCompactInput;
  Notification: NotificationInput;
  PermissionRequest: PermissionRequestInput;
}

export interface HookOutputs {
  PreToolUse: PreToolUseOutput;
  PostToolUse: PostToolUseOutput;
  UserPromptSubmit: UserPromptSubmitOutput;
  Stop: StopOutput;
  SubagentStop: SubagentStopOutput;
  SessionStart: SessionStartOutput;
  SessionEnd: SessionEndOutput;
  PreCompact: PreCompactOutput;
  Notification: NotificationOutput;
  PermissionRequest: PermissionRequestOutput;
}

export type HookAction<E extends HookEventName> = (input: HookInputs[E]) => HookOutputs[E] | undefined | void;
