/**
 * The 34 hook events of Claude Code 2.1.332 as one table: for each event, what its matcher tests, its
 * input fields, the `hookSpecificOutput` fields it reads, whether (and how) it can block, and what plain
 * text on a command hook's stdout means. Everything the profile does per event (validate, match, decode,
 * fold, refuse) reads this table; the schemas are compiled once here. Pure: no I/O.
 *
 * Source (read 2026-11-28 from the published package `@anthropic-ai/claude-code-linux-x64@2.1.332`,
 * the strings of its bundled JS): the event list `Oc = ["PreToolUse", …, "PreSkillShellCommand"]`; the
 * SDK input schemas (`hook_event_name: "<Event>"` with their fields); the hookSpecificOutput union of
 * the sync hook output schema; the per-event matcher query (`tool_name`, `source`, `agent_type`, the
 * base name of `file_path` …); the `/hooks` catalogue of exit-code meanings per event; the set of
 * events whose failed `onFailure: "block"` hook blocks (PreToolUse, PermissionRequest,
 * PreSkillShellCommand, PreModelSwitch, UserPromptSubmit, UserPromptExpansion, ConfigChange,
 * Elicitation, ElicitationResult, PostToolBatch, TaskCreated, PreCompact).
 *
 * @module
 */
import { posix } from "node:path";
import { z } from "zod";
import { matchedField } from "../common/native.js";
import type { EventSpec, NativeObject } from "../types.js";
import type { HookEventName } from "./types.js";

/**
 * How a refusal of the event is said. `permission`: `permissionDecision: "deny"`; `request`:
 * PermissionRequest `decision.behavior: "deny"`; `elicitation`: `action: "decline"` (and `decision:
 * "block"`); `prompt`: `decision: "block"` with `suppressOriginalPrompt`; `block`: `decision: "block"`;
 * `stop` (events that cannot block): `continue: false`.
 */
export type RefusalForm = "permission" | "request" | "elicitation" | "prompt" | "block" | "stop";

export interface ClaudeEvent {
  readonly spec: EventSpec;
  /** What a matcher tests, when not `input[spec.matcher]` (FileChanged: the file's base name). */
  readonly query?: (input: NativeObject) => unknown;
  /** Compiled input schema (the base fields and the event's own). */
  readonly input: z.ZodType;
  /** Compiled output schema: the top-level fields and the event's hookSpecificOutput fields. */
  readonly output: z.ZodType;
  /** The hookSpecificOutput fields the event reads (folded by `FIELD_RULES`, fold.ts). */
  readonly specific: readonly string[];
  readonly refusal: RefusalForm;
  /** Plain (non-JSON) stdout of a command hook that exits 0: context for the model, or the worktree path. */
  readonly plainText?: "context" | "worktreePath";
  /** A matcher of plain names may also use `,`, spaces and `-` (`Edit, Write`, `general-purpose`). */
  readonly lenientNames: boolean;
}

// ── shapes ──────────────────────────────────────────────────────────────────────────────────────
const record = z.record(z.string(), z.unknown());
const text = z.string();
const optionalText = z.string().optional();
const required = z.unknown().refine((v) => v !== undefined, "is required");

/** Input fields of every event (Claude Code's base hook input). */
function baseShape(event: HookEventName) {
  return {
    session_id: z.string().min(1),
    hook_event_name: z.literal(event, { error: `must be "${event}"` }),
    transcript_path: optionalText,
    cwd: optionalText,
    prompt_id: optionalText,
    permission_mode: optionalText,
    agent_id: optionalText,
    agent_type: optionalText,
    effort: z.looseObject({ level: z.string() }).optional(),
  };
}

const tool = {
  tool_name: matchedField(),
  tool_input: record,
  tool_use_id: optionalText,
  mcp_server: z.looseObject({ name: z.string(), source: z.string() }).optional(),
};
const stopShape = {
  stop_hook_active: z.boolean().optional(),
  last_assistant_message: optionalText,
  background_tasks: z.array(record).optional(),
  session_crons: z.array(record).optional(),
};
const taskShape = { task_id: text, task_subject: text, task_description: optionalText, teammate_name: optionalText, team_name: optionalText };
const modelSwitchShape = {
  from_model: text,
  to_model: matchedField(),
  requested_model: z.string().nullable().optional(),
  source: text,
  context_tokens: z.number().optional(),
  prompt_cache_warm: z.boolean().optional(),
  cache_ttl: optionalText,
  estimated_cache_write_usd: z.number().optional(),
  pricing: optionalText,
};
const compactTrigger = z.enum(["manual", "auto"]);
const elicitationAction = z.enum(["accept", "decline", "cancel"]);

