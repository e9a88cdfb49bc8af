/**
 * The `goose` event profile: goose's plugin hooks (block/goose `documentation/docs/guides/
 * context-engineering/hooks.md`, the Open Plugins hooks specification), twelve events including
 * PreToolUseResult. Pure: no I/O.
 *
 * Semantics, as upstream: only PreToolUse and Stop can block — `{"decision":"block","reason":…}` (or exit
 * 2 with the reason on stderr); a PreToolUse block denies the tool call, a Stop block keeps the turn going.
 * A hook that answers anything else — `{}`, a stray line, a crash, a timeout — gives *no decision*, which
 * goose ignores unless the hook says `"on_failure": "block"`. So the allow of this profile is the explicit
 * `{"decision":"allow"}` (an empty answer through the adapter would be "no decision", a block under
 * `on_failure: block`). Every other event is observation only: its answer is `{}`. Matchers are
 * unanchored regexes tested against the event's `matcher_context`; upstream a bare `*` is an invalid
 * regex whose rule is silently skipped — here it is a build error (RE2), never a silent skip.
 *
 * @example
 * ```ts
 * import { gooseProfile } from "./profiles/goose/index.js";
 * gooseProfile.reduce([], "PreToolUse", { strict: false, settings: {} }); // { decision: "allow" }
 * ```
 *
 * @module
 */
import { z } from "zod";
import { VcpError } from "../../errors.js";
import { MATCH_ALL, agentSettingsSchema, answerFieldsOf, compileSearch, fieldMatcher, matchedField, parseJsonObject, nativeSchemas, presentJson, sessionIdFrom } from "../common/native.js";
import { promptSubject, reasonAt, toolSubject } from "../common/subject.js";
import { unfinishedRun } from "../common/command-result.js";
import type { CommandResult, CompiledMatcher, EventProfile, EventSpec, NativeObject, ParsedCommand, Verdict } from "../types.js";
import type { HookEventName } from "./types.js";

export const GOOSE_EVENTS: readonly HookEventName[] = [
  "SessionStart", "SessionEnd", "Stop", "UserPromptSubmit", "PreToolUse", "PreToolUseResult",
  "PostToolUse", "PostToolUseFailure", "BeforeReadFile", "AfterFileEdit", "BeforeShellExecution", "AfterShellExecution",
];
/** The events whose answer goose reads. */
const BLOCKING: ReadonlySet<string> = new Set(["PreToolUse", "Stop"]);
/** Events with a `matcher_context` (SessionStart, SessionEnd and Stop have none). */
const MATCHED: ReadonlySet<string> = new Set(GOOSE_EVENTS.filter((e) => e !== "SessionStart" && e !== "SessionEnd" && e !== "Stop"));
/** goose's reason when a block carries none. */
const DEFAULT_REASON = "denied by plugin hook";

const optionalText = z.string().optional();
const INPUTS: Readonly<Record<string, z.ZodType>> = Object.fromEntries(
  GOOSE_EVENTS.map((e) => [
    e,
    z.looseObject({
      event: z.literal(e, { error: `must be "${e}"` }),
      session_id: z.string().min(1),
      matcher_context: matchedField().optional(),
      tool_name: optionalText,
      tool_input: z.record(z.string(), z.unknown()).optional(),
      message: optionalText,
      last_assistant_message: optionalText,
      working_dir: optionalText,
      tool_call_id: optionalText,
      decision: z.enum(["allow", "deny"]).optional(),
      policy_evaluated: z.boolean().optional(),
      blocked_by: optionalText,
      reason: optionalText,
      cause: optionalText,
    }),
  ]),
);
const OUTPUT = z.strictObject({ decision: z.enum(["allow", "block"]).optional(), reason: optionalText });

const SPECS = Object.freeze(
  Object.fromEntries(
    GOOSE_EVENTS.map((e) => [
      e,
      {
        ...(MATCHED.has(e) ? { matcher: "matcher_context" } : {}),
        pre: BLOCKING.has(e),
        can_block: BLOCKING.has(e),
        ...(BLOCKING.has(e) ? {} : { advisory: true }),
        modifiable: BLOCKING.has(e) ? ["decision"] : [],
      } satisfies EventSpec,
    ]),
  ),
) as unknown as Readonly<Record<HookEventName, EventSpec>>;

const isGooseEvent = (event: string): event is HookEventName => Object.hasOwn(SPECS, event);
const unknownEvent = (event: string) => `unknown goose event ${JSON.stringify(event)} (known: ${GOOSE_EVENTS.join(", ")})`;
const FUTURE_EVENT = /^[A-Z][A-Za-z0-9]{1,63}$/;
const nonEmpty = (v: unknown): v is string => typeof v === "string" && v.trim() !== "";

/**
 * Fold in plan order: on PreToolUse and Stop the first block decides (its reason, else goose's default);
 * otherwise the explicit allow. Observation events answer `{}`.
 *
 * @example
 * ```ts
 * reduceGoose([{}, { decision: "block" }], "PreToolUse"); // { decision: "block", reason: "denied by plugin hook" }
 * ```
 */
