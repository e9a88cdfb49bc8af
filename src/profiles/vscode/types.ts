/**
 * Author types of the `vscode` profile (VS Code agent hooks): `import type { PreToolUseInput,
 * PreToolUseOutput } from "vcp-hooks/profiles/vscode"`. An action receives exactly the JSON a VS Code
 * command hook reads on stdin and returns the JSON it would print. The eight events of the VS Code hooks
 * reference (code.visualstudio.com/docs/agents/reference/hooks-reference).
 *
 * @example
 * ```ts
 * import type { PreToolUseInput, PreToolUseOutput } from "vcp-hooks/profiles/vscode";
 * export const readOnly = (input: PreToolUseInput): PreToolUseOutput =>
 *   input.tool_name === "editFiles"
 *     ? { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "read-only session" } }
 *     : {};
 * ```
 */

export type HookEventName = "SessionStart" | "UserPromptSubmit" | "PreToolUse" | "PostToolUse" | "PreCompact" | "SubagentStart" | "SubagentStop" | "Stop";

/** Common input fields. VS Code writes `sessionId` and `hookEventName`; the Claude Code spellings are accepted too. */
export interface HookInput {
  timestamp?: string;
  cwd?: string;
  sessionId?: string;
  session_id?: string;
  hookEventName?: HookEventName;
  hook_event_name?: HookEventName;
  transcript_path?: string;
}

export interface PreToolUseInput extends HookInput {
  tool_name: string;
  tool_input: Record<string, unknown>;
  tool_use_id?: string;
}
export interface PostToolUseInput extends PreToolUseInput {
  tool_response?: unknown;
}
export interface SessionStartInput extends HookInput {
  source?: string;
}
export interface UserPromptSubmitInput extends HookInput {
  prompt: string;
}
export interface PreCompactInput extends HookInput {
  trigger?: string;
}
export interface SubagentStartInput extends HookInput {
  agent_id?: string;
  agent_type?: string;
}
export interface SubagentStopInput extends SubagentStartInput {
  stop_hook_active?: boolean;
}
export interface StopInput extends HookInput {
  stop_hook_active?: boolean;
}

/** The common output every event reads. */
export interface CommonOutput {
  continue?: boolean;
  stopReason?: string;
  systemMessage?: string;
}

export interface PreToolUseOutput extends CommonOutput {
  hookSpecificOutput?: {
    hookEventName: "PreToolUse";
    /** When several hooks answer, the most restrictive wins: deny > ask > allow. */
    permissionDecision?: "allow" | "deny" | "ask";
    permissionDecisionReason?: string;
    /**
     * Checked against the tool's input schema (VS Code's built-in tools: profiles/vscode/tool-schemas.ts)
     * before it is used: keep the fields of `tool_input` (`{ ...input.tool_input, command }`).
     */
    updatedInput?: Record<string, unknown>;
    additionalContext?: string;
  };
}
export interface PostToolUseOutput extends CommonOutput {
  decision?: "block";
  reason?: string;
  hookSpecificOutput?: { hookEventName: "PostToolUse"; additionalContext?: string };
}
export interface StopOutput extends CommonOutput {
  /** `block` with a reason: the agent keeps working with the reason as its next instruction. */
  decision?: "block";
  reason?: string;
}
export type SubagentStopOutput = StopOutput;
export interface SessionStartOutput extends CommonOutput {
  hookSpecificOutput?: { hookEventName: "SessionStart"; additionalContext?: string };
}
export interface SubagentStartOutput extends CommonOutput {
  hookSpecificOutput?: { hookEventName: "SubagentStart"; additionalContext?: string };
}
export type UserPromptSubmitOutput = CommonOutput;
export type PreCompactOutput = CommonOutput;

export type HookOutput = PreToolUseOutput | PostToolUseOutput | StopOutput | SessionStartOutput | SubagentStartOutput | CommonOutput;
