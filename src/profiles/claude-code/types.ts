/**
 * Author types of the `claude-code` profile: `import type { PreToolUseInput, HookOutput } from
 * "vcp-hooks/profiles/claude-code"`. An action receives exactly the JSON a Claude Code hook reads (stdin
 * of a command hook, body of an http hook) and returns exactly the JSON it would answer. The 34 events
 * of Claude Code 2.1.332 (its bundled SDK schemas `hook_event_name: "<Event>"`, see events.ts).
 *
 * Fields whose values Claude Code may extend (a `source`, a `reason`) are typed `KnownValue | string`:
 * the profile accepts any string there, so a newer Claude Code does not break a policy.
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

/** A value of an open set: the known ones are listed, any other string is accepted. */
type Open<T extends string> = T | (string & {});

export type HookEventName =
  | "PreToolUse"
  | "PostToolUse"
  | "PostToolUseFailure"
  | "PostToolBatch"
  | "Notification"
  | "UserPromptSubmit"
  | "UserPromptExpansion"
  | "SessionStart"
  | "SessionEnd"
  | "Stop"
  | "StopFailure"
  | "SubagentStart"
  | "SubagentStop"
  | "PreCompact"
  | "PostCompact"
  | "PreModelSwitch"
  | "PostModelSwitch"
  | "PermissionRequest"
  | "PermissionDenied"
  | "Setup"
  | "TeammateIdle"
  | "TaskCreated"
  | "TaskCompleted"
  | "Elicitation"
  | "ElicitationResult"
  | "ConfigChange"
  | "WorktreeCreate"
  | "WorktreeRemove"
  | "InstructionsLoaded"
  | "CwdChanged"
  | "FileChanged"
  | "DirectoryAdded"
  | "MessageDisplay"
  | "PreSkillShellCommand";

export type PermissionMode = Open<"default" | "plan" | "acceptEdits" | "bypassPermissions" | "dontAsk" | "auto">;

export interface HookInput {
  session_id: string;
  hook_event_name: HookEventName;
  transcript_path?: string;
  cwd?: string;
  /** Correlates a prompt with the events that follow it (absent before the first prompt). */
  prompt_id?: string;
  permission_mode?: PermissionMode;
  /** Present only when the hook fires inside a subagent. */
  agent_id?: string;
  agent_type?: string;
  effort?: { level: string };
}

/** The MCP server of an `mcp__*` tool; trust `source`, not the name. */
export interface McpServerRef {
  name: string;
  source: Open<"sdk" | "plugin" | "user" | "project" | "local" | "dynamic" | "managed" | "enterprise" | "claudeai" | "agent">;
}

interface ToolInput extends HookInput {
  tool_name: string;
  tool_input: Record<string, unknown>;
  tool_use_id?: string;
  mcp_server?: McpServerRef;
}

export interface PreToolUseInput extends ToolInput {
  hook_event_name: "PreToolUse";
}

export interface PostToolUseInput extends ToolInput {
  hook_event_name: "PostToolUse";
  tool_response: unknown;
  duration_ms?: number;
}

export interface PostToolUseFailureInput extends ToolInput {
  hook_event_name: "PostToolUseFailure";
  error: string;
  is_interrupt?: boolean;
  duration_ms?: number;
}

export interface ToolCallSummary {
  tool_name: string;
  tool_input: Record<string, unknown>;
  tool_use_id: string;
  tool_response?: unknown;
}

/** Once per batch of tool calls, after every call resolved, before the next model request. */
export interface PostToolBatchInput extends HookInput {
  hook_event_name: "PostToolBatch";
  tool_calls: ToolCallSummary[];
}

export interface PermissionRequestInput extends ToolInput {
  hook_event_name: "PermissionRequest";
  permission_suggestions?: unknown[];
}

/** After auto mode denied a tool call. */
export interface PermissionDeniedInput extends ToolInput {
  hook_event_name: "PermissionDenied";
  reason: string;
}

export interface NotificationInput extends HookInput {
  hook_event_name: "Notification";
  message: string;
  title?: string;
  notification_type?: string;
}

export interface UserPromptSubmitInput extends HookInput {
  hook_event_name: "UserPromptSubmit";
  prompt: string;
  source?: Open<"user" | "sdk" | "system" | "loop_wakeup" | "schedule_wakeup" | "poll_event">;
  session_title?: string;
}

/** A slash command or MCP prompt expanding into a prompt. */
export interface UserPromptExpansionInput extends HookInput {
  hook_event_name: "UserPromptExpansion";
  expansion_type: Open<"slash_command" | "mcp_prompt">;
  command_name: string;
  command_args: string;
  command_source?: string;
  prompt: string;
}

