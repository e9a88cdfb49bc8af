/**
 * The `vscode` event profile: the eight agent hook events of VS Code (Copilot agent mode, background and
 * cloud agents), read from its hooks reference (code.visualstudio.com/docs/agents/reference/
 * hooks-reference, 2026-11). VS Code reads Claude Code's hook format (it loads `.claude/settings.json`
 * hooks too) with a subset of its events and fields, so the fold is Claude Code's (claude-code/fold.ts):
 * when several hooks answer a tool call "the most restrictive decision wins" (deny > ask > allow), the
 * last `updatedInput` in plan order is the rewrite, contexts and messages are joined. Pure: no I/O.
 *
 * Differences from claude-code: the common input says `sessionId` and `hookEventName` (the Claude
 * spellings are accepted too); the default hook timeout is 30 s; VS Code checks an `updatedInput`
 * against the tool's own input schema before using it, and so does this profile, per hook, for the
 * built-in tools (tool-schemas.ts; other tools: an object); UserPromptSubmit and PreCompact read the
 * common output only.
 *
 * @example
 * ```ts
 * import { vscodeProfile } from "./profiles/vscode/index.js";
 * const out = (d: string) => ({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: d } });
 * vscodeProfile.reduce([out("allow"), out("ask"), out("deny")], "PreToolUse", { strict: false, settings: {} });
 * // { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" } }
 * ```
 *
 * @module
 */
import { z } from "zod";
import { VcpError } from "../../errors.js";
import { reduceClaude } from "../claude-code/fold.js";
import {
  MATCH_ALL,
  agentSettingsSchema,
  answerFieldsOf,
  compileSearch,
  isObject,
  matchedField,
  matchesEverything,
  specificOf,
  namesOrPattern,
  nativeSchemas,
  presentJson,
  sessionIdAt,
} from "../common/native.js";
import { promptSubject, reasonAt, toolSubject } from "../common/subject.js";
import { EXIT_2_WITHOUT_REASON, readCommandResult } from "../common/command-result.js";
import type { CommandResult, CompiledMatcher, EventProfile, EventSpec, NativeObject, OutputMisfit, ParsedCommand, Verdict } from "../types.js";
import { toolInputProblem } from "./tool-schemas.js";
import type { HookEventName } from "./types.js";

type Refusal = "permission" | "block" | "stop";

interface Row {
  readonly matcher?: string;
  readonly pre: boolean;
  readonly can_block: boolean;
  readonly refusal: Refusal;
  readonly input: z.ZodRawShape;
  /** Reads `decision: "block"` with a reason. */
  readonly decision?: boolean;
  readonly specific?: readonly string[];
}

const text = z.string();
const optionalText = z.string().optional();
const tool = { tool_name: matchedField(), tool_input: z.record(z.string(), z.unknown()), tool_use_id: optionalText };

// One row per event, in the order of the VS Code hooks reference.
const ROWS: Readonly<Record<HookEventName, Row>> = {
  SessionStart: { pre: true, can_block: false, refusal: "stop", input: { source: optionalText }, specific: ["additionalContext"] },
  UserPromptSubmit: { pre: true, can_block: false, refusal: "stop", input: { prompt: text } },
  PreToolUse: { matcher: "tool_name", pre: true, can_block: true, refusal: "permission", input: tool, specific: ["permissionDecision", "permissionDecisionReason", "updatedInput", "additionalContext"] },
  PostToolUse: { matcher: "tool_name", pre: false, can_block: true, refusal: "block", input: { ...tool, tool_response: z.unknown().optional() }, decision: true, specific: ["additionalContext"] },
  PreCompact: { pre: true, can_block: false, refusal: "stop", input: { trigger: optionalText } },
  SubagentStart: { matcher: "agent_type", pre: true, can_block: false, refusal: "stop", input: { agent_id: optionalText, agent_type: matchedField().optional() }, specific: ["additionalContext"] },
  SubagentStop: { matcher: "agent_type", pre: true, can_block: true, refusal: "block", input: { agent_id: optionalText, agent_type: matchedField().optional(), stop_hook_active: z.boolean().optional() }, decision: true },
  Stop: { pre: true, can_block: true, refusal: "block", input: { stop_hook_active: z.boolean().optional() }, decision: true },
};

export const VSCODE_EVENTS = Object.keys(ROWS) as readonly HookEventName[];

const SPECIFIC_TYPES: Readonly<Record<string, z.ZodType>> = {
  permissionDecision: z.enum(["allow", "deny", "ask"]),
  permissionDecisionReason: z.string(),
  updatedInput: z.record(z.string(), z.unknown()),
  additionalContext: z.string(),
};

interface Compiled {
  readonly spec: EventSpec;
  readonly input: z.ZodType;
  readonly output: z.ZodType;
  readonly refusal: Refusal;
}

