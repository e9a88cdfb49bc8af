/**
 * The `cursor` event profile: Cursor's agent hooks (`~/.cursor/hooks.json`, `version: 1`), read from its
 * hooks documentation (cursor.com/docs/agent/hooks, 2026-11). Cursor splits "before a tool" into
 * beforeShellExecution, beforeMCPExecution, beforeReadFile (and the generic preToolUse), each answered
 * with `permission` allow | deny | ask and two messages (`user_message` for the user, `agent_message` for
 * the model); beforeSubmitPrompt with `continue`; stop and subagentStop with a `followup_message` that
 * keeps the agent going; the after* events are fire-and-forget. Pure: no I/O.
 *
 *   permission          deny > ask > allow; the messages of the winning level joined "\n"
 *   updated_input       preToolUse: the last in plan order, dropped on a deny
 *   continue            beforeSubmitPrompt: false if any hook says false; user_message joined
 *   followup_message    stop, subagentStop: joined "\n" in plan order
 *   additional_context  sessionStart, postToolUse: joined "\n"
 *
 * Cursor fails open when a hook crashes or times out unless the hook sets `failClosed: true`; here a
 * `fail_closed` hook that fails denies, and `init` / `import` write `failClosed: true` on the guard events.
 *
 * @example
 * ```ts
 * import { cursorProfile } from "./profiles/cursor/index.js";
 * cursorProfile.reduce([{ permission: "ask", agent_message: "sure?" }, { permission: "deny", agent_message: "no" }], "beforeShellExecution", { strict: false, settings: {} });
 * // { permission: "deny", agent_message: "no" }
 * ```
 *
 * @module
 */
import { z } from "zod";
import { VcpError } from "../../errors.js";
import {
  MATCH_ALL,
  agentSettingsSchema,
  answerFieldsOf,
  compileSearch,
  isObject,
  matchedField,
  matchesEverything,
  parseJsonObject,
  namesOrPattern,
  nativeSchemas,
  presentJson,
  sessionIdAt,
} from "../common/native.js";
import { promptSubject, reasonAt, toolSubject } from "../common/subject.js";
import { EXIT_2_WITHOUT_REASON, readCommandResult } from "../common/command-result.js";
import type { CommandResult, CompiledMatcher, EventProfile, EventSpec, NativeObject, ParsedCommand, Verdict } from "../types.js";
import type { HookEventName } from "./types.js";

/** The answer family of an event: what its output may say and how it is refused. */
type Family = "permission" | "prompt" | "followup" | "context" | "observe";

interface Row {
  readonly family: Family;
  readonly matcher?: string;
  readonly input: z.ZodRawShape;
}

const text = z.string();
const optionalText = z.string().optional();
const toolInput = z.union([z.record(z.string(), z.unknown()), z.string()]);

const ROWS: Readonly<Record<HookEventName, Row>> = {
  beforeShellExecution: { family: "permission", input: { command: text, cwd: optionalText } },
  beforeMCPExecution: { family: "permission", matcher: "tool_name", input: { tool_name: matchedField(), tool_input: toolInput, url: optionalText, command: optionalText } },
  beforeReadFile: { family: "permission", input: { file_path: text, content: optionalText, attachments: z.array(z.unknown()).optional() } },
  preToolUse: { family: "permission", matcher: "tool_name", input: { tool_name: matchedField(), tool_input: toolInput } },
  beforeSubmitPrompt: { family: "prompt", input: { prompt: text, attachments: z.array(z.unknown()).optional() } },
  afterShellExecution: { family: "observe", input: { command: text, output: optionalText, duration: z.number().optional() } },
  afterMCPExecution: { family: "observe", matcher: "tool_name", input: { tool_name: matchedField(), tool_input: toolInput.optional(), result_json: optionalText } },
  afterFileEdit: { family: "observe", input: { file_path: text, edits: z.array(z.unknown()).optional() } },
  postToolUse: { family: "context", matcher: "tool_name", input: { tool_name: matchedField(), tool_input: toolInput.optional(), tool_output: z.unknown().optional() } },
  afterAgentResponse: { family: "observe", input: { text: optionalText } },
  afterAgentThought: { family: "observe", input: { text: optionalText } },
  sessionStart: { family: "context", input: {} },
  sessionEnd: { family: "observe", input: {} },
  preCompact: { family: "observe", input: {} },
  stop: { family: "followup", input: { status: optionalText, loop_count: z.number().optional() } },
  subagentStop: { family: "followup", input: { status: optionalText, loop_count: z.number().optional() } },
};

