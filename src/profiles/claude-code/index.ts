/**
 * The `claude-code` event profile (PROFILES §3.3): Claude Code's ten hook events, native JSON in and
 * out. The native answer is usable as the whole 200 body of a Claude Code http hook (the route's
 * `?answer=native`, PROFILES §8.1). Pure: no I/O.
 *
 *   PreToolUse permission: deny > defer > ask > allow   (reasons of the winning level joined "\n")
 *   updatedInput:          the last hook in plan order that sets it replaces the whole tool_input
 *   additionalContext, systemMessage, stopReason: joined "\n";  continue:false, suppressOutput: any wins
 *   decision "block" (PostToolUse, UserPromptSubmit, Stop, SubagentStop): any block wins
 *   PermissionRequest decision.behavior: deny > allow
 *
 * @example
 * ```ts
 * import { claudeCodeProfile } from "./profiles/claude-code/index.js";
 * const deny = { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" } };
 * claudeCodeProfile.reduce([{}, deny], "PreToolUse", { strict: false, settings: {} }).hookSpecificOutput;
 * // { hookEventName: "PreToolUse", permissionDecision: "deny" }
 * ```
 *
 * @module
 */
import { z } from "zod";
import { VcpError } from "../../errors.js";
import {
  MATCH_ALL,
  baseInputShape,
  compileSearch,
  costedMatcher,
  fieldMatcher,
  matchedField,
  decodeNative,
  isObject,
  matchesEverything,
  parseJsonObject,
  sessionIdFrom,
  specificOf,
  answerFieldsOf,
  validateNative,
  agentSettingsSchema,
} from "../common/native.js";
import type { CommandResult, CompiledMatcher, EventProfile, ParsedCommand, EventSpec, NativeObject, Verdict } from "../types.js";
import type { HookEventName } from "./types.js";

export const CLAUDE_EVENTS = [
  "PreToolUse",
  "PostToolUse",
  "UserPromptSubmit",
  "Stop",
  "SubagentStop",
  "SessionStart",
  "SessionEnd",
  "PreCompact",
  "Notification",
  "PermissionRequest",
] as const satisfies readonly HookEventName[];

const CONTROLLED = ["decision", "continue", "stopReason", "suppressOutput"] as const;

const EVENTS: Readonly<Record<HookEventName, EventSpec>> = {
  PreToolUse: {
    matcher: "tool_name",
    pre: true,
    can_block: true,
    modifiable: [...CONTROLLED, "hookSpecificOutput.permissionDecision", "hookSpecificOutput.permissionDecisionReason", "hookSpecificOutput.updatedInput"],
  },
  PostToolUse: { matcher: "tool_name", pre: false, can_block: true, modifiable: [...CONTROLLED] },
  UserPromptSubmit: { pre: true, can_block: true, modifiable: [...CONTROLLED] },
  Stop: { pre: true, can_block: true, modifiable: [...CONTROLLED] },
  SubagentStop: { pre: true, can_block: true, modifiable: [...CONTROLLED] },
  SessionStart: { matcher: "source", pre: true, can_block: false, modifiable: [...CONTROLLED] },
  SessionEnd: { matcher: "reason", pre: false, can_block: false, advisory: true, modifiable: [...CONTROLLED] },
  PreCompact: { matcher: "trigger", pre: true, can_block: false, modifiable: [...CONTROLLED] },
  Notification: { matcher: "notification_type", pre: false, can_block: false, advisory: true, modifiable: [...CONTROLLED] },
  PermissionRequest: { matcher: "tool_name", pre: true, can_block: true, modifiable: [...CONTROLLED, "hookSpecificOutput.decision"] },
};

// ── schemas (compiled once) ──────────────────────────────────────────────────────────────────────
const record = z.record(z.string(), z.unknown());
function base(event: HookEventName) {
  return { ...baseInputShape(event), permission_mode: z.string().optional() };
}
const INPUTS: Readonly<Record<HookEventName, z.ZodType>> = {
  PreToolUse: z.looseObject({ ...base("PreToolUse"), tool_name: matchedField(), tool_input: record, tool_use_id: z.string().optional() }),
  PostToolUse: z.looseObject({
    ...base("PostToolUse"),
    tool_name: matchedField(),
    tool_input: record,
    tool_response: z.unknown().refine((v) => v !== undefined, "is required"),
    tool_use_id: z.string().optional(),
  }),
  UserPromptSubmit: z.looseObject({ ...base("UserPromptSubmit"), prompt: z.string() }),
  Stop: z.looseObject({ ...base("Stop"), stop_hook_active: z.boolean().optional() }),
  SubagentStop: z.looseObject({ ...base("SubagentStop"), stop_hook_active: z.boolean().optional() }),
  SessionStart: z.looseObject({ ...base("SessionStart"), source: z.enum(["startup", "resume", "clear", "compact"]) }),
  SessionEnd: z.looseObject({ ...base("SessionEnd"), reason: matchedField() }),
  PreCompact: z.looseObject({ ...base("PreCompact"), trigger: z.enum(["manual", "auto"]), custom_instructions: z.string().optional() }),
  Notification: z.looseObject({ ...base("Notification"), message: z.string(), notification_type: matchedField().optional() }),
  PermissionRequest: z.looseObject({ ...base("PermissionRequest"), tool_name: matchedField(), tool_input: record, permission_suggestions: z.array(z.unknown()).optional() }),
};

