/**
 * Author types of the `codex` profile: `import type { PreToolUseInput, PreToolUseOutput } from
 * "vcp-hooks/profiles/codex"`. An action receives exactly the JSON a Codex command hook reads on stdin and
 * returns the JSON it would print. The 12 events of Codex 0.171.0 (the command input/output JSON schemas
 * bundled in its binary, see events.ts).
 *
 * What an action may return is a little wider than what Codex itself accepts: `permissionDecision: "ask"`
 * and a bare `"allow"` on PreToolUse are taken (a policy written for Claude Code runs unchanged) and the
 * answer is translated into what Codex accepts (fold.ts): an `ask` becomes a deny, a bare allow no answer.
 *
 * @example
 * ```ts
 * import type { PreToolUseInput, PreToolUseOutput } from "vcp-hooks/profiles/codex";
 * export const noSudo = (input: PreToolUseInput): PreToolUseOutput =>
 *   String(input.tool_input["command"]).startsWith("sudo ")
 *     ? { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "no sudo" } }
 *     : {};
 * ```
 */

/** A value of an open set: the known ones are listed, any other string is accepted. */
type Open<T extends string> = T | (string & {});

export type HookEventName =
  | "PreToolUse"
  | "PermissionRequest"
  | "PostToolUse"
  | "PreCompact"
  | "PostCompact"
  | "SessionStart"
  | "SessionEnd"
  | "UserPromptSubmit"
  | "SubagentStart"
  | "SubagentStop"
  | "Stop"
  | "Interrupt";

export type PermissionMode = Open<"default" | "acceptEdits" | "plan" | "dontAsk" | "bypassPermissions">;

export interface HookInput {
  session_id: string;
  hook_event_name: HookEventName;
  cwd?: string;
  transcript_path?: string | null;
  model?: string;
  permission_mode?: PermissionMode;
  /** The turn the event belongs to (absent on SessionStart, SessionEnd). */
  turn_id?: string;
  /** Present when the event fires inside a subagent. */
  agent_id?: string;
  agent_type?: string;
}

interface ToolInput extends HookInput {
  /** `Bash` for the shell (and unified exec, network approvals), `apply_patch`, `mcp__<server>__<tool>` … */
  tool_name: string;
  /** The shell: `{ command }`; MCP tools: their arguments. */
  tool_input: Record<string, unknown>;
  tool_use_id?: string;
}

export interface PreToolUseInput extends ToolInput {
  hook_event_name: "PreToolUse";
}
export interface PermissionRequestInput extends ToolInput {
  hook_event_name: "PermissionRequest";
}
export interface PostToolUseInput extends ToolInput {
  hook_event_name: "PostToolUse";
  tool_response: unknown;
}
export interface PreCompactInput extends HookInput {
  hook_event_name: "PreCompact";
  trigger: "manual" | "auto";
}
export interface PostCompactInput extends HookInput {
  hook_event_name: "PostCompact";
  trigger: "manual" | "auto";
}
export interface SessionStartInput extends HookInput {
  hook_event_name: "SessionStart";
  source: Open<"startup" | "resume" | "clear" | "compact" | "fork">;
}
export interface SessionEndInput extends HookInput {
  hook_event_name: "SessionEnd";
  reason: Open<"other">;
}
export interface UserPromptSubmitInput extends HookInput {
  hook_event_name: "UserPromptSubmit";
  prompt: string;
}
export interface SubagentStartInput extends HookInput {
  hook_event_name: "SubagentStart";
  agent_id: string;
  agent_type: string;
}
export interface SubagentStopInput extends HookInput {
  hook_event_name: "SubagentStop";
  agent_id: string;
  agent_type: string;
  agent_transcript_path?: string | null;
  last_assistant_message?: string | null;
  stop_hook_active?: boolean;
}
export interface StopInput extends HookInput {
  hook_event_name: "Stop";
  last_assistant_message?: string | null;
  stop_hook_active?: boolean;
}
export interface InterruptInput extends HookInput {
  hook_event_name: "Interrupt";
}

/** Fields every event but Interrupt and SessionEnd reads. */
export interface UniversalOutput {
  continue?: boolean;
  stopReason?: string;
  suppressOutput?: boolean;
  systemMessage?: string;
}

export interface PreToolUseOutput {
  systemMessage?: string;
  /** Deprecated form: `block` with `reason` denies. */
  decision?: "approve" | "block";
  reason?: string;
  hookSpecificOutput?: {
    hookEventName: "PreToolUse";
    /** `ask` is taken and answered as a deny (Codex hooks cannot ask); `allow` matters only with `updatedInput`. */
    permissionDecision?: "allow" | "deny" | "ask";
    permissionDecisionReason?: string;
    /** With `permissionDecision: "allow"`: the tool runs with this input. */
    updatedInput?: Record<string, unknown>;
    additionalContext?: string;
  };
}

export interface PermissionRequestOutput {
  systemMessage?: string;
  hookSpecificOutput?: {
    hookEventName: "PermissionRequest";
    decision?: { behavior: "allow" | "deny"; message?: string };
  };
}

export interface PostToolUseOutput extends UniversalOutput {
  decision?: "block";
  reason?: string;
  hookSpecificOutput?: { hookEventName: "PostToolUse"; additionalContext?: string; updatedMCPToolOutput?: unknown };
}

export interface UserPromptSubmitOutput extends UniversalOutput {
  decision?: "block";
  reason?: string;
  hookSpecificOutput?: { hookEventName: "UserPromptSubmit"; additionalContext?: string };
}

export interface StopOutput extends UniversalOutput {
  /** `block` with a reason: Codex goes on with the reason as the next prompt. */
  decision?: "block";
  reason?: string;
}
export type SubagentStopOutput = StopOutput;

export interface SessionStartOutput extends UniversalOutput {
  hookSpecificOutput?: { hookEventName: "SessionStart"; additionalContext?: string };
}
export interface SubagentStartOutput extends UniversalOutput {
  hookSpecificOutput?: { hookEventName: "SubagentStart"; additionalContext?: string };
}
export type PreCompactOutput = UniversalOutput;
export type PostCompactOutput = UniversalOutput;
export interface InterruptOutput {
  systemMessage?: string;
}
export type SessionEndOutput = InterruptOutput;

/** Any output of any event. */
export type HookOutput =
  | PreToolUseOutput
  | PermissionRequestOutput
  | PostToolUseOutput
  | UserPromptSubmitOutput
  | StopOutput
  | SessionStartOutput
  | SubagentStartOutput
  | UniversalOutput
  | InterruptOutput;