function compile(event: HookEventName, row: Row): Compiled {
  const name = z.literal(event, { error: `must be "${event}"` }).optional();
  const inner: Record<string, z.ZodType> = {};
  for (const field of row.specific ?? []) inner[field] = SPECIFIC_TYPES[field]!.optional();
  return {
    spec: {
      ...(row.matcher !== undefined ? { matcher: row.matcher } : {}),
      pre: row.pre,
      can_block: row.can_block,
      modifiable: ["continue", "stopReason", ...(row.decision === true ? ["decision"] : []), ...(row.specific ?? []).filter((f) => f !== "additionalContext").map((f) => `hookSpecificOutput.${f}`)],
    },
    input: z
      .looseObject({ sessionId: optionalText, session_id: optionalText, hookEventName: name, hook_event_name: name, timestamp: optionalText, cwd: optionalText, transcript_path: optionalText, ...row.input })
      .refine((i) => i.hookEventName !== undefined || i.hook_event_name !== undefined, { message: `hookEventName: must be "${event}"`, path: ["hookEventName"] }),
    output: z.looseObject({
      continue: z.boolean().optional(),
      stopReason: optionalText,
      systemMessage: optionalText,
      ...(row.decision === true ? { decision: z.literal("block").optional(), reason: optionalText } : {}),
      ...(row.specific !== undefined ? { hookSpecificOutput: z.looseObject({ hookEventName: z.literal(event, { error: `must be "${event}" (the event this hook runs for)` }).optional(), ...inner }).optional() } : {}),
    }),
    refusal: row.refusal,
  };
}

const TABLE: Readonly<Record<HookEventName, Compiled>> = Object.freeze(
  Object.fromEntries(VSCODE_EVENTS.map((e) => [e, compile(e, ROWS[e])])) as Record<HookEventName, Compiled>,
);
const isVscodeEvent = (event: string): event is HookEventName => Object.hasOwn(TABLE, event);
const unknownEvent = (event: string) => `unknown vscode event ${JSON.stringify(event)} (known: ${VSCODE_EVENTS.join(", ")})`;
/** Names a newer VS Code may add (PascalCase like all eight). */
const FUTURE_EVENT = /^[A-Z][A-Za-z0-9]{1,63}$/;
/** A matcher of plain names is a list of exact names, as in Claude Code's format; anything else an unanchored regex. */

function blockingAnswer(reason: string, event: HookEventName): NativeObject {
  // SECURITY: the most restrictive answer the event can carry.
  switch (TABLE[event].refusal) {
    case "permission":
      return { hookSpecificOutput: { hookEventName: event, permissionDecision: "deny", permissionDecisionReason: reason } };
    case "block":
      return { decision: "block", reason };
    case "stop":
      return { continue: false, stopReason: reason };
  }
}

function failureOutput(hook: string, why: string, failClosed: boolean, event: string): NativeObject {
  if (!failClosed || !isVscodeEvent(event)) return { systemMessage: `Warning: ${hook}: ${why}` };
  return blockingAnswer(`fail-closed: ${hook}: ${why}`, event);
}

function compileMatcher(pattern: string | undefined, event: string): CompiledMatcher {
  if (!isVscodeEvent(event)) throw new VcpError("INVALID_HOOK", unknownEvent(event), { field: "event", event });
  const field = TABLE[event].spec.matcher;
  if (matchesEverything(pattern) || field === undefined) return MATCH_ALL;
  const trimmed = pattern!.trim();
  return namesOrPattern(trimmed, (input) => input[field], (p) => compileSearch(p, `vscode ${event}`));
}

function verdictOf(output: NativeObject, event: string): Verdict {
  if (!isVscodeEvent(event)) return "observe";
  const hso = specificOf(output);
  if (event === "PreToolUse") {
    if (hso?.["permissionDecision"] === "deny" || output["continue"] === false) return "block";
    if (hso?.["permissionDecision"] === "ask") return "ask";
    return isObject(hso?.["updatedInput"]) ? "modify" : "allow";
  }
  if (output["decision"] === "block" && TABLE[event].spec.can_block) return "block";
  return output["continue"] === false ? "block" : "allow";
}

/**
 * Read a finished VS Code command hook: exit 0 ⇒ stdout JSON; exit 2 ⇒ a blocking error with stderr
 * as the reason (shown to the model); any other code ⇒ a non-blocking warning, the agent goes on.
 *
 * @example
 * ```ts
 * parseCommandResult({ exitCode: 2, stdout: "", stderr: "no" }, "h", "Stop").output; // { decision: "block", reason: "no" }
 * ```
 */
export function parseCommandResult(result: CommandResult, hook: string, event: string): ParsedCommand {
  return readCommandResult(result, {
    failed: (why) => failureOutput(hook, why, false, event),
    exitCode: (code, stderr) => (code === 2 && isVscodeEvent(event) ? { output: blockingAnswer(stderr || EXIT_2_WITHOUT_REASON, event) } : undefined),
  });
}

