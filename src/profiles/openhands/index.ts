/**
 * The `openhands` event profile: the hooks of the OpenHands agent SDK (OpenHands/software-agent-sdk
 * `openhands-sdk/openhands/sdk/hooks/`: types.py, executor.py, manager.py, config.py), whose hook files
 * (`.openhands/hooks.json`) use Claude Code's layout. Pure: no I/O.
 *
 * Semantics, as upstream: every event sends one input shape (`event_type`, `tool_name`, `tool_input`,
 * `tool_output`, `message`, `session_id`, `working_dir`, `metadata`); a hook answers `decision`
 * allow | approve | deny | block, `reason`, `additionalContext`, `continue`. Hooks run one after
 * another, and on PreToolUse, UserPromptSubmit and Stop the first that blocks (deny, block,
 * `continue: false`, exit 2) stops the chain: its reason is the answer's. A Stop hook that blocks keeps
 * the agent going. UserPromptSubmit contexts are joined "\n". A hook that crashes or times out does not
 * block (fail-open); here a `fail_closed` hook that fails blocks.
 *
 * @example
 * ```ts
 * import { openhandsProfile } from "./profiles/openhands/index.js";
 * openhandsProfile.reduce([{ decision: "allow" }, { decision: "block", reason: "no" }], "PreToolUse", { strict: false, settings: {} });
 * // { decision: "deny", reason: "no" }
 * ```
 *
 * @module
 */
import { RE2JS } from "re2js";
import { z } from "zod";
import { VcpError } from "../../errors.js";
import { MATCH_ALL, agentSettingsSchema, answerFieldsOf, costedMatcher, fieldMatcher, matchedField, matchesEverything, parseJsonObject, nativeSchemas, presentJson, sessionIdFrom } from "../common/native.js";
import { chargeScan, type ScanMeter } from "../common/scan.js";
import { promptSubject, reasonAt, toolSubject } from "../common/subject.js";
import { exitFailure, readCommandResult } from "../common/command-result.js";
import type { CommandResult, CompiledMatcher, EventProfile, EventSpec, NativeObject, ParsedCommand, Verdict } from "../types.js";
import type { HookEventName } from "./types.js";

/** Events whose first blocking hook stops the chain and the operation (manager.py `stop_on_block=True`). */
const BLOCKING: ReadonlySet<string> = new Set(["PreToolUse", "UserPromptSubmit", "Stop"]);
/** Events that carry a tool name (the only ones a matcher other than `*` can match). */
const TOOL_EVENTS: ReadonlySet<string> = new Set(["PreToolUse", "PostToolUse"]);

export const OPENHANDS_EVENTS: readonly HookEventName[] = ["PreToolUse", "PostToolUse", "UserPromptSubmit", "SessionStart", "SessionEnd", "Stop", "Notification"];

const optionalText = z.string().nullable().optional();
const INPUT = (event: string) =>
  z.looseObject({
    event_type: z.literal(event, { error: `must be "${event}"` }),
    tool_name: matchedField().nullable().optional(),
    tool_input: z.record(z.string(), z.unknown()).nullable().optional(),
    tool_output: optionalText,
    message: optionalText,
    session_id: optionalText,
    working_dir: optionalText,
    metadata: z.record(z.string(), z.unknown()).optional(),
  });
// OpenHands reads `decision` case-insensitively; other keys it ignores (kept, never answered).
const OUTPUT = z.looseObject({
  decision: z.string().transform((d) => d.toLowerCase()).pipe(z.enum(["allow", "approve", "deny", "block"])).optional(),
  reason: z.string().optional(),
  additionalContext: z.string().optional(),
  continue: z.boolean().optional(),
});