/** The hookSpecificOutput fields an event may carry, with their types (Claude Code's output schema). */
const SPECIFIC_TYPES = {
  additionalContext: z.string(),
  permissionDecision: z.enum(["allow", "deny", "ask", "defer"]),
  permissionDecisionReason: z.string(),
  updatedInput: record,
  updatedToolOutput: z.unknown(),
  updatedMCPToolOutput: z.unknown(),
  classifierContext: z.string(),
  sessionTitle: z.string(),
  suppressOriginalPrompt: z.boolean(),
  initialUserMessage: z.string(),
  watchPaths: z.array(z.string()),
  reloadSkills: z.boolean(),
  retry: z.boolean(),
  decision: z.looseObject({
    behavior: z.enum(["allow", "deny"]),
    updatedInput: record.optional(),
    updatedPermissions: z.array(z.unknown()).optional(),
    message: z.string().optional(),
    interrupt: z.boolean().optional(),
  }),
  action: elicitationAction,
  content: record,
  worktreePath: z.string(),
  displayContent: z.string(),
} as const;
type SpecificField = keyof typeof SPECIFIC_TYPES;

/** Top-level output fields of every event. */
const TOP_LEVEL = {
  continue: z.boolean().optional(),
  stopReason: optionalText,
  suppressOutput: z.boolean().optional(),
  systemMessage: optionalText,
  terminalSequence: optionalText,
  decision: z.enum(["block", "approve"]).optional(),
  reason: optionalText,
};

// Fields that only inform (context for the model), as opposed to fields that change what happens.
const INFORMING = new Set<SpecificField>(["additionalContext", "classifierContext"]);
const CONTROLLED = ["decision", "continue", "stopReason", "suppressOutput"] as const;

interface Row {
  /** The input field a matcher tests (descriptive for FileChanged, which tests its base name). */
  matcher?: string;
  query?: (input: NativeObject) => unknown;
  pre: boolean;
  can_block: boolean;
  advisory?: boolean;
  refusal?: RefusalForm;
  input: z.ZodRawShape;
  specific?: readonly SpecificField[];
  /** PreModelSwitch takes allow | deny | ask only. */
  permissionDecisions?: readonly string[];
  plainText?: "context" | "worktreePath";
}