export const CURSOR_EVENTS = Object.keys(ROWS) as readonly HookEventName[];

const OUTPUTS: Readonly<Record<Family, z.ZodRawShape>> = {
  permission: { permission: z.enum(["allow", "deny", "ask"]).optional(), user_message: optionalText, agent_message: optionalText, updated_input: z.record(z.string(), z.unknown()).optional() },
  prompt: { continue: z.boolean().optional(), user_message: optionalText },
  followup: { followup_message: optionalText },
  context: { additional_context: optionalText },
  observe: {},
};

interface Compiled {
  readonly spec: EventSpec;
  readonly input: z.ZodType;
  readonly output: z.ZodType;
  readonly family: Family;
}

function compile(event: HookEventName, row: Row): Compiled {
  return {
    family: row.family,
    spec: {
      ...(row.matcher !== undefined ? { matcher: row.matcher } : {}),
      pre: row.family === "permission" || row.family === "prompt",
      can_block: row.family === "permission" || row.family === "prompt",
      ...(row.family === "observe" ? { advisory: true } : {}),
      modifiable: row.family === "permission" ? ["permission", ...(event === "preToolUse" ? ["updated_input"] : [])] : row.family === "prompt" ? ["continue"] : row.family === "followup" ? ["followup_message"] : [],
    },
    input: z.looseObject({
      hook_event_name: z.literal(event, { error: `must be "${event}"` }),
      conversation_id: z.string().min(1),
      generation_id: optionalText,
      workspace_roots: z.array(z.string()).optional(),
      model: optionalText,
      cursor_version: optionalText,
      user_email: optionalText,
      ...row.input,
    }),
    // Unknown fields are refused by name: Cursor would ignore them, and the policy's author would not know.
    output: z.strictObject(event === "preToolUse" ? OUTPUTS.permission : row.family === "permission" ? { ...OUTPUTS.permission, updated_input: z.never({ error: "only preToolUse takes updated_input" }).optional() } : OUTPUTS[row.family]),
  };
}

const TABLE: Readonly<Record<HookEventName, Compiled>> = Object.freeze(Object.fromEntries(CURSOR_EVENTS.map((e) => [e, compile(e, ROWS[e])])) as Record<HookEventName, Compiled>);
const isCursorEvent = (event: string): event is HookEventName => Object.hasOwn(TABLE, event);
const unknownEvent = (event: string) => `unknown cursor event ${JSON.stringify(event)} (known: ${CURSOR_EVENTS.join(", ")})`;
/** Names a newer Cursor may add (camelCase like all of its events). */
const FUTURE_EVENT = /^[a-z][A-Za-z0-9]{1,63}$/;
const RANK: Readonly<Record<string, number>> = { allow: 0, ask: 1, deny: 2 };

const nonEmpty = (v: unknown): v is string => typeof v === "string" && v.trim() !== "";
const joined = (parts: readonly string[]) => (parts.length > 0 ? parts.join("\n") : undefined);

/**
 * Fold outputs in plan order (see the module comment); `[]` is `{}` (Cursor: no opinion).
 *
 * @example
 * ```ts
 * reduceCursor([{ followup_message: "run the tests" }, { followup_message: "then lint" }], "stop"); // { followup_message: "run the tests\nthen lint" }
 * ```
 */