const SPECS: Readonly<Record<HookEventName, EventSpec>> = Object.freeze(
  Object.fromEntries(
    OPENHANDS_EVENTS.map((e) => [
      e,
      {
        ...(TOOL_EVENTS.has(e) ? { matcher: "tool_name" } : {}),
        pre: BLOCKING.has(e),
        can_block: BLOCKING.has(e),
        ...(BLOCKING.has(e) || e === "UserPromptSubmit" ? {} : { advisory: true }),
        modifiable: BLOCKING.has(e) ? ["decision", "continue"] : [],
      } satisfies EventSpec,
    ]),
  ) as unknown as Record<HookEventName, EventSpec>,
);
const INPUTS: Readonly<Record<string, z.ZodType>> = Object.fromEntries(OPENHANDS_EVENTS.map((e) => [e, INPUT(e)]));

const isOpenhandsEvent = (event: string): event is HookEventName => Object.hasOwn(SPECS, event);
const unknownEvent = (event: string) => `unknown openhands event ${JSON.stringify(event)} (known: ${OPENHANDS_EVENTS.join(", ")})`;
const FUTURE_EVENT = /^[A-Z][A-Za-z0-9]{1,63}$/;
const nonEmpty = (v: unknown): v is string => typeof v === "string" && v.trim() !== "";

/** True when one output blocks its event (config.py/executor.py: deny, block, or continue false). */
function blocks(output: NativeObject, event: string): boolean {
  return BLOCKING.has(event) && (output["decision"] === "deny" || output["decision"] === "block" || output["continue"] === false);
}

/**
 * Fold in plan order: the first blocking output decides (`{ decision: "deny", reason }`); else an allow
 * is `{ decision: "allow" }` when some hook said so; UserPromptSubmit contexts joined "\n".
 *
 * @example
 * ```ts
 * reduceOpenhands([{ additionalContext: "a" }, { additionalContext: "b" }], "UserPromptSubmit"); // { additionalContext: "a\nb" }
 * ```
 */
export function reduceOpenhands(outputs: readonly NativeObject[], event: string): NativeObject {
  if (outputs.length === 0 || !isOpenhandsEvent(event)) return {};
  const answer: NativeObject = {};
  const blocker = outputs.find((o) => blocks(o, event));
  if (blocker !== undefined) {
    answer["decision"] = "deny";
    answer["reason"] = nonEmpty(blocker["reason"]) ? blocker["reason"] : "Blocked by hook";
  } else if (outputs.some((o) => o["decision"] === "allow" || o["decision"] === "approve")) {
    answer["decision"] = "allow";
  }
  if (event === "UserPromptSubmit") {
    const contexts = outputs.map((o) => o["additionalContext"]).filter(nonEmpty);
    if (contexts.length > 0) answer["additionalContext"] = contexts.join("\n");
  }
  return answer;
}

function failureOutput(hook: string, why: string, failClosed: boolean, event: string): NativeObject {
  // Upstream a failed hook neither blocks nor says anything the agent reads.
  if (!failClosed || !BLOCKING.has(event)) return {};
  return { decision: "deny", reason: `fail-closed: ${hook}: ${why}` };
}

/**
 * OpenHands' matcher (config.py `HookMatcher.matches`): `*` or empty matches everything; `/re/` and any
 * pattern with a regex metacharacter match the WHOLE tool name; anything else is an exact name. Events
 * without a tool name match only `*`. Upstream falls back to an exact match when the regex does not
 * compile; here that is a build error (RE2), never a silent exact match.
 */
function compileMatcher(pattern: string | undefined, event: string): CompiledMatcher {
  if (!isOpenhandsEvent(event)) throw new VcpError("INVALID_HOOK", unknownEvent(event), { field: "event", event });
  if (matchesEverything(pattern)) return MATCH_ALL;
  const p = pattern!;
  if (!TOOL_EVENTS.has(event)) return costedMatcher(() => false, 0);
  const explicit = p.length > 2 && p.startsWith("/") && p.endsWith("/");
  if (!explicit && ![..."|.*+?[]()^$\\"].some((c) => p.includes(c))) return costedMatcher((input) => input["tool_name"] === p, 0);
  const source = explicit ? p.slice(1, -1) : p;
  let re: RE2JS;
  try {
    re = RE2JS.compile(`^(?:${source})$`);
  } catch (err) {
    throw new VcpError("INVALID_HOOK", `matcher ${JSON.stringify(p)} of openhands ${event} is not an RE2 pattern: ${(err as Error).message}`, { field: "matcher", rule: "re2", pattern: p });
  }
  const programSize = re.programSize();
  // SECURITY: RE2 is linear in the text; the scan is charged to the chain's meter before it is done.
  const test = (text: string, meter?: ScanMeter) => {
    chargeScan(meter, text.length, programSize);
    return re.matcher(text).find();
  };
  return fieldMatcher((input) => input["tool_name"], Object.assign(test, { programSize }));
}