const OUTPUT_SCHEMA = z.looseObject({
  continue: z.boolean().optional(),
  stopReason: z.string().optional(),
  suppressOutput: z.boolean().optional(),
  systemMessage: z.string().optional(),
  decision: z.enum(["block", "approve"]).optional(),
  reason: z.string().optional(),
  hookSpecificOutput: z
    .looseObject({
      hookEventName: z.string().optional(),
      permissionDecision: z.enum(["allow", "deny", "ask", "defer"]).optional(),
      permissionDecisionReason: z.string().optional(),
      updatedInput: record.optional(),
      additionalContext: z.string().optional(),
      decision: z
        .looseObject({
          behavior: z.enum(["allow", "deny"]),
          updatedInput: record.optional(),
          message: z.string().optional(),
          interrupt: z.boolean().optional(),
        })
        .optional(),
    })
    .optional(),
});

// ── matching ─────────────────────────────────────────────────────────────────────────────────────
// A matcher of only letters, digits, `_` and `|` is a list of exact names (`Write` ≠ `NotebookWrite`);
// anything else is an unanchored regex (`mcp__memory__.*`, `^Bash`).
const PLAIN = /^[A-Za-z0-9_|]+$/;

function isClaudeEvent(event: string): event is HookEventName {
  return Object.hasOwn(EVENTS, event);
}

const unknownEvent = (event: string) => `unknown claude-code event ${JSON.stringify(event)} (known: ${CLAUDE_EVENTS.join(", ")})`;

/** Values that say nothing: `continue: true`, `suppressOutput: false`. A permission `allow` is a decision. */
const NEUTRAL: NativeObject = Object.freeze({ continue: true, suppressOutput: false });

// ── merge ────────────────────────────────────────────────────────────────────────────────────────
const PERMISSION_RANK: Readonly<Record<string, number>> = { allow: 1, ask: 2, defer: 3, deny: 4 };

/** PreToolUse permission of one output: `hookSpecificOutput.permissionDecision`, else the deprecated top-level decision. */
function permissionOf(output: NativeObject): { decision: string; reason?: string } | undefined {
  const hso = specificOf(output);
  const decision = hso?.["permissionDecision"];
  if (typeof decision === "string" && PERMISSION_RANK[decision] !== undefined) {
    const why = hso?.["permissionDecisionReason"];
    return { decision, reason: typeof why === "string" ? why : undefined };
  }
  const legacy = output["decision"];
  const reason = typeof output["reason"] === "string" ? output["reason"] : undefined;
  if (legacy === "approve") return { decision: "allow", reason };
  if (legacy === "block") return { decision: "deny", reason };
  return undefined;
}

function joinInto(target: NativeObject, key: string, parts: readonly string[]): void {
  if (parts.length > 0) target[key] = parts.join("\n");
}