export function reduceCursor(outputs: readonly NativeObject[], event: string): NativeObject {
  if (outputs.length === 0 || !isCursorEvent(event)) return {};
  const family = TABLE[event].family;
  const answer: NativeObject = {};
  if (family === "permission") {
    let level = -1;
    let users: string[] = [];
    let agents: string[] = [];
    let rewrite: NativeObject | undefined;
    for (const o of outputs) {
      const rank = typeof o["permission"] === "string" ? RANK[o["permission"]] : undefined;
      if (rank === undefined) continue;
      if (rank > level) {
        level = rank;
        users = [];
        agents = [];
      }
      if (rank === level) {
        if (nonEmpty(o["user_message"])) users.push(o["user_message"]);
        if (nonEmpty(o["agent_message"])) agents.push(o["agent_message"]);
      }
      if (isObject(o["updated_input"])) rewrite = o["updated_input"];
    }
    if (level < 0) return {};
    answer["permission"] = Object.keys(RANK).find((k) => RANK[k] === level)!;
    const u = joined(users);
    const a = joined(agents);
    if (u !== undefined) answer["user_message"] = u;
    if (a !== undefined) answer["agent_message"] = a;
    if (level < RANK["deny"]! && rewrite !== undefined) answer["updated_input"] = rewrite;
    return answer;
  }
  if (family === "prompt") {
    const stopped = outputs.some((o) => o["continue"] === false);
    const users = outputs.filter((o) => o["continue"] === false || !stopped).map((o) => o["user_message"]).filter(nonEmpty);
    if (stopped) answer["continue"] = false;
    else if (outputs.some((o) => o["continue"] === true)) answer["continue"] = true;
    const u = joined(users);
    if (u !== undefined) answer["user_message"] = u;
    return answer;
  }
  const field = family === "followup" ? "followup_message" : family === "context" ? "additional_context" : undefined;
  if (field === undefined) return {};
  const text = joined(outputs.map((o) => o[field]).filter(nonEmpty));
  return text === undefined ? {} : { [field]: text };
}

/** The event's refusal carrying `reason`; events that cannot refuse say it where they can. */
function blockingAnswer(reason: string, event: HookEventName): NativeObject {
  // SECURITY: the most restrictive answer the event can carry.
  switch (TABLE[event].family) {
    case "permission":
      return { permission: "deny", user_message: reason, agent_message: reason };
    case "prompt":
      return { continue: false, user_message: reason };
    case "followup":
      // Cursor's stop "block": the agent is sent the reason and keeps going.
      return { followup_message: reason };
    case "context":
      return { additional_context: reason };
    case "observe":
      return {};
  }
}

function failureOutput(hook: string, why: string, failClosed: boolean, event: string): NativeObject {
  // Cursor has no warning channel on most events: a failed hook that does not fail closed contributes nothing.
  if (!failClosed || !isCursorEvent(event)) return {};
  return blockingAnswer(`fail-closed: ${hook}: ${why}`, event);
}

function compileMatcher(pattern: string | undefined, event: string): CompiledMatcher {
  if (!isCursorEvent(event)) throw new VcpError("INVALID_HOOK", unknownEvent(event), { field: "event", event });
  const field = TABLE[event].spec.matcher;
  if (matchesEverything(pattern) || field === undefined) return MATCH_ALL;
  const trimmed = pattern!.trim();
  return namesOrPattern(trimmed, (input) => input[field], (p) => compileSearch(p, `cursor ${event}`));
}

function verdictOf(output: NativeObject, event: string): Verdict {
  if (!isCursorEvent(event)) return "observe";
  const family = TABLE[event].family;
  if (family === "permission") {
    if (output["permission"] === "deny") return "block";
    if (output["permission"] === "ask") return "ask";
    return isObject(output["updated_input"]) ? "modify" : "allow";
  }
  if (family === "prompt") return output["continue"] === false ? "block" : "allow";
  if (family === "observe") return "observe";
  return nonEmpty(output["followup_message"]) ? "modify" : "allow";
}

