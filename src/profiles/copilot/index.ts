/**
 * The `copilot` event profile: GitHub Copilot CLI and cloud agent hooks (`.github/hooks/*.json`,
 * `"version": 1`), in Copilot's camelCase format. Read from github/docs
 * `content/copilot/reference/copilot-cli-reference/cli-hooks-reference.md` (the CLI reference, 13 events)
 * and `content/copilot/reference/hooks-configuration.md` (the CLI + cloud agent reference, 6 events),
 * 2026-11-28. The PascalCase event names Copilot also accepts send VS Code's snake_case payloads: that is
 * the `vscode` profile. Pure: no I/O.
 *
 *   permissionDecision   preToolUse: deny > ask > allow; the reasons of the winning level joined "\n";
 *                        `modifiedArgs` the last in plan order, dropped on a deny
 *   behavior             permissionRequest: deny > allow (upstream: the later hook overrides; here the
 *                        most restrictive wins); `interrupt` if a denying hook says so
 *   decision             agentStop, subagentStop: "block" (another turn, `reason` as its prompt) if any
 *   additionalContext    notification, subagentStart, postToolUseFailure (references), and sessionStart,
 *                        userPromptSubmitted, preToolUse, postToolUse (the real CLI 1.0.102 adds it to
 *                        the model's context there; the references say their output is ignored): joined "\n"
 *   every other event    observation only: `{}`
 *
 * The real CLI 1.0.102 (`npm run test:agents`) also fires `userPromptTransformed` on every prompt
 * (observed: `{}`), and sends permissionRequest's arguments as `toolInput`, not `toolArgs`.
 *
 * Where the two references disagree, both are accepted: `toolArgs` a JSON string (hooks-configuration) or
 * any JSON value (CLI reference); `sessionId` optional (absent from the cloud agent's examples). The cloud
 * agent's reference says only `"deny"` is processed on preToolUse, so a refusal is always a deny. Copilot
 * logs and skips a hook that exits non-zero or times out ("they never block agent execution"): a guard's
 * deny must be stdout JSON with exit 0, which is what the adapter prints.
 *
 * @example
 * ```ts
 * import { copilotProfile } from "./profiles/copilot/index.js";
 * copilotProfile.reduce([{ permissionDecision: "ask" }, { permissionDecision: "deny", permissionDecisionReason: "no" }], "preToolUse", { strict: false, settings: {} });
 * // { permissionDecision: "deny", permissionDecisionReason: "no" }
 * ```
 *
 * @module
 */
import { z } from "zod";
import { VcpError } from "../../errors.js";
import { MATCH_ALL, agentSettingsSchema, answerFieldsOf, compileSearch, fieldMatcher, isObject, matchesEverything, parseJsonObject, nativeSchemas, presentJson, sessionIdAt } from "../common/native.js";
import { promptSubject, reasonAt, toolSubject } from "../common/subject.js";
import { readCommandResult } from "../common/command-result.js";
import type { CommandResult, CompiledMatcher, EventProfile, EventSpec, NativeObject, ParsedCommand, Verdict } from "../types.js";
import type { HookEventName } from "./types.js";

/** The answer family of an event: what its output may say and how it is refused. */
type Family = "tool" | "permission" | "stop" | "context" | "observe";

interface Row {
  readonly family: Family;
  /** The input field a rule's matcher is tested against (anchored, as Copilot anchors its matchers). */
  readonly matcher?: string;
  readonly input: z.ZodRawShape;
}

const text = z.string();
const optionalText = z.string().optional();
/** toolArgs: a JSON string (hooks-configuration.md) or any JSON value (cli-hooks-reference.md). */
const toolArgs = z.unknown();
const toolName = z.string().min(1).max(1024);