// One row per event, in the order of Claude Code's own list.
const ROWS: Readonly<Record<HookEventName, Row>> = {
  PreToolUse: { matcher: "tool_name", pre: true, can_block: true, refusal: "permission", input: tool, specific: ["permissionDecision", "permissionDecisionReason", "updatedInput", "additionalContext"] },
  PostToolUse: {
    matcher: "tool_name", pre: false, can_block: true,
    input: { ...tool, tool_response: required, duration_ms: z.number().optional() },
    specific: ["additionalContext", "updatedToolOutput", "updatedMCPToolOutput", "classifierContext"],
  },
  PostToolUseFailure: {
    matcher: "tool_name", pre: false, can_block: true,
    input: { ...tool, error: text, is_interrupt: z.boolean().optional(), duration_ms: z.number().optional() },
    specific: ["additionalContext"],
  },
  // Exit 2 / decision "block": the agentic loop stops before the next model request.
  PostToolBatch: {
    pre: true, can_block: true,
    input: { tool_calls: z.array(z.looseObject({ tool_name: text, tool_input: record, tool_use_id: text, tool_response: z.unknown().optional() })) },
    specific: ["additionalContext"],
  },
  Notification: { matcher: "notification_type", pre: false, can_block: false, advisory: true, input: { message: text, title: optionalText, notification_type: matchedField().optional() }, specific: ["additionalContext"] },
  UserPromptSubmit: {
    pre: true, can_block: true, refusal: "prompt", plainText: "context",
    input: { prompt: text, source: optionalText, session_title: optionalText },
    specific: ["additionalContext", "sessionTitle", "suppressOriginalPrompt"],
  },
  UserPromptExpansion: {
    matcher: "command_name", pre: true, can_block: true, refusal: "prompt", plainText: "context",
    input: { expansion_type: text, command_name: matchedField(), command_args: text, command_source: optionalText, prompt: text },
    specific: ["additionalContext", "suppressOriginalPrompt"],
  },
  SessionStart: {
    matcher: "source", pre: true, can_block: false, plainText: "context",
    input: { source: matchedField(), model: optionalText, session_title: optionalText },
    specific: ["additionalContext", "initialUserMessage", "sessionTitle", "watchPaths", "reloadSkills"],
  },
  SessionEnd: { matcher: "reason", pre: false, can_block: false, advisory: true, input: { reason: matchedField() } },
  Stop: { pre: true, can_block: true, input: stopShape, specific: ["additionalContext"] },
  // Fire-and-forget: Claude Code ignores the output and the exit code.
  StopFailure: { matcher: "error", pre: false, can_block: false, advisory: true, input: { error: matchedField(), error_details: optionalText, last_assistant_message: optionalText } },
  SubagentStart: { matcher: "agent_type", pre: true, can_block: false, input: { agent_id: text, agent_type: matchedField() }, specific: ["additionalContext"] },
  SubagentStop: {
    matcher: "agent_type", pre: true, can_block: true,
    input: { ...stopShape, agent_type: matchedField().optional(), agent_transcript_path: optionalText },
    specific: ["additionalContext"],
  },
  PreCompact: { matcher: "trigger", pre: true, can_block: true, input: { trigger: compactTrigger, custom_instructions: z.string().nullable().optional() } },
  PostCompact: { matcher: "trigger", pre: false, can_block: false, advisory: true, input: { trigger: compactTrigger, compact_summary: text } },
  PreModelSwitch: {
    matcher: "to_model", pre: true, can_block: true, refusal: "permission", input: modelSwitchShape,
    specific: ["permissionDecision", "permissionDecisionReason"], permissionDecisions: ["allow", "deny", "ask"],
  },
  PostModelSwitch: { matcher: "to_model", pre: false, can_block: false, plainText: "context", input: modelSwitchShape, specific: ["additionalContext"] },
  PermissionRequest: { matcher: "tool_name", pre: true, can_block: true, refusal: "request", input: { ...tool, permission_suggestions: z.array(z.unknown()).optional() }, specific: ["decision"] },
  PermissionDenied: { matcher: "tool_name", pre: false, can_block: false, input: { ...tool, reason: text }, specific: ["retry"] },
  Setup: { matcher: "trigger", pre: true, can_block: false, input: { trigger: matchedField() }, specific: ["additionalContext"] },
  // Exit 2 / decision "block": the teammate keeps working instead of going idle.
  TeammateIdle: { pre: true, can_block: true, input: { teammate_name: text, team_name: optionalText } },
  TaskCreated: { pre: true, can_block: true, input: taskShape },
  TaskCompleted: { pre: true, can_block: true, input: taskShape },
  Elicitation: {
    matcher: "mcp_server_name", pre: true, can_block: true, refusal: "elicitation",
    input: { mcp_server_name: matchedField(), message: text, mode: optionalText, url: optionalText, elicitation_id: optionalText, requested_schema: record.optional() },
    specific: ["action", "content"],
  },
  ElicitationResult: {
    matcher: "mcp_server_name", pre: true, can_block: true, refusal: "elicitation",
    input: { mcp_server_name: matchedField(), elicitation_id: optionalText, mode: optionalText, action: elicitationAction, content: record.optional() },
    specific: ["action", "content"],
  },
  ConfigChange: { matcher: "source", pre: true, can_block: true, input: { source: matchedField(), file_path: optionalText } },
  // The hook creates the worktree: without a path (or on a block) Claude Code's creation fails.
  WorktreeCreate: { pre: true, can_block: true, plainText: "worktreePath", input: { name: text }, specific: ["worktreePath"] },
  WorktreeRemove: { pre: false, can_block: false, advisory: true, input: { worktree_path: text } },
  InstructionsLoaded: {
    matcher: "load_reason", pre: false, can_block: false, advisory: true,
    input: { file_path: text, memory_type: text, load_reason: matchedField(), globs: z.array(z.string()).optional(), trigger_file_path: optionalText, parent_file_path: optionalText },
  },
  CwdChanged: { pre: false, can_block: false, input: { old_cwd: text, new_cwd: text }, specific: ["watchPaths"] },
  FileChanged: {
    matcher: "file_path",
    // Claude Code tests the matcher against the changed file's base name (`.envrc`, not its path).
    query: (input) => (typeof input["file_path"] === "string" ? posix.basename(input["file_path"]) : undefined),
    pre: false, can_block: false,
    input: { file_path: matchedField(), event: z.enum(["change", "add", "unlink"]) },
    specific: ["watchPaths"],
  },
  DirectoryAdded: { matcher: "source", pre: false, can_block: false, input: { directory: text, source: matchedField() } },
  // Display only: displayContent replaces the delta on screen; the stored message is untouched.
  MessageDisplay: {
    pre: true, can_block: false,
    input: { turn_id: text, message_id: text, index: z.number().int().nonnegative(), final: z.boolean(), delta: text },
    specific: ["displayContent"],
  },
  // Only allow (or nothing) lets the command run: deny, ask, defer and any updatedInput keep it from running.
  PreSkillShellCommand: {
    matcher: "tool_name", pre: true, can_block: true, refusal: "permission",
    input: { tool_name: matchedField(), tool_input: z.looseObject({ command: text }), tool_use_id: optionalText, command_name: text, command_source: optionalText, invoked_by: optionalText },
    specific: ["permissionDecision", "permissionDecisionReason", "updatedInput"],
  },
};