export interface SessionStartInput extends HookInput {
  hook_event_name: "SessionStart";
  source: Open<"startup" | "resume" | "clear" | "compact" | "fork">;
  model?: string;
  session_title?: string;
}

export interface SessionEndInput extends HookInput {
  hook_event_name: "SessionEnd";
  reason: Open<"clear" | "resume" | "logout" | "prompt_input_exit" | "other">;
}

interface StopFields {
  stop_hook_active?: boolean;
  last_assistant_message?: string;
  background_tasks?: Array<Record<string, unknown>>;
  session_crons?: Array<Record<string, unknown>>;
}

export interface StopInput extends HookInput, StopFields {
  hook_event_name: "Stop";
}

/** Fires instead of Stop when an API error ended the turn; Claude Code ignores the answer. */
export interface StopFailureInput extends HookInput {
  hook_event_name: "StopFailure";
  error: Open<"rate_limit" | "overloaded" | "authentication_failed" | "billing_error" | "invalid_request" | "model_not_found" | "server_error" | "max_output_tokens" | "unknown">;
  error_details?: string;
  last_assistant_message?: string;
}

export interface SubagentStartInput extends HookInput {
  hook_event_name: "SubagentStart";
  agent_id: string;
  agent_type: string;
}

export interface SubagentStopInput extends HookInput, StopFields {
  hook_event_name: "SubagentStop";
  agent_transcript_path?: string;
}

export interface PreCompactInput extends HookInput {
  hook_event_name: "PreCompact";
  trigger: "manual" | "auto";
  custom_instructions?: string | null;
}

export interface PostCompactInput extends HookInput {
  hook_event_name: "PostCompact";
  trigger: "manual" | "auto";
  compact_summary: string;
}

interface ModelSwitchFields {
  from_model: string;
  to_model: string;
  requested_model?: string | null;
  source: Open<"command" | "picker" | "sdk" | "auto" | "resume">;
  context_tokens?: number;
  prompt_cache_warm?: boolean;
  cache_ttl?: Open<"5m" | "1h">;
  estimated_cache_write_usd?: number;
  pricing?: Open<"configured" | "catalog" | "default">;
}

export interface PreModelSwitchInput extends HookInput, ModelSwitchFields {
  hook_event_name: "PreModelSwitch";
}

export interface PostModelSwitchInput extends HookInput, ModelSwitchFields {
  hook_event_name: "PostModelSwitch";
}

export interface SetupInput extends HookInput {
  hook_event_name: "Setup";
  trigger: Open<"init" | "maintenance">;
}

export interface TeammateIdleInput extends HookInput {
  hook_event_name: "TeammateIdle";
  teammate_name: string;
  team_name?: string;
}

interface TaskFields {
  task_id: string;
  task_subject: string;
  task_description?: string;
  teammate_name?: string;
  team_name?: string;
}

export interface TaskCreatedInput extends HookInput, TaskFields {
  hook_event_name: "TaskCreated";
}

export interface TaskCompletedInput extends HookInput, TaskFields {
  hook_event_name: "TaskCompleted";
}

export type ElicitationAction = "accept" | "decline" | "cancel";

/** An MCP server asks the user for input. */
export interface ElicitationInput extends HookInput {
  hook_event_name: "Elicitation";
  mcp_server_name: string;
  message: string;
  mode?: Open<"form" | "url">;
  url?: string;
  elicitation_id?: string;
  requested_schema?: Record<string, unknown>;
}

/** The user answered an MCP elicitation; the hook may override it before the server sees it. */
export interface ElicitationResultInput extends HookInput {
  hook_event_name: "ElicitationResult";
  mcp_server_name: string;
  elicitation_id?: string;
  mode?: Open<"form" | "url">;
  action: ElicitationAction;
  content?: Record<string, unknown>;
}

export interface ConfigChangeInput extends HookInput {
  hook_event_name: "ConfigChange";
  source: Open<"user_settings" | "project_settings" | "local_settings" | "policy_settings" | "skills">;
  file_path?: string;
}

export interface WorktreeCreateInput extends HookInput {
  hook_event_name: "WorktreeCreate";
  /** The suggested worktree slug. */
  name: string;
}

export interface WorktreeRemoveInput extends HookInput {
  hook_event_name: "WorktreeRemove";
  worktree_path: string;
}

/** A CLAUDE.md or rule file was loaded; observability only. */
export interface InstructionsLoadedInput extends HookInput {
  hook_event_name: "InstructionsLoaded";
  file_path: string;
  memory_type: Open<"User" | "Project" | "Local" | "Managed">;
  load_reason: Open<"session_start" | "nested_traversal" | "path_glob_match" | "include" | "compact">;
  globs?: string[];
  trigger_file_path?: string;
  parent_file_path?: string;
}