/** Fold outputs in plan order; `[]` is the neutral answer `{}`. */
export function reduceClaude(outputs: readonly NativeObject[], event: string): NativeObject {
  if (outputs.length === 0) return {};
  const merged: NativeObject = {};
  const stopReasons: string[] = [];
  const systemMessages: string[] = [];
  const blockReasons: string[] = [];
  const contexts: string[] = [];
  let blocked = false;
  let permission: string | undefined;
  let permissionReasons: string[] = [];
  let updatedInput: NativeObject | undefined;
  let behavior: string | undefined;
  let messages: string[] = [];
  let requestInput: NativeObject | undefined;
  let interrupt = false;

  for (const output of outputs) {
    if (output["continue"] === false) {
      merged["continue"] = false;
      if (typeof output["stopReason"] === "string" && output["stopReason"] !== "") stopReasons.push(output["stopReason"]);
    }
    if (output["suppressOutput"] === true) merged["suppressOutput"] = true;
    if (typeof output["systemMessage"] === "string" && output["systemMessage"] !== "") systemMessages.push(output["systemMessage"]);
    const hso = specificOf(output);
    if (typeof hso?.["additionalContext"] === "string") contexts.push(hso["additionalContext"]);

    if (event === "PreToolUse") {
      const own = permissionOf(output);
      if (own !== undefined) {
        const rank = PERMISSION_RANK[own.decision]!;
        const current = permission === undefined ? 0 : PERMISSION_RANK[permission]!;
        if (rank > current) {
          permission = own.decision;
          permissionReasons = [];
        }
        if (rank >= current && own.reason !== undefined && own.reason !== "") permissionReasons.push(own.reason);
      }
      if (isObject(hso?.["updatedInput"])) updatedInput = hso["updatedInput"];
    } else if (event === "PermissionRequest") {
      const decision = hso?.["decision"];
      if (isObject(decision)) {
        const b = decision["behavior"];
        if (b === "deny") {
          if (behavior !== "deny") messages = [];
          behavior = "deny";
          if (typeof decision["message"] === "string" && decision["message"] !== "") messages.push(decision["message"]);
          if (decision["interrupt"] === true) interrupt = true;
        } else if (b === "allow") {
          behavior ??= "allow";
          if (isObject(decision["updatedInput"])) requestInput = decision["updatedInput"];
        }
      }
    } else if (output["decision"] === "block") {
      blocked = true;
      if (typeof output["reason"] === "string" && output["reason"] !== "") blockReasons.push(output["reason"]);
    }
  }

  joinInto(merged, "stopReason", stopReasons);
  joinInto(merged, "systemMessage", systemMessages);
  if (blocked) {
    merged["decision"] = "block";
    joinInto(merged, "reason", blockReasons);
  }
  const specific: NativeObject = {};
  if (permission !== undefined) {
    specific["permissionDecision"] = permission;
    joinInto(specific, "permissionDecisionReason", permissionReasons);
  }
  if (updatedInput !== undefined) specific["updatedInput"] = updatedInput;
  if (behavior !== undefined) {
    const decision: NativeObject = { behavior };
    if (behavior === "deny") {
      joinInto(decision, "message", messages);
      if (interrupt) decision["interrupt"] = true;
    } else if (requestInput !== undefined) {
      decision["updatedInput"] = requestInput;
    }
    specific["decision"] = decision;
  }
  joinInto(specific, "additionalContext", contexts);
  if (Object.keys(specific).length > 0) merged["hookSpecificOutput"] = { hookEventName: event, ...specific };
  return merged;
}

// ── failure ──────────────────────────────────────────────────────────────────────────────────────
function failureOutput(hook: string, why: string, failClosed: boolean, event: string): NativeObject {
  // A non-blocking error: Claude Code goes on; the message is shown to the user.
  if (!failClosed) return { systemMessage: `Warning: ${hook}: ${why}` };
  return blockingAnswer(`fail-closed: ${hook}: ${why}`, event);
}

/** The event's own refusal carrying `reason` (what exit 2 with `reason` on stderr amounts to). */
function blockingAnswer(reason: string, event: string): NativeObject {
  // SECURITY: the most restrictive answer the event can carry.
  if (event === "PreToolUse") return { hookSpecificOutput: { hookEventName: event, permissionDecision: "deny", permissionDecisionReason: reason } };
  if (event === "PermissionRequest") return { hookSpecificOutput: { hookEventName: event, decision: { behavior: "deny", message: reason } } };
  if (EVENTS[event as HookEventName]?.can_block === true) return { decision: "block", reason };
  return { continue: false, stopReason: reason };
}

/**
 * Read a finished Claude Code command hook: exit 0 ⇒ stdout JSON (plain text is context on
 * UserPromptSubmit and SessionStart, otherwise only shown in the transcript); exit 2 ⇒ blocking, stderr
 * to the model (stdout ignored; on events that cannot block, stderr is shown to the user); any other
 * code ⇒ a non-blocking error.
 *
 * @example
 * ```ts
 * parseCommandResult({ exitCode: 2, stdout: "", stderr: "no rm" }, "h", "PreToolUse").output;
 * // { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "no rm" } }
 * ```
 */
export function parseCommandResult(result: CommandResult, hook: string, event: string): ParsedCommand {
  if (result.timedOut === true || result.signal || result.exitCode === null) {
    const why = result.timedOut === true ? "timed out" : result.signal ? `killed by ${result.signal}` : "exited without a status";
    return { output: failureOutput(hook, why, false, event), failure: why };
  }
  const stdout = result.stdout.trim();
  const stderr = result.stderr.trim();
  if (result.exitCode === 0) {
    if (stdout === "") return { output: {} };
    const json = parseJsonObject(stdout);
    if (json !== undefined) return { output: json };
    if (event === "UserPromptSubmit" || event === "SessionStart") return { output: { hookSpecificOutput: { hookEventName: event, additionalContext: stdout } } };
    return { output: {} };
  }
  if (result.exitCode === 2) {
    const reason = stderr || "Hook exited with code 2";
    if (EVENTS[event as HookEventName]?.can_block === true) return { output: blockingAnswer(reason, event) };
    return { output: { systemMessage: reason } };
  }
  const why = stderr === "" ? `exit code ${result.exitCode}` : `exit code ${result.exitCode}: ${stderr}`;
  return { output: {}, failure: why };
}