const ROWS: Readonly<Record<HookEventName, Row>> = {
  sessionStart: { family: "context", input: { source: z.enum(["startup", "resume", "new"]).optional(), initialPrompt: optionalText } },
  sessionEnd: { family: "observe", input: { reason: optionalText } },
  userPromptSubmitted: { family: "context", input: { prompt: text } },
  // 1.0.102 fires it on every prompt (in no reference yet): its output is not known, so nothing is answered.
  userPromptTransformed: { family: "observe", input: { prompt: text, transformedPrompt: optionalText } },
  preToolUse: { family: "tool", matcher: "toolName", input: { toolName, toolArgs } },
  postToolUse: { family: "context", matcher: "toolName", input: { toolName, toolArgs, toolResult: z.looseObject({ resultType: optionalText, textResultForLlm: optionalText }).optional() } },
  postToolUseFailure: { family: "context", matcher: "toolName", input: { toolName, toolArgs, error: z.unknown().optional() } },
  // 1.0.102 sends the arguments as `toolInput` (with `hookName`, `permissionSuggestions`); the CLI
  // reference says `toolArgs`: either, neither required.
  permissionRequest: { family: "permission", matcher: "toolName", input: { toolName, toolArgs: toolArgs.optional(), toolInput: z.unknown().optional(), permissionSuggestions: z.unknown().optional(), hookName: optionalText } },
  agentStop: { family: "stop", input: { transcriptPath: optionalText, stopReason: optionalText } },
  subagentStart: { family: "context", matcher: "agentName", input: { transcriptPath: optionalText, agentName: text, agentDisplayName: optionalText, agentDescription: optionalText } },
  subagentStop: { family: "stop", matcher: "agentName", input: { transcriptPath: optionalText, agentName: text, agentDisplayName: optionalText, stopReason: optionalText } },
  errorOccurred: { family: "observe", input: { error: z.unknown().optional(), errorContext: optionalText, recoverable: z.boolean().optional() } },
  preCompact: { family: "observe", matcher: "trigger", input: { transcriptPath: optionalText, trigger: optionalText, customInstructions: optionalText } },
  notification: { family: "context", matcher: "notification_type", input: { message: optionalText, title: optionalText, notification_type: optionalText } },
};

export const COPILOT_EVENTS = Object.keys(ROWS) as readonly HookEventName[];

const OUTPUTS: Readonly<Record<Family, z.ZodRawShape>> = {
  tool: { permissionDecision: z.enum(["allow", "deny", "ask"]).optional(), permissionDecisionReason: optionalText, modifiedArgs: z.record(z.string(), z.unknown()).optional(), additionalContext: optionalText },
  permission: { behavior: z.enum(["allow", "deny"]).optional(), message: optionalText, interrupt: z.boolean().optional() },
  stop: { decision: z.enum(["block", "allow"]).optional(), reason: optionalText },
  context: { additionalContext: optionalText },
  observe: {},
};

interface Compiled {
  readonly spec: EventSpec;
  readonly input: z.ZodType;
  readonly output: z.ZodType;
  readonly family: Family;
}

const GUARDS: ReadonlySet<Family> = new Set(["tool", "permission", "stop"]);

function compile(event: HookEventName, row: Row): Compiled {
  const guard = GUARDS.has(row.family);
  return {
    family: row.family,
    spec: {
      ...(row.matcher !== undefined ? { matcher: row.matcher } : {}),
      pre: row.family === "tool" || row.family === "permission",
      can_block: guard,
      ...(row.family === "observe" ? { advisory: true } : {}),
      modifiable: row.family === "tool" ? ["permissionDecision", "modifiedArgs"] : row.family === "permission" ? ["behavior"] : row.family === "stop" ? ["decision"] : [],
    },
    input: z.looseObject({
      sessionId: z.string().min(1).optional(),
      timestamp: z.number().optional(),
      cwd: optionalText,
      ...row.input,
    }),
    // Unknown fields are refused by name: Copilot would ignore them, and the policy's author would not know.
    output: z.strictObject(OUTPUTS[row.family]),
  };
}

const TABLE: Readonly<Record<HookEventName, Compiled>> = Object.freeze(Object.fromEntries(COPILOT_EVENTS.map((e) => [e, compile(e, ROWS[e])])) as Record<HookEventName, Compiled>);
const isCopilotEvent = (event: string): event is HookEventName => Object.hasOwn(TABLE, event);
const unknownEvent = (event: string) => `unknown copilot event ${JSON.stringify(event)} (known: ${COPILOT_EVENTS.join(", ")})`;
/** Names a newer Copilot may add (camelCase like all of its events). */
const FUTURE_EVENT = /^[a-z][A-Za-z0-9]{1,63}$/;
const RANK: Readonly<Record<string, number>> = { allow: 0, ask: 1, deny: 2 };
/** The reason of a deny that carries none (Copilot requires one on a deny). */
const DEFAULT_REASON = "Denied by policy hook";

const nonEmpty = (v: unknown): v is string => typeof v === "string" && v.trim() !== "";
const joined = (parts: readonly string[]) => (parts.length > 0 ? parts.join("\n") : undefined);

/** toolArgs as an object: parsed when it is a JSON string (the cloud agent's form). */
export function toolArgsOf(value: unknown): unknown {
  return typeof value === "string" ? (parseJsonObject(value) ?? value) : value;
}

