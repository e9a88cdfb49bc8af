/**
 * A native sample input for (profile, event) that the profile's own `validateInput` accepts: the input of
 * the test case `vcp-hooks init --profile` scaffolds and of each stub `vcp-hooks import` writes, so a
 * generated policy passes its own test as generated.
 *
 * Two parts: a realistic base per profile (a `Bash`/`ls` tool call, a prompt `hi` — what a reader
 * expects to see), then every field the event's input schema (`EventProfile.inputSchema`, the schema
 * `validateInput` applies) requires and the base lacks, filled with a placeholder of its type. The
 * profile's schema stays the one source of what an event's input needs.
 *
 * @example
 * ```ts
 * sampleInput(getProfile("codex"), "PreToolUse");
 * // { session_id: "s-test", turn_id: "t-test", …, hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "ls" }, … }
 * ```
 */
import type { z } from "zod";
import type { EventProfile, NativeObject } from "../profiles/types.js";

/** The realistic part: what the agent sends for a shell call, a prompt, a file. */
function baseInput(profile: string, event: string): NativeObject {
  switch (profile) {
    case "ai-memory":
      return { event, payload: { namespace: "default", content: "example" } };
    case "amplifier":
      return { event, data: event.startsWith("tool:") ? { tool_name: "bash", tool_input: { command: "ls" } } : event === "prompt:submit" ? { prompt: "hi" } : {} };
    case "repo-yaml":
      return { event_type: event, session_id: "s-test", timestamp: "2026-01-01T00:00:00Z", ability_id: "example.ability" };
    case "codex":
      return { session_id: "s-test", turn_id: "t-test", transcript_path: null, cwd: "/tmp", model: "gpt-5", permission_mode: "default", hook_event_name: event, ...(event.includes("ToolUse") || event === "PermissionRequest" ? { tool_name: "Bash", tool_input: { command: "ls" }, tool_use_id: "call-test" } : {}), ...(event === "PostToolUse" ? { tool_response: "" } : {}), ...(event === "UserPromptSubmit" ? { prompt: "hi" } : {}), ...(event === "SessionStart" ? { source: "startup" } : {}) };
    case "goose":
      return { event, session_id: "s-test", ...(event.includes("ToolUse") ? { matcher_context: "developer__shell", tool_name: "developer__shell", tool_input: { command: "ls" }, working_dir: "/tmp", tool_call_id: "call-test" } : {}), ...(event === "UserPromptSubmit" ? { matcher_context: "hi", message: "hi" } : {}) };
    case "openhands":
      return { event_type: event, session_id: "s-test", working_dir: "/tmp", ...(event.includes("ToolUse") ? { tool_name: "terminal", tool_input: { command: "ls" } } : {}), ...(event === "UserPromptSubmit" ? { message: "hi" } : {}), metadata: {} };
    case "cursor":
      return { hook_event_name: event, conversation_id: "c-test", generation_id: "g-test", workspace_roots: ["/tmp"], ...(event === "beforeShellExecution" ? { command: "ls", cwd: "/tmp" } : {}), ...(event === "preToolUse" || event === "beforeMCPExecution" ? { tool_name: "Shell", tool_input: { command: "ls" } } : {}), ...(event === "beforeReadFile" || event === "afterFileEdit" ? { file_path: "/tmp/a.txt" } : {}), ...(event === "beforeSubmitPrompt" ? { prompt: "hi" } : {}) };
    case "vscode":
      return { sessionId: "s-test", hookEventName: event, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/tmp", transcript_path: "/tmp/t.json", ...(event.includes("ToolUse") ? { tool_name: "runInTerminal", tool_input: { command: "ls" }, tool_use_id: "tool-test" } : {}), ...(event === "UserPromptSubmit" ? { prompt: "hi" } : {}) };
    case "claude-code":
      return { session_id: "s-test", transcript_path: "/tmp/t.jsonl", cwd: "/tmp", permission_mode: "default", hook_event_name: event, ...(event.includes("ToolUse") || event === "PermissionRequest" ? { tool_name: "Bash", tool_input: { command: "ls" }, tool_use_id: "toolu-test" } : {}), ...(event === "UserPromptSubmit" ? { prompt: "hi" } : {}) };
    default:
      return { session_id: "s-test", transcript_path: "/tmp/t.jsonl", cwd: "/tmp", hook_event_name: event, timestamp: "2026-01-01T00:00:00Z", ...(event.endsWith("Tool") ? { tool_name: "run_shell_command", tool_input: { command: "ls" } } : {}), ...(event === "BeforeAgent" ? { prompt: "hi" } : {}) };
  }
}

/** The zod v4 definition fields read here. */
interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  options?: readonly z.ZodType[];
  values?: readonly unknown[];
  entries?: Readonly<Record<string, unknown>>;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { def: Def }).def;

/** A placeholder value of `schema`'s type; `undefined` when the field may be left out. */
function placeholder(schema: z.ZodType, depth = 0): unknown {
  if (schema.safeParse(undefined).success || depth > 8) return undefined;
  const def = defOf(schema);
  switch (def.type) {
    case "string":
      return "example";
    case "number":
    case "int":
      return 0;
    case "boolean":
      return false;
    case "literal":
      return def.values?.[0];
    case "enum":
      return Object.values(def.entries ?? {})[0];
    case "array":
      return [];
    case "record":
      return {};
    case "object":
      return fill({}, schema, depth + 1);
    case "union":
      return def.options !== undefined && def.options.length > 0 ? placeholder(def.options[0]!, depth + 1) : undefined;
    case "nullable":
    case "nonoptional":
    case "readonly":
      return def.innerType !== undefined ? placeholder(def.innerType, depth + 1) : null;
    case "pipe":
      return def.in !== undefined ? placeholder(def.in, depth + 1) : undefined;
    default:
      // unknown, any, and anything else a required field may be: an empty string is JSON of every kind.
      return "";
  }
}

/** `base` with every required field of the object `schema` that it lacks. */
function fill(base: NativeObject, schema: z.ZodType, depth: number): NativeObject {
  const def = defOf(schema);
  if (def.type !== "object" || def.shape === undefined) return base;
  const out: NativeObject = { ...base };
  for (const [key, field] of Object.entries(def.shape)) {
    if (Object.hasOwn(out, key)) continue;
    const value = placeholder(field, depth);
    if (value !== undefined) out[key] = value as NativeObject[string];
  }
  return out;
}

/**
 * A sample native input of `event` that `profile.validateInput` accepts (see the module comment).
 * A profile without an input schema gets the base alone.
 */
export function sampleInput(profile: Pick<EventProfile, "id" | "inputSchema">, event: string): NativeObject {
  const base = baseInput(profile.id, event);
  const schema = profile.inputSchema?.(event);
  return schema === undefined ? base : fill(base, schema, 0);
}