export function reduceGoose(outputs: readonly NativeObject[], event: string): NativeObject {
  if (!BLOCKING.has(event)) return {};
  const blocker = outputs.find((o) => o["decision"] === "block");
  if (blocker === undefined) return { decision: "allow" };
  return { decision: "block", reason: nonEmpty(blocker["reason"]) ? blocker["reason"] : DEFAULT_REASON };
}

function failureOutput(hook: string, why: string, failClosed: boolean, event: string): NativeObject {
  // SECURITY: a fail_closed guard that fails blocks (goose: `on_failure: block`, PreToolUse only; Stop stays open upstream).
  if (!failClosed || !BLOCKING.has(event)) return {};
  return { decision: "block", reason: `fail-closed: ${hook}: ${why}` };
}

function compileMatcher(pattern: string | undefined, event: string): CompiledMatcher {
  if (!isGooseEvent(event)) throw new VcpError("INVALID_HOOK", unknownEvent(event), { field: "event", event });
  // Only an absent or empty matcher matches everything: `*` is not a regex (upstream: the rule is skipped).
  if (pattern === undefined || pattern === "" || !MATCHED.has(event)) return MATCH_ALL;
  return fieldMatcher((input) => input["matcher_context"], compileSearch(pattern, `goose ${event}`));
}

/**
 * Read a finished goose command hook (its decision rules): exit 2 blocks with stderr as the reason;
 * `{"decision":"block"}` on stdout blocks whatever the exit status; exit 0 with empty stdout or
 * `{"decision":"allow"}` allows; anything else is "no decision" (a failure).
 *
 * @example
 * ```ts
 * parseCommandResult({ exitCode: 1, stdout: '{"decision":"block","reason":"no"}', stderr: "" }, "h", "PreToolUse").output;
 * // { decision: "block", reason: "no" }
 * ```
 */
export function parseCommandResult(result: CommandResult, _hook: string, _event: string): ParsedCommand {
  const stdout = result.stdout.trim();
  if (result.exitCode === 2) return { output: { decision: "block", reason: result.stderr.trim() || DEFAULT_REASON } };
  const json = stdout.startsWith("{") ? parseJsonObject(stdout) : undefined;
  if (json?.["decision"] === "block") return { output: { decision: "block", ...(nonEmpty(json["reason"]) ? { reason: json["reason"] } : {}) } };
  if (result.exitCode === 0 && (stdout === "" || json?.["decision"] === "allow")) return { output: { decision: "allow" } };
  const why = unfinishedRun(result) ?? `no decision (exit ${result.exitCode})`;
  return { output: {}, failure: why };
}

export const gooseProfile: EventProfile = {
  id: "goose",
  version: "1.x",
  upstream: { repo: "block/goose", commit: "0825b570490dc8c64baa9bfccb67b70a00524280" },
  events: SPECS,
  unknownEventPattern: FUTURE_EVENT,
  ordering: "priority_desc",
  execution: "sequential",
  // `timeout` in seconds, default 30; the sandbox caps any hook at 30 s.
  timeouts: { default_ms: 30_000, max_ms: 30_000, config_unit: "s" },
  failure: { default: "open", term_grace_ms: 5_000 },
  settingsSchema: agentSettingsSchema,
  strictFixes: [],
  sessionIdOf: sessionIdFrom,
  subjectOf(input, event) {
    if (event === "UserPromptSubmit") return promptSubject(input["message"]);
    if (event === "BeforeShellExecution" || event === "AfterShellExecution") return toolSubject(input["tool_name"] ?? "developer__shell", { command: input["matcher_context"] });
    if (event === "BeforeReadFile" || event === "AfterFileEdit") return toolSubject(input["tool_name"] ?? "developer__text_editor", { path: input["matcher_context"] });
    return toolSubject(input["tool_name"], input["tool_input"]);
  },
  reasonOf: (output) => reasonAt(output, ["reason"]),
  ...nativeSchemas({ inputOf: (e) => (isGooseEvent(e) ? INPUTS[e] : undefined), outputOf: (e) => (isGooseEvent(e) ? OUTPUT : undefined), unknownEvent }),
  compileMatcher,
  failureOutput: (hook, why, failClosed, event) => failureOutput(hook, why, failClosed, event),
  answerFields: (output, event) => answerFieldsOf(output, BLOCKING.has(event) ? { decision: "allow" } : {}),
  verdictOf: (output, event): Verdict => (!isGooseEvent(event) ? "observe" : !BLOCKING.has(event) ? "observe" : output["decision"] === "block" ? "block" : "allow"),
  stopsChain: (output, event) => BLOCKING.has(event) && output["decision"] === "block",
  reduce: (outputs, event) => reduceGoose(outputs, event),
  present: presentJson,
  refusalAnswer: (reason, event) => ({ native: BLOCKING.has(event) ? { decision: "block", reason } : {}, exit_code: 2, stderr: reason }),
  parseCommandResult,
};

export type { CommandResult, ParsedCommand } from "../types.js";
export type * from "./types.js";