export interface CwdChangedInput extends HookInput {
  hook_event_name: "CwdChanged";
  old_cwd: string;
  new_cwd: string;
}

export interface FileChangedInput extends HookInput {
  hook_event_name: "FileChanged";
  file_path: string;
  event: "change" | "add" | "unlink";
}

export interface DirectoryAddedInput extends HookInput {
  hook_event_name: "DirectoryAdded";
  directory: string;
  source: Open<"slash_command" | "register_repo_root">;
}

/** A batch of completed lines of a streaming assistant message; display only. */
export interface MessageDisplayInput extends HookInput {
  hook_event_name: "MessageDisplay";
  turn_id: string;
  message_id: string;
  index: number;
  final: boolean;
  delta: string;
}

/** A skill's inline shell command, before it runs. */
export interface PreSkillShellCommandInput extends HookInput {
  hook_event_name: "PreSkillShellCommand";
  tool_name: Open<"Bash" | "PowerShell">;
  tool_input: { command: string } & Record<string, unknown>;
  tool_use_id?: string;
  command_name: string;
  command_source?: string;
  invoked_by?: Open<"user" | "claude" | "other">;
}

/** Fields every output may carry. Unknown keys are tolerated. */
export interface HookOutput {
  continue?: boolean;
  stopReason?: string;
  suppressOutput?: boolean;
  systemMessage?: string;
  /** OSC 0/1/2/9/99/777 or BEL for Claude Code to emit; several hooks' sequences are emitted in plan order. */
  terminalSequence?: string;
  /** `"block"` on the events that can block; PreToolUse's (and PreModelSwitch's, PreSkillShellCommand's) deprecated `approve`/`block`. */
  decision?: "block" | "approve";
  reason?: string;
  hookSpecificOutput?: Record<string, unknown>;
}

export type PermissionDecision = "allow" | "deny" | "ask" | "defer";

type Specific<E extends HookEventName, F> = HookOutput & { hookSpecificOutput?: { hookEventName: E } & F };

interface ContextField {
  /** Joined with "\n" across hooks, in plan order. */
  additionalContext?: string;
}

export type PreToolUseOutput = Specific<"PreToolUse", ContextField & {
  permissionDecision?: PermissionDecision;
  permissionDecisionReason?: string;
  /** Replaces the whole `tool_input` (the last hook in plan order that sets it wins). */
  updatedInput?: Record<string, unknown>;
}>;
export type PostToolUseOutput = Specific<"PostToolUse", ContextField & {
  /** Replaces the tool's output before the model sees it (the last hook in plan order that sets it wins). */
  updatedToolOutput?: unknown;
  /** MCP tools only; prefer `updatedToolOutput`. */
  updatedMCPToolOutput?: unknown;
  classifierContext?: string;
}>;
export type PostToolUseFailureOutput = Specific<"PostToolUseFailure", ContextField>;
export type PostToolBatchOutput = Specific<"PostToolBatch", ContextField>;
export type PermissionRequestOutput = Specific<"PermissionRequest", {
  decision?:
    | { behavior: "allow"; updatedInput?: Record<string, unknown>; updatedPermissions?: unknown[] }
    | { behavior: "deny"; message?: string; interrupt?: boolean };
}>;
export type PermissionDeniedOutput = Specific<"PermissionDenied", { retry?: boolean }>;
export type NotificationOutput = Specific<"Notification", ContextField>;
export type UserPromptSubmitOutput = Specific<"UserPromptSubmit", ContextField & { sessionTitle?: string; suppressOriginalPrompt?: boolean }>;
export type UserPromptExpansionOutput = Specific<"UserPromptExpansion", ContextField & { suppressOriginalPrompt?: boolean }>;
export type SessionStartOutput = Specific<"SessionStart", ContextField & {
  initialUserMessage?: string;
  sessionTitle?: string;
  watchPaths?: string[];
  reloadSkills?: boolean;
}>;
export type SessionEndOutput = HookOutput;
export type StopOutput = Specific<"Stop", ContextField>;
export type StopFailureOutput = HookOutput;
export type SubagentStartOutput = Specific<"SubagentStart", ContextField>;
export type SubagentStopOutput = Specific<"SubagentStop", ContextField>;
export type PreCompactOutput = HookOutput;
export type PostCompactOutput = HookOutput;
export type PreModelSwitchOutput = Specific<"PreModelSwitch", { permissionDecision?: "allow" | "deny" | "ask"; permissionDecisionReason?: string }>;
export type PostModelSwitchOutput = Specific<"PostModelSwitch", ContextField>;
export type SetupOutput = Specific<"Setup", ContextField>;
export type TeammateIdleOutput = HookOutput;
export type TaskCreatedOutput = HookOutput;
export type TaskCompletedOutput = HookOutput;
export type ElicitationOutput = Specific<"Elicitation", { action?: ElicitationAction; content?: Record<string, unknown> }>;
export type ElicitationResultOutput = Specific<"ElicitationResult", { action?: ElicitationAction; content?: Record<string, unknown> }>;
export type ConfigChangeOutput = HookOutput;
export type WorktreeCreateOutput = Specific<"WorktreeCreate", { worktreePath?: string }>;
export type WorktreeRemoveOutput = HookOutput;
export type InstructionsLoadedOutput = HookOutput;
export type CwdChangedOutput = Specific<"CwdChanged", { watchPaths?: string[] }>;
export type FileChangedOutput = Specific<"FileChanged", { watchPaths?: string[] }>;
export type DirectoryAddedOutput = HookOutput;
export type MessageDisplayOutput = Specific<"MessageDisplay", { displayContent?: string }>;
export type PreSkillShellCommandOutput = Specific<"PreSkillShellCommand", {
  /** Only `allow` (or nothing) lets the command run: deny, ask and defer all keep it from running. */
  permissionDecision?: PermissionDecision;
  permissionDecisionReason?: string;
  /** Never applied by Claude Code: any value keeps the command from running. */
  updatedInput?: Record<string, unknown>;
}>;

