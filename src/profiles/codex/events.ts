/**
 * The 12 hook events of Codex 0.171.0 as one table: what each event's matcher tests, its input fields,
 * the output fields Codex reads, and how it is refused. Everything the profile does per event (validate,
 * match, decode, fold, refuse) reads this table; the schemas are compiled once here. Pure: no I/O.
 *
 * Source (read 2026-11-28): the command input/output JSON schemas bundled in the published binary
 * `@openai/codex@0.171.0-linux-x64` (`pre-tool-use.command.input` … `interrupt.command.output`, every one
 * `additionalProperties: false`), and openai/codex `codex-rs/hooks/src/engine/output_parser.rs` (which
 * outputs Codex refuses as "unsupported": a refused output makes the hook a failed one, and Codex goes
 * on without it) and `events/common.rs` (which events have matchers).
 *
 * @module
 */
import { z } from "zod";
import { matchedField } from "../common/native.js";
import type { EventSpec } from "../types.js";
import type { HookEventName } from "./types.js";

/**
 * How a refusal of the event is said. `permission`: PreToolUse `permissionDecision: "deny"`; `request`:
 * PermissionRequest `decision.behavior: "deny"`; `block`: `decision: "block"` with a reason; `stop`:
 * `continue: false` (events that cannot block, but can end the run); `none`: the event cannot be refused
 * (Interrupt, SessionEnd: Codex reads at most a `systemMessage`).
 */
export type RefusalForm = "permission" | "request" | "block" | "stop" | "none";

export interface CodexEvent {
  readonly spec: EventSpec;
  readonly input: z.ZodType;
  readonly output: z.ZodType;
  /** The top-level output fields Codex's schema has for the event. */
  readonly topLevel: readonly string[];
  /** The hookSpecificOutput fields it reads. */
  readonly specific: readonly string[];
  readonly refusal: RefusalForm;
}

const text = z.string();
const optionalText = z.string().optional();
const nullableText = z.string().nullable().optional();
const record = z.record(z.string(), z.unknown());
const required = z.unknown().refine((v) => v !== undefined, "is required");
const trigger = z.enum(["manual", "auto"]);

/** Input fields of every event. Codex always sends them; only the two an answer depends on are required here. */
function baseShape(event: HookEventName) {
  return {
    session_id: z.string().min(1),
    hook_event_name: z.literal(event, { error: `must be "${event}"` }),
    cwd: optionalText,
    transcript_path: nullableText,
    model: optionalText,
    permission_mode: optionalText,
    turn_id: optionalText,
    agent_id: optionalText,
    agent_type: optionalText,
  };
}

const tool = { tool_name: matchedField(), tool_input: record, tool_use_id: optionalText };

/** Output fields: Codex's universal four, the legacy decision pair, and those of hookSpecificOutput. */
const UNIVERSAL = ["continue", "stopReason", "suppressOutput", "systemMessage"] as const;
const TOP_TYPES: Readonly<Record<string, z.ZodType>> = {
  continue: z.boolean(),
  stopReason: z.string(),
  suppressOutput: z.boolean(),
  systemMessage: z.string(),
  reason: z.string(),
};
const SPECIFIC_TYPES: Readonly<Record<string, z.ZodType>> = {
  // `ask` and a bare `allow` are taken from an action and translated (fold.ts): Codex refuses both.
  permissionDecision: z.enum(["allow", "deny", "ask"]),
  permissionDecisionReason: z.string(),
  updatedInput: record,
  additionalContext: z.string(),
  updatedMCPToolOutput: z.unknown(),
  // PermissionRequest: Codex 0.171 fails a hook that sets updatedInput, updatedPermissions or interrupt:
  // they are refused here too, so the policy's author sees why rather than a silent no-op.
  decision: z.strictObject({ behavior: z.enum(["allow", "deny"]), message: z.string().optional() }),
};

interface Row {
  matcher?: string;
  pre: boolean;
  can_block: boolean;
  advisory?: boolean;
  refusal: RefusalForm;
  input: z.ZodRawShape;
  /** Top-level output fields besides `systemMessage` (UNIVERSAL by default). */
  top?: readonly string[];
  /** The legacy `decision` values the event reads. */
  decision?: readonly [string, ...string[]];
  specific?: readonly string[];
}