function reduceTool(outputs: readonly NativeObject[]): NativeObject {
  let level = -1;
  let reasons: string[] = [];
  let rewrite: NativeObject | undefined;
  const context = joined(outputs.map((o) => o["additionalContext"]).filter(nonEmpty));
  for (const o of outputs) {
    const rank = typeof o["permissionDecision"] === "string" ? RANK[o["permissionDecision"]] : undefined;
    if (isObject(o["modifiedArgs"])) rewrite = o["modifiedArgs"];
    if (rank === undefined) continue;
    if (rank > level) {
      level = rank;
      reasons = [];
    }
    if (rank === level && nonEmpty(o["permissionDecisionReason"])) reasons.push(o["permissionDecisionReason"]);
  }
  const answer: NativeObject = {};
  if (level >= 0) answer["permissionDecision"] = Object.keys(RANK).find((k) => RANK[k] === level)!;
  const reason = joined(reasons) ?? (level === RANK["deny"] ? DEFAULT_REASON : undefined);
  if (reason !== undefined) answer["permissionDecisionReason"] = reason;
  if (level < RANK["deny"]! && rewrite !== undefined) answer["modifiedArgs"] = rewrite;
  if (context !== undefined) answer["additionalContext"] = context;
  return answer;
}

/**
 * Fold outputs in plan order (see the module comment); `[]` is `{}` (Copilot: the default behaviour).
 *
 * @example
 * ```ts
 * reduceCopilot([{ behavior: "allow" }, { behavior: "deny", message: "no" }], "permissionRequest"); // { behavior: "deny", message: "no" }
 * ```
 */
export function reduceCopilot(outputs: readonly NativeObject[], event: string): NativeObject {
  if (outputs.length === 0 || !isCopilotEvent(event)) return {};
  const family = TABLE[event].family;
  if (family === "tool") return reduceTool(outputs);
  if (family === "permission") {
    const denies = outputs.filter((o) => o["behavior"] === "deny");
    if (denies.length > 0) {
      const message = joined(denies.map((o) => o["message"]).filter(nonEmpty));
      return { behavior: "deny", ...(message !== undefined ? { message } : {}), ...(denies.some((o) => o["interrupt"] === true) ? { interrupt: true } : {}) };
    }
    return outputs.some((o) => o["behavior"] === "allow") ? { behavior: "allow" } : {};
  }
  if (family === "stop") {
    const blocks = outputs.filter((o) => o["decision"] === "block");
    if (blocks.length === 0) return {};
    const reason = joined(blocks.map((o) => o["reason"]).filter(nonEmpty));
    return { decision: "block", ...(reason !== undefined ? { reason } : {}) };
  }
  if (family === "context") {
    const context = joined(outputs.map((o) => o["additionalContext"]).filter(nonEmpty));
    return context === undefined ? {} : { additionalContext: context };
  }
  return {};
}

/** The event's refusal carrying `reason`: a deny where Copilot reads one, else nothing. */
function blockingAnswer(reason: string, event: HookEventName): NativeObject {
  // SECURITY: the most restrictive answer every Copilot reference agrees is honoured (deny, not ask).
  switch (TABLE[event].family) {
    case "tool":
      return { permissionDecision: "deny", permissionDecisionReason: reason };
    case "permission":
      return { behavior: "deny", message: reason };
    default:
      // A stop "block" would start another turn with the reason as its prompt, not stop anything.
      return {};
  }
}

function failureOutput(hook: string, why: string, failClosed: boolean, event: string): NativeObject {
  // SECURITY: a fail_closed hook that fails denies on the guard events (Copilot itself skips a failed hook).
  if (!failClosed || !isCopilotEvent(event)) return {};
  return blockingAnswer(`fail-closed: ${hook}: ${why}`, event);
}

function compileMatcher(pattern: string | undefined, event: string): CompiledMatcher {
  if (!isCopilotEvent(event)) throw new VcpError("INVALID_HOOK", unknownEvent(event), { field: "event", event });
  const field = TABLE[event].spec.matcher;
  if (matchesEverything(pattern) || field === undefined) return MATCH_ALL;
  // Copilot anchors matchers as ^(?:pattern)$: the whole tool name (notification type, agent name) must match.
  return fieldMatcher((input) => input[field], compileSearch(`^(?:${pattern!.trim()})$`, `copilot ${event}`));
}

