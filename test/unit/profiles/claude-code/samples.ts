/**
 * One input per Claude Code 2.1.332 hook event, shaped as its bundled SDK schema says Claude Code writes
 * it (`hook_event_name: "<Event>"` and the event's fields), and the fields each event requires.
 */
import type { NativeObject } from "../../../../src/profiles/types.js";
import type { HookEventName } from "../../../../src/profiles/claude-code/types.js";

const base = (event: HookEventName): NativeObject => ({
  session_id: "s1",
  transcript_path: "/home/dev/.claude/projects/app/s1.jsonl",
  cwd: "/home/dev/app",
  prompt_id: "6f1f0b3c-0000-4000-8000-000000000001",
  permission_mode: "default",
  hook_event_name: event,
});
const bash = { tool_name: "Bash", tool_input: { command: "npm test" }, tool_use_id: "toolu_01" };
const modelSwitch = {
  from_model: "claude-sonnet-5", to_model: "claude-opus-5", requested_model: "opus", context_tokens: 120_000,
  prompt_cache_warm: true, cache_ttl: "5m", estimated_cache_write_usd: 0.9, pricing: "catalog",
};

export const SAMPLES: Readonly<Record<HookEventName, NativeObject>> = {
  PreToolUse: { ...base("PreToolUse"), ...bash },
  PostToolUse: { ...base("PostToolUse"), ...bash, tool_response: { stdout: "ok", stderr: "", interrupted: false }, duration_ms: 812 },
  PostToolUseFailure: { ...base("PostToolUseFailure"), ...bash, error: "Command failed with exit code 1", is_interrupt: false, duration_ms: 40 },
  PostToolBatch: { ...base("PostToolBatch"), tool_calls: [{ tool_name: "Read", tool_input: { file_path: "/home/dev/app/a.ts" }, tool_use_id: "toolu_02", tool_response: "…" }, { ...bash, tool_response: { stdout: "ok" } }] },
  Notification: { ...base("Notification"), message: "Claude needs your permission to use Bash", title: "Permission", notification_type: "permission_prompt" },
  UserPromptSubmit: { ...base("UserPromptSubmit"), prompt: "fix the tests", source: "user" },
  UserPromptExpansion: { ...base("UserPromptExpansion"), expansion_type: "slash_command", command_name: "deploy", command_args: "prod", command_source: "project", prompt: "Deploy to prod" },
  SessionStart: { ...base("SessionStart"), source: "fork", model: "claude-sonnet-5" },
  SessionEnd: { ...base("SessionEnd"), reason: "prompt_input_exit" },
  Stop: { ...base("Stop"), stop_hook_active: false, last_assistant_message: "Done.", background_tasks: [], session_crons: [] },
  StopFailure: { ...base("StopFailure"), error: "rate_limit", error_details: "429", last_assistant_message: "" },
  SubagentStart: { ...base("SubagentStart"), agent_id: "agent-1", agent_type: "Explore" },
  SubagentStop: { ...base("SubagentStop"), stop_hook_active: false, agent_id: "agent-1", agent_type: "general-purpose", agent_transcript_path: "/home/dev/.claude/agent-1.jsonl" },
  PreCompact: { ...base("PreCompact"), trigger: "auto", custom_instructions: null },
  PostCompact: { ...base("PostCompact"), trigger: "manual", compact_summary: "We fixed the tests." },
  PreModelSwitch: { ...base("PreModelSwitch"), ...modelSwitch, source: "command" },
  PostModelSwitch: { ...base("PostModelSwitch"), ...modelSwitch, source: "auto" },
  PermissionRequest: { ...base("PermissionRequest"), tool_name: "Write", tool_input: { file_path: "/home/dev/app/a.ts", content: "x" }, permission_suggestions: [] },
  PermissionDenied: { ...base("PermissionDenied"), ...bash, reason: "auto mode: the classifier denied rm" },
  Setup: { ...base("Setup"), trigger: "init" },
  TeammateIdle: { ...base("TeammateIdle"), teammate_name: "reviewer", team_name: "s1" },
  TaskCreated: { ...base("TaskCreated"), task_id: "t1", task_subject: "Write the migration", task_description: "…", teammate_name: "builder" },
  TaskCompleted: { ...base("TaskCompleted"), task_id: "t1", task_subject: "Write the migration" },
  Elicitation: { ...base("Elicitation"), mcp_server_name: "github", message: "Which repository?", mode: "form", elicitation_id: "e1", requested_schema: { type: "object", properties: { repo: { type: "string" } } } },
  ElicitationResult: { ...base("ElicitationResult"), mcp_server_name: "github", elicitation_id: "e1", mode: "form", action: "accept", content: { repo: "acme/app" } },
  ConfigChange: { ...base("ConfigChange"), source: "project_settings", file_path: "/home/dev/app/.claude/settings.json" },
  WorktreeCreate: { ...base("WorktreeCreate"), name: "fix-tests" },
  WorktreeRemove: { ...base("WorktreeRemove"), worktree_path: "/home/dev/app-worktrees/fix-tests" },
  InstructionsLoaded: { ...base("InstructionsLoaded"), file_path: "/home/dev/app/CLAUDE.md", memory_type: "Project", load_reason: "session_start" },
  CwdChanged: { ...base("CwdChanged"), old_cwd: "/home/dev/app", new_cwd: "/home/dev/app/packages/api" },
  FileChanged: { ...base("FileChanged"), file_path: "/home/dev/app/.envrc", event: "change" },
  DirectoryAdded: { ...base("DirectoryAdded"), directory: "/home/dev/lib", source: "slash_command" },
  MessageDisplay: { ...base("MessageDisplay"), turn_id: "turn-1", message_id: "msg-1", index: 0, final: false, delta: "Here is the plan:\n" },
  PreSkillShellCommand: { ...base("PreSkillShellCommand"), tool_name: "Bash", tool_input: { command: "git log -5" }, tool_use_id: "skill-1", command_name: "changelog", command_source: "project", invoked_by: "user" },
};