// One row per event, in Codex's own order.
const ROWS: Readonly<Record<HookEventName, Row>> = {
  PreToolUse: {
    matcher: "tool_name", pre: true, can_block: true, refusal: "permission", input: tool,
    decision: ["approve", "block"], specific: ["permissionDecision", "permissionDecisionReason", "updatedInput", "additionalContext"],
  },
  PermissionRequest: { matcher: "tool_name", pre: true, can_block: true, refusal: "request", input: tool, specific: ["decision"] },
  PostToolUse: {
    matcher: "tool_name", pre: false, can_block: true, refusal: "block",
    input: { ...tool, tool_response: required }, decision: ["block"], specific: ["additionalContext", "updatedMCPToolOutput"],
  },
  PreCompact: { matcher: "trigger", pre: true, can_block: false, refusal: "stop", input: { trigger } },
  PostCompact: { matcher: "trigger", pre: false, can_block: false, advisory: true, refusal: "stop", input: { trigger } },
  SessionStart: { matcher: "source", pre: true, can_block: false, refusal: "stop", input: { source: matchedField() }, specific: ["additionalContext"] },
  SessionEnd: { matcher: "reason", pre: false, can_block: false, advisory: true, refusal: "none", input: { reason: matchedField() }, top: [] },
  UserPromptSubmit: { pre: true, can_block: true, refusal: "block", input: { prompt: text }, decision: ["block"], specific: ["additionalContext"] },
  SubagentStart: { matcher: "agent_type", pre: true, can_block: false, refusal: "stop", input: { agent_id: text, agent_type: matchedField() }, specific: ["additionalContext"] },
  SubagentStop: {
    matcher: "agent_type", pre: true, can_block: true, refusal: "block",
    input: { agent_id: text, agent_type: matchedField(), agent_transcript_path: nullableText, last_assistant_message: nullableText, stop_hook_active: z.boolean().optional() },
    decision: ["block"],
  },
  Stop: { pre: true, can_block: true, refusal: "block", input: { last_assistant_message: nullableText, stop_hook_active: z.boolean().optional() }, decision: ["block"] },
  Interrupt: { pre: false, can_block: false, advisory: true, refusal: "none", input: {}, top: [] },
};

/** Codex 0.171.0's event list, in its own order. */
export const CODEX_EVENTS = Object.keys(ROWS) as readonly HookEventName[];

function compile(event: HookEventName, row: Row): CodexEvent {
  const specific = row.specific ?? [];
  const top = [...(row.top ?? UNIVERSAL.filter((f) => f !== "systemMessage")), "systemMessage", ...(row.decision !== undefined ? ["reason"] : [])];
  const shape: Record<string, z.ZodType> = {};
  for (const field of top) shape[field] = TOP_TYPES[field]!.optional();
  if (row.decision !== undefined) shape["decision"] = z.enum(row.decision).optional();
  if (specific.length > 0) {
    const inner: Record<string, z.ZodType> = {};
    for (const field of specific) inner[field] = SPECIFIC_TYPES[field]!.optional();
    shape["hookSpecificOutput"] = z.strictObject({ hookEventName: z.literal(event, { error: `must be "${event}" (the event this hook runs for)` }), ...inner }).optional();
  }
  return {
    // Strict like Codex's own schemas: a field Codex does not have for the event is refused by name,
    // where Codex would fail the hook as "invalid JSON output".
    output: z.strictObject(shape),
    input: z.looseObject({ ...baseShape(event), ...row.input }),
    topLevel: [...top, ...(row.decision !== undefined ? ["decision"] : [])],
    specific,
    refusal: row.refusal,
    spec: {
      ...(row.matcher !== undefined ? { matcher: row.matcher } : {}),
      pre: row.pre,
      can_block: row.can_block,
      ...(row.advisory === true ? { advisory: true } : {}),
      modifiable: [
        ...top.filter((f) => f === "continue" || f === "stopReason" || f === "suppressOutput"),
        ...(row.decision !== undefined ? ["decision"] : []),
        ...specific.filter((f) => f !== "additionalContext").map((f) => `hookSpecificOutput.${f}`),
      ],
    },
  };
}

export const EVENT_TABLE: Readonly<Record<HookEventName, CodexEvent>> = Object.freeze(
  Object.fromEntries(CODEX_EVENTS.map((event) => [event, compile(event, ROWS[event])])) as Record<HookEventName, CodexEvent>,
);

export const EVENT_SPECS: Readonly<Record<HookEventName, EventSpec>> = Object.freeze(
  Object.fromEntries(CODEX_EVENTS.map((event) => [event, EVENT_TABLE[event].spec])) as Record<HookEventName, EventSpec>,
);

export function isCodexEvent(event: string): event is HookEventName {
  return Object.hasOwn(EVENT_TABLE, event);
}