function verdictOf(output: NativeObject, event: string): Verdict {
  if (!isCopilotEvent(event)) return "observe";
  switch (TABLE[event].family) {
    case "tool":
      if (output["permissionDecision"] === "deny") return "block";
      if (output["permissionDecision"] === "ask") return "ask";
      return isObject(output["modifiedArgs"]) || nonEmpty(output["additionalContext"]) ? "modify" : "allow";
    case "permission":
      return output["behavior"] === "deny" ? "block" : "allow";
    case "stop":
      return output["decision"] === "block" ? "block" : "allow";
    case "context":
      return nonEmpty(output["additionalContext"]) ? "modify" : "allow";
    case "observe":
      return "observe";
  }
}

/**
 * Read a finished Copilot command hook: exit 0 ⇒ stdout JSON (empty: no opinion); permissionRequest exit 2
 * ⇒ a deny merged over stdout's JSON (stderr ignored); postToolUseFailure exit 2 ⇒ stderr as recovery
 * guidance; preToolUse exit 2 ⇒ a deny (the real CLI 1.0.102 denies "hook exited with code 2"; the
 * references say a non-zero exit is skipped), stderr as the reason; any other code, a signal or a timeout
 * ⇒ a failed hook (`import` marks preToolUse hooks `fail_closed`, as the real CLI denies on them).
 *
 * @example
 * ```ts
 * parseCommandResult({ exitCode: 2, stdout: '{"message":"no"}', stderr: "" }, "h", "permissionRequest").output;
 * // { message: "no", behavior: "deny" }
 * ```
 */
export function parseCommandResult(result: CommandResult, hook: string, event: string): ParsedCommand {
  return readCommandResult(result, {
    failed: (why) => failureOutput(hook, why, false, event),
    exitCode(code, stderr, stdout) {
      if (code !== 2) return undefined;
      if (event === "permissionRequest") return { output: { ...(parseJsonObject(stdout) ?? {}), behavior: "deny" } };
      // The real CLI's own words when stderr is empty ("Denied by preToolUse hook: hook exited with code 2").
      if (event === "preToolUse") return { output: { permissionDecision: "deny", permissionDecisionReason: stderr || "hook exited with code 2" } };
      if (event === "postToolUseFailure") return { output: stderr === "" ? {} : { additionalContext: stderr } };
      return undefined;
    },
  });
}

export const copilotProfile: EventProfile = {
  id: "copilot",
  version: "1.x",
  upstream: { repo: "github/docs", commit: "927566b0b7df8ea8be3ec136965f7f45ee24951b" },
  events: Object.freeze(Object.fromEntries(COPILOT_EVENTS.map((e) => [e, TABLE[e].spec]))) as Readonly<Record<HookEventName, EventSpec>>,
  unknownEventPattern: FUTURE_EVENT,
  ordering: "priority_desc",
  execution: "sequential",
  // `timeoutSec`, default 30; the sandbox caps any hook at 30 s.
  timeouts: { default_ms: 30_000, max_ms: 30_000, config_unit: "s" },
  failure: { default: "open", term_grace_ms: 5_000 },
  settingsSchema: agentSettingsSchema,
  strictFixes: [],
  sessionIdOf: sessionIdAt("sessionId"),
  subjectOf(input, event) {
    if (event === "userPromptSubmitted" || event === "userPromptTransformed") return promptSubject(input["prompt"]);
    return toolSubject(input["toolName"], toolArgsOf(input["toolArgs"] ?? input["toolInput"]));
  },
  reasonOf: (output) => reasonAt(output, ["permissionDecisionReason", "message", "reason", "additionalContext"]),
  ...nativeSchemas({ inputOf: (e) => (isCopilotEvent(e) ? TABLE[e].input : undefined), outputOf: (e) => (isCopilotEvent(e) ? TABLE[e].output : undefined), unknownEvent }),
  compileMatcher,
  failureOutput: (hook, why, failClosed, event) => failureOutput(hook, why, failClosed, event),
  answerFields: (output) => answerFieldsOf(output, { permissionDecision: "allow", behavior: "allow", decision: "allow" }),
  verdictOf,
  // A later hook sees the arguments an earlier one substituted (in the shape it was sent: string stays string).
  chainInput: (input, output, event) =>
    event === "preToolUse" && output["permissionDecision"] !== "deny" && isObject(output["modifiedArgs"])
      ? { ...input, toolArgs: typeof input["toolArgs"] === "string" ? JSON.stringify(output["modifiedArgs"]) : output["modifiedArgs"] }
      : input,
  reduce: (outputs, event) => reduceCopilot(outputs, event),
  present: presentJson,
  refusalAnswer: (reason, event) => ({ native: isCopilotEvent(event) ? blockingAnswer(reason, event) : {}, exit_code: 2, stderr: reason }),
  parseCommandResult,
};

export type { CommandResult, ParsedCommand } from "../types.js";
export type * from "./types.js";