const STRICT_FIXES: readonly string[] = [];

/** The claude-code profile object the framework registers. */
export const claudeCodeProfile: EventProfile = {
  id: "claude-code",
  version: "2.x",
  // No public source: semantics taken from the hooks reference (code.claude.com/docs/en/hooks), read 2026-11-26.
  upstream: { repo: "anthropics/claude-code", commit: "docs:code.claude.com/docs/en/hooks@2026-11-26" },
  events: EVENTS,
  ordering: "priority_desc",
  // Upstream runs every matching hook in parallel; here each gets the original input, folded in plan order.
  execution: "parallel",
  // Claude Code configures `timeout` in seconds (default 60 s); the sandbox caps any hook at 30 s.
  timeouts: { default_ms: 60_000, max_ms: 30_000, config_unit: "s" },
  failure: { default: "open", term_grace_ms: 5_000 },
  settingsSchema: agentSettingsSchema,
  strictFixes: STRICT_FIXES,

  sessionIdOf: sessionIdFrom,

  validateInput: (input, event) => validateNative(input, isClaudeEvent(event) ? INPUTS[event] : undefined, () => unknownEvent(event)),

  compileMatcher(pattern, event): CompiledMatcher {
    if (!isClaudeEvent(event)) throw new VcpError("INVALID_HOOK", unknownEvent(event), { field: "event", event });
    if (matchesEverything(pattern)) return MATCH_ALL;
    const field = EVENTS[event].matcher;
    if (field === undefined) return MATCH_ALL; // UserPromptSubmit, Stop, SubagentStop: matchers are ignored
    const trimmed = pattern!.trim();
    if (PLAIN.test(trimmed)) {
      const names = new Set(trimmed.split("|").filter((n) => n !== ""));
      return costedMatcher((input) => typeof input[field] === "string" && names.has(input[field]), 0);
    }
    return fieldMatcher((input) => input[field], compileSearch(trimmed, `claude-code ${event}`));
  },

  // Plain text is context on UserPromptSubmit/SessionStart, otherwise transcript-only (nothing).
  decode: (raw, event) =>
    isClaudeEvent(event)
      ? decodeNative(raw, OUTPUT_SCHEMA, (text) => parseCommandResult({ exitCode: 0, stdout: text, stderr: "" }, "", event).output)
      : { ok: false, error: unknownEvent(event) },

  failureOutput: (hook, why, failClosed, event) => failureOutput(hook, why, failClosed, event),

  answerFields: (output) => answerFieldsOf(output, NEUTRAL),

  verdictOf(output, event): Verdict {
    const hso = specificOf(output);
    if (event === "PreToolUse") {
      const own = permissionOf(output);
      if (own?.decision === "deny") return "block";
      if (output["continue"] === false) return "block";
      if (own?.decision === "ask" || own?.decision === "defer") return "ask";
      if (isObject(hso?.["updatedInput"])) return "modify";
      return "allow";
    }
    if (event === "PermissionRequest") {
      const decision = hso?.["decision"];
      if (isObject(decision) && decision["behavior"] === "deny") return "block";
      if (output["continue"] === false) return "block";
      if (isObject(decision) && isObject(decision["updatedInput"])) return "modify";
      return "allow";
    }
    if (output["decision"] === "block" && EVENTS[event as HookEventName]?.can_block === true) return "block";
    if (output["continue"] === false) return "block";
    return "allow";
  },

  chainInput(input, output, event) {
    const hso = specificOf(output);
    if (event === "PreToolUse" && isObject(hso?.["updatedInput"])) return { ...input, tool_input: hso["updatedInput"] };
    if (event === "PermissionRequest") {
      const decision = hso?.["decision"];
      if (isObject(decision) && decision["behavior"] === "allow" && isObject(decision["updatedInput"])) return { ...input, tool_input: decision["updatedInput"] };
    }
    return input;
  },

  reduce: (outputs, event) => reduceClaude(outputs, event),

  // JSON on stdout with exit 0 is how Claude Code reads every decision; the same object is a valid
  // http-hook 200 body.
  present: (aggregated) => ({ native: aggregated, exit_code: 0 }),

  // The http hook reads the JSON (deny / block); a command hook's exit 2 blocks with stderr as the reason.
  refusalAnswer: (reason, event) => ({ native: reduceClaude([blockingAnswer(reason, event)], event), exit_code: 2, stderr: reason }),

  parseCommandResult,
};

export type { CommandResult, ParsedCommand } from "../types.js";
export type * from "./types.js";