/** Claude Code 2.1.332's event list, in its own order. */
export const CLAUDE_EVENTS = Object.keys(ROWS) as readonly HookEventName[];

function compile(event: HookEventName, row: Row): ClaudeEvent {
  const specific = row.specific ?? [];
  const specificShape: Record<string, z.ZodType> = {};
  for (const field of specific) specificShape[field] = SPECIFIC_TYPES[field].optional();
  if (row.permissionDecisions !== undefined) specificShape["permissionDecision"] = z.enum(row.permissionDecisions as [string, ...string[]]).optional();
  const output = z.looseObject({
    ...TOP_LEVEL,
    // An output naming another event is refused, as Claude Code refuses it ("incorrect event name").
    hookSpecificOutput: z.looseObject({ hookEventName: z.literal(event, { error: `must be "${event}" (the event this hook runs for)` }).optional(), ...specificShape }).optional(),
  });
  const spec: EventSpec = {
    ...(row.matcher !== undefined ? { matcher: row.matcher } : {}),
    pre: row.pre,
    can_block: row.can_block,
    ...(row.advisory === true ? { advisory: true } : {}),
    modifiable: [...CONTROLLED, ...specific.filter((f) => !INFORMING.has(f)).map((f) => `hookSpecificOutput.${f}`)],
  };
  return {
    spec,
    ...(row.query !== undefined ? { query: row.query } : {}),
    input: z.looseObject({ ...baseShape(event), ...row.input }),
    output,
    specific,
    refusal: row.can_block ? (row.refusal ?? "block") : "stop",
    ...(row.plainText !== undefined ? { plainText: row.plainText } : {}),
    // Claude Code reads `,`-separated and hyphenated names as a list on every event with a matcher but FileChanged.
    lenientNames: row.matcher !== undefined && event !== "FileChanged",
  };
}

export const EVENT_TABLE: Readonly<Record<HookEventName, ClaudeEvent>> = Object.freeze(
  Object.fromEntries(CLAUDE_EVENTS.map((event) => [event, compile(event, ROWS[event])])) as Record<HookEventName, ClaudeEvent>,
);

/** The EventSpec of every event (the profile's `events`). */
export const EVENT_SPECS: Readonly<Record<HookEventName, EventSpec>> = Object.freeze(
  Object.fromEntries(CLAUDE_EVENTS.map((event) => [event, EVENT_TABLE[event].spec])) as Record<HookEventName, EventSpec>,
);

export function isClaudeEvent(event: string): event is HookEventName {
  return Object.hasOwn(EVENT_TABLE, event);
}

/**
 * The permission levels an event's `permissionDecision` takes, least to most restrictive. Claude Code
 * folds its hooks' decisions with deny > defer > ask > allow (PreToolUse, PreSkillShellCommand) and
 * deny > ask > allow (PreModelSwitch, no defer).
 */
export function permissionLevels(event: HookEventName): readonly string[] | undefined {
  if (event === "PreModelSwitch") return ["allow", "ask", "deny"];
  if (event === "PreToolUse" || event === "PreSkillShellCommand") return ["allow", "ask", "defer", "deny"];
  return undefined;
}