/**
 * Read a finished Cursor command hook: exit 0 ⇒ stdout JSON; exit 2 ⇒ a deny (stderr as the message);
 * any other code, a signal or a timeout ⇒ a failed hook (Cursor goes on unless the hook is `failClosed`).
 *
 * @example
 * ```ts
 * parseCommandResult({ exitCode: 2, stdout: "", stderr: "no" }, "h", "beforeShellExecution").output;
 * // { permission: "deny", user_message: "no", agent_message: "no" }
 * ```
 */
export function parseCommandResult(result: CommandResult, hook: string, event: string): ParsedCommand {
  return readCommandResult(result, {
    failed: (why) => failureOutput(hook, why, false, event),
    exitCode: (code, stderr) =>
      code === 2 && isCursorEvent(event) && TABLE[event].spec.can_block ? { output: blockingAnswer(stderr || EXIT_2_WITHOUT_REASON, event) } : undefined,
  });
}

export const cursorProfile: EventProfile = {
  id: "cursor",
  version: "2.x",
  upstream: { repo: "cursor/cursor", commit: "docs:cursor.com/docs/agent/hooks@2026-11" },
  events: Object.freeze(Object.fromEntries(CURSOR_EVENTS.map((e) => [e, TABLE[e].spec]))) as Readonly<Record<HookEventName, EventSpec>>,
  unknownEventPattern: FUTURE_EVENT,
  ordering: "priority_desc",
  execution: "parallel",
  // `timeout` in seconds; the sandbox caps any hook at 30 s.
  timeouts: { default_ms: 30_000, max_ms: 30_000, config_unit: "s" },
  failure: { default: "open", term_grace_ms: 5_000 },
  settingsSchema: agentSettingsSchema,
  strictFixes: [],
  sessionIdOf: sessionIdAt("conversation_id"),
  subjectOf(input, event) {
    if (event === "beforeSubmitPrompt") return promptSubject(input["prompt"]);
    // The shell and file events name no tool: the subject is the command or the file, as the event's own tool.
    if (event === "beforeShellExecution" || event === "afterShellExecution") return toolSubject("shell", { command: input["command"] });
    if (event === "beforeReadFile" || event === "afterFileEdit") return toolSubject(event === "beforeReadFile" ? "read_file" : "edit_file", { path: input["file_path"] });
    const toolInput = typeof input["tool_input"] === "string" ? parseJsonObject(input["tool_input"]) : input["tool_input"];
    return toolSubject(input["tool_name"], toolInput);
  },
  reasonOf: (output) => reasonAt(output, ["agent_message", "user_message", "followup_message"]),
  ...nativeSchemas({ inputOf: (e) => (isCursorEvent(e) ? TABLE[e].input : undefined), outputOf: (e) => (isCursorEvent(e) ? TABLE[e].output : undefined), unknownEvent }),
  compileMatcher,
  failureOutput: (hook, why, failClosed, event) => failureOutput(hook, why, failClosed, event),
  answerFields: (output) => answerFieldsOf(output, { permission: "allow", continue: true }),
  verdictOf,
  chainInput: (input, output, event) => (event === "preToolUse" && output["permission"] !== "deny" && isObject(output["updated_input"]) ? { ...input, tool_input: output["updated_input"] } : input),
  reduce: (outputs, event) => reduceCursor(outputs, event),
  present: presentJson,
  refusalAnswer: (reason, event) => ({ native: isCursorEvent(event) ? reduceCursor([blockingAnswer(reason, event)], event) : {}, exit_code: 2, stderr: reason }),
  parseCommandResult,
};

export type { CommandResult, ParsedCommand } from "../types.js";
export type * from "./types.js";