/**
 * A PreToolUse `updatedInput` checked against the input schema of the tool it is for, as VS Code checks
 * it before use (tool-schemas.ts). VS Code discards a rewrite that does not fit and keeps the decision,
 * so the tool would run its original input under that decision: here the misfit is the hook's invalid
 * output instead — fail_closed denies naming the field; otherwise the rewrite is dropped, the rest of
 * the output (its decision, reason, context) stands, with a warning the user sees.
 */
function checkOutput(output: NativeObject, input: NativeObject, event: string, hook: string): OutputMisfit | undefined {
  if (event !== "PreToolUse") return undefined;
  const hso = specificOf(output);
  const toolName = input["tool_name"];
  if (hso === undefined || !Object.hasOwn(hso, "updatedInput") || typeof toolName !== "string") return undefined;
  const problem = toolInputProblem(toolName, hso["updatedInput"], "hookSpecificOutput.updatedInput");
  if (problem === undefined) return undefined;
  const error = `${problem.field}: ${problem.rule} (the input schema of VS Code's ${toolName} tool)`;
  const { updatedInput: _dropped, ...specific } = hso;
  const warning = `Warning: ${hook}: ${error}; the rewrite was dropped`;
  const said = output["systemMessage"];
  return { error, kept: { ...output, systemMessage: typeof said === "string" && said !== "" ? `${said}\n${warning}` : warning, hookSpecificOutput: specific } };
}

/**
 * VS Code's `editFiles` names its files in a `files` list (hooks reference, PreToolUse input): the
 * subject's path is the first, with how many more. Other tool inputs are returned as they are.
 */
function withFilesPath(toolInput: unknown): unknown {
  if (!isObject(toolInput) || toolInput["path"] !== undefined || !Array.isArray(toolInput["files"])) return toolInput;
  const files = toolInput["files"].filter((f): f is string => typeof f === "string" && f !== "");
  if (files.length === 0) return toolInput;
  return { ...toolInput, path: files.length === 1 ? files[0] : `${files[0]} (+${files.length - 1} more)` };
}

export const vscodeProfile: EventProfile = {
  id: "vscode",
  version: "1.x",
  upstream: { repo: "microsoft/vscode", commit: "docs:code.visualstudio.com/docs/agents/reference/hooks-reference@2026-11" },
  events: Object.freeze(Object.fromEntries(VSCODE_EVENTS.map((e) => [e, TABLE[e].spec]))) as Readonly<Record<HookEventName, EventSpec>>,
  unknownEventPattern: FUTURE_EVENT,
  ordering: "priority_desc",
  // VS Code runs the hooks of an event in parallel; here each gets the original input, folded in plan order.
  execution: "parallel",
  // `timeout` in seconds, default 30; the sandbox caps any hook at 30 s.
  timeouts: { default_ms: 30_000, max_ms: 30_000, config_unit: "s" },
  failure: { default: "open", term_grace_ms: 5_000 },
  settingsSchema: agentSettingsSchema,
  strictFixes: [],
  // `sessionId` (VS Code) or `session_id` (the Claude spelling).
  sessionIdOf: sessionIdAt("sessionId", "session_id"),
  subjectOf: (input, event) => (event === "UserPromptSubmit" ? promptSubject(input["prompt"]) : toolSubject(input["tool_name"], withFilesPath(input["tool_input"]))),
  reasonOf: (output) => reasonAt(output, ["hookSpecificOutput.permissionDecisionReason", "reason", "stopReason", "systemMessage"]),
  ...nativeSchemas({ inputOf: (e) => (isVscodeEvent(e) ? TABLE[e].input : undefined), outputOf: (e) => (isVscodeEvent(e) ? TABLE[e].output : undefined), unknownEvent }),
  compileMatcher,
  failureOutput: (hook, why, failClosed, event) => failureOutput(hook, why, failClosed, event),
  checkOutput,
  answerFields: (output) => answerFieldsOf(output, { continue: true }),
  verdictOf,
  chainInput(input, output, event) {
    const hso = specificOf(output);
    return event === "PreToolUse" && isObject(hso?.["updatedInput"]) ? { ...input, tool_input: hso["updatedInput"] } : input;
  },
  // Claude Code's merge rules on the events VS Code shares with it: deny > ask > allow, last updatedInput in plan order.
  reduce: (outputs, event) => (isVscodeEvent(event) ? reduceClaude(outputs, event) : {}),
  present: presentJson,
  refusalAnswer: (reason, event) => ({ native: isVscodeEvent(event) ? reduceClaude([blockingAnswer(reason, event)], event) : {}, exit_code: 2, stderr: reason }),
  parseCommandResult,
};

export type { CommandResult, ParsedCommand } from "../types.js";
export type * from "./types.js";