/**
 * Read a finished OpenHands command hook (executor.py): exit 2 blocks (the reason from stdout JSON, else
 * stderr); exit 0 with JSON is read as the output; any other exit code, a timeout or a crash does not
 * block (a failure).
 *
 * @example
 * ```ts
 * parseCommandResult({ exitCode: 2, stdout: "", stderr: "rm -rf" }, "h", "PreToolUse").output; // { decision: "deny", reason: "rm -rf" }
 * ```
 */
export function parseCommandResult(result: CommandResult, hook: string, event: string): ParsedCommand {
  return readCommandResult(result, {
    failed: (why) => failureOutput(hook, why, false, event),
    // OpenHands reads stdout's JSON whatever the exit code.
    exitCode(code, stderr, stdout) {
      const json = parseJsonObject(stdout) ?? {};
      if (code === 2) return { output: { ...json, decision: "deny", reason: nonEmpty(json["reason"]) ? json["reason"] : stderr || "Blocked by hook" } };
      return { output: json, failure: exitFailure(code, stderr) };
    },
  });
}

export const openhandsProfile: EventProfile = {
  id: "openhands",
  version: "1.x",
  upstream: { repo: "OpenHands/software-agent-sdk", commit: "06b329e38b2a5095f42f702df2ecb907736559d9" },
  events: SPECS,
  unknownEventPattern: FUTURE_EVENT,
  ordering: "priority_desc",
  // Upstream runs an event's hooks one after another and stops at the first block (stopsChain).
  execution: "sequential",
  // `timeout` in seconds, default 60; the sandbox caps any hook at 30 s.
  timeouts: { default_ms: 60_000, max_ms: 30_000, config_unit: "s" },
  failure: { default: "open", term_grace_ms: 5_000 },
  settingsSchema: agentSettingsSchema,
  strictFixes: [],
  sessionIdOf: sessionIdFrom,
  subjectOf: (input, event) => (event === "UserPromptSubmit" ? promptSubject(input["message"]) : toolSubject(input["tool_name"], input["tool_input"])),
  reasonOf: (output) => reasonAt(output, ["reason"]),
  ...nativeSchemas({ inputOf: (e) => (isOpenhandsEvent(e) ? INPUTS[e] : undefined), outputOf: (e) => (isOpenhandsEvent(e) ? OUTPUT : undefined), unknownEvent }),
  compileMatcher,
  failureOutput: (hook, why, failClosed, event) => failureOutput(hook, why, failClosed, event),
  answerFields: (output) => answerFieldsOf(output, { continue: true }),
  verdictOf: (output, event): Verdict => (!isOpenhandsEvent(event) ? "observe" : blocks(output, event) ? "block" : SPECS[event].advisory === true ? "observe" : "allow"),
  stopsChain: (output, event) => blocks(output, event),
  reduce: (outputs, event) => reduceOpenhands(outputs, event),
  // OpenHands reads the JSON of a hook that exits 0 (deny included).
  present: presentJson,
  refusalAnswer: (reason, event) => ({ native: BLOCKING.has(event) ? { decision: "deny", reason } : {}, exit_code: 2, stderr: reason }),
  parseCommandResult,
};

export type { CommandResult, ParsedCommand } from "../types.js";
export type * from "./types.js";