/** The fields each event's input must carry (besides session_id and hook_event_name). */
export const REQUIRED: Readonly<Record<HookEventName, readonly string[]>> = {
  PreToolUse: ["tool_name", "tool_input"],
  PostToolUse: ["tool_name", "tool_input", "tool_response"],
  PostToolUseFailure: ["tool_name", "tool_input", "error"],
  PostToolBatch: ["tool_calls"],
  Notification: ["message"],
  UserPromptSubmit: ["prompt"],
  UserPromptExpansion: ["expansion_type", "command_name", "command_args", "prompt"],
  SessionStart: ["source"],
  SessionEnd: ["reason"],
  Stop: [],
  StopFailure: ["error"],
  SubagentStart: ["agent_id", "agent_type"],
  SubagentStop: [],
  PreCompact: ["trigger"],
  PostCompact: ["trigger", "compact_summary"],
  PreModelSwitch: ["from_model", "to_model", "source"],
  PostModelSwitch: ["from_model", "to_model", "source"],
  PermissionRequest: ["tool_name", "tool_input"],
  PermissionDenied: ["tool_name", "tool_input", "reason"],
  Setup: ["trigger"],
  TeammateIdle: ["teammate_name"],
  TaskCreated: ["task_id", "task_subject"],
  TaskCompleted: ["task_id", "task_subject"],
  Elicitation: ["mcp_server_name", "message"],
  ElicitationResult: ["mcp_server_name", "action"],
  ConfigChange: ["source"],
  WorktreeCreate: ["name"],
  WorktreeRemove: ["worktree_path"],
  InstructionsLoaded: ["file_path", "memory_type", "load_reason"],
  CwdChanged: ["old_cwd", "new_cwd"],
  FileChanged: ["file_path", "event"],
  DirectoryAdded: ["directory", "source"],
  MessageDisplay: ["turn_id", "message_id", "index", "final", "delta"],
  PreSkillShellCommand: ["tool_name", "tool_input", "command_name"],
};