export interface HookInputs {
  PreToolUse: PreToolUseInput;
  PostToolUse: PostToolUseInput;
  PostToolUseFailure: PostToolUseFailureInput;
  PostToolBatch: PostToolBatchInput;
  Notification: NotificationInput;
  UserPromptSubmit: UserPromptSubmitInput;
  UserPromptExpansion: UserPromptExpansionInput;
  SessionStart: SessionStartInput;
  SessionEnd: SessionEndInput;
  Stop: StopInput;
  StopFailure: StopFailureInput;
  SubagentStart: SubagentStartInput;
  SubagentStop: SubagentStopInput;
  PreCompact: PreCompactInput;
  PostCompact: PostCompactInput;
  PreModelSwitch: PreModelSwitchInput;
  PostModelSwitch: PostModelSwitchInput;
  PermissionRequest: PermissionRequestInput;
  PermissionDenied: PermissionDeniedInput;
  Setup: SetupInput;
  TeammateIdle: TeammateIdleInput;
  TaskCreated: TaskCreatedInput;
  TaskCompleted: TaskCompletedInput;
  Elicitation: ElicitationInput;
  ElicitationResult: ElicitationResultInput;
  ConfigChange: ConfigChangeInput;
  WorktreeCreate: WorktreeCreateInput;
  WorktreeRemove: WorktreeRemoveInput;
  InstructionsLoaded: InstructionsLoadedInput;
  CwdChanged: CwdChangedInput;
  FileChanged: FileChangedInput;
  DirectoryAdded: DirectoryAddedInput;
  MessageDisplay: MessageDisplayInput;
  PreSkillShellCommand: PreSkillShellCommandInput;
}

export interface HookOutputs {
  PreToolUse: PreToolUseOutput;
  PostToolUse: PostToolUseOutput;
  PostToolUseFailure: PostToolUseFailureOutput;
  PostToolBatch: PostToolBatchOutput;
  Notification: NotificationOutput;
  UserPromptSubmit: UserPromptSubmitOutput;
  UserPromptExpansion: UserPromptExpansionOutput;
  SessionStart: SessionStartOutput;
  SessionEnd: SessionEndOutput;
  Stop: StopOutput;
  StopFailure: StopFailureOutput;
  SubagentStart: SubagentStartOutput;
  SubagentStop: SubagentStopOutput;
  PreCompact: PreCompactOutput;
  PostCompact: PostCompactOutput;
  PreModelSwitch: PreModelSwitchOutput;
  PostModelSwitch: PostModelSwitchOutput;
  PermissionRequest: PermissionRequestOutput;
  PermissionDenied: PermissionDeniedOutput;
  Setup: SetupOutput;
  TeammateIdle: TeammateIdleOutput;
  TaskCreated: TaskCreatedOutput;
  TaskCompleted: TaskCompletedOutput;
  Elicitation: ElicitationOutput;
  ElicitationResult: ElicitationResultOutput;
  ConfigChange: ConfigChangeOutput;
  WorktreeCreate: WorktreeCreateOutput;
  WorktreeRemove: WorktreeRemoveOutput;
  InstructionsLoaded: InstructionsLoadedOutput;
  CwdChanged: CwdChangedOutput;
  FileChanged: FileChangedOutput;
  DirectoryAdded: DirectoryAddedOutput;
  MessageDisplay: MessageDisplayOutput;
  PreSkillShellCommand: PreSkillShellCommandOutput;
}

export type HookAction<E extends HookEventName> = (input: HookInputs[E]) => HookOutputs[E] | undefined | void;
