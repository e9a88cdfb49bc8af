/**
 * The `codex` event profile: the 12 hook events of OpenAI Codex 0.171.0 (events.ts), native JSON in and
 * out, folded in plan order into an answer Codex accepts (fold.ts). Codex "reuses the same lifecycle event
 * names" as Claude Code and the same hook JSON, with fewer fields and stricter parsing: a field it does
 * not support makes Codex drop the hook's whole answer. An event name a newer Codex adds is answered `{}`
 * (observe-only, audited as `unknown_event`) instead of a 404 Codex would log as a failed hook. Pure.
 *
 * @example
 * ```ts
 * import { codexProfile } from "./profiles/codex/index.js";
 * const ask = { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "ask" } };
 * codexProfile.reduce([ask], "PreToolUse", { strict: false, settings: {} }).hookSpecificOutput;
 * // { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "approval required …" }
 * ```
 *
 * @module
 */
import { RE2JS } from "re2js";
import { VcpError } from "../../errors.js";
import {
  MATCH_ALL,
  agentSettingsSchema,
  answerFieldsOf,
  isObject,
  matchesEverything,
  sessionIdFrom,
  specificOf,
  namesOrPattern,
  nativeSchemas,
  presentJson,
} from "../common/native.js";
import { chargeScan, type ScanMeter } from "../common/scan.js";
import { promptSubject, reasonAt, toolSubject } from "../common/subject.js";
import { readCommandResult, type FailureWords } from "../common/command-result.js";
import type { CommandResult, CompiledMatcher, EventProfile, NativeObject, ParsedCommand, Verdict } from "../types.js";
import { CODEX_EVENTS, EVENT_SPECS, EVENT_TABLE, isCodexEvent } from "./events.js";
import { blockingAnswer, permissionOf, reduceCodex } from "./fold.js";

export { CODEX_EVENTS } from "./events.js";
export { reduceCodex } from "./fold.js";

/** Codex treats a matcher of names (letters, digits, `_`, `|`) as a list of exact names; else a full-match regex. */
/** Event names a newer Codex may add (PascalCase like all 12). */
const FUTURE_EVENT = /^[A-Z][A-Za-z0-9]{1,63}$/;

const unknownEvent = (event: string) => `unknown codex event ${JSON.stringify(event)} (known: ${CODEX_EVENTS.join(", ")})`;

function failureOutput(hook: string, why: string, failClosed: boolean, event: string): NativeObject {
  // A failed hook: Codex records it and goes on (fail-open); the warning is shown to the user.
  if (!failClosed || !isCodexEvent(event)) return { systemMessage: `Warning: ${hook}: ${why}` };
  return blockingAnswer(`fail-closed: ${hook}: ${why}`, event);
}

/**
 * A full-match RE2 test (Codex anchors its matcher regexes at both ends), compiled once. A pattern RE2
 * cannot compile is a build error naming it.
 */
function compileFullMatch(pattern: string, where: string): { (text: string, meter?: ScanMeter): boolean; readonly programSize: number } {
  let re: RE2JS;
  try {
    re = RE2JS.compile(`^(?:${pattern})$`);
  } catch (err) {
    throw new VcpError("INVALID_HOOK", `matcher ${JSON.stringify(pattern)} of ${where} is not an RE2 pattern: ${(err as Error).message}`, { field: "matcher", rule: "re2", pattern });
  }
  const programSize = re.programSize();
  // SECURITY: RE2 runs in linear time; the scan is charged to the chain's meter before it is done.
  const test = (value: string, meter?: ScanMeter): boolean => {
    chargeScan(meter, value.length, programSize);
    return re.matcher(value).find();
  };
  return Object.assign(test, { programSize });
}

function compileMatcher(pattern: string | undefined, event: string): CompiledMatcher {
  if (!isCodexEvent(event)) throw new VcpError("INVALID_HOOK", unknownEvent(event), { field: "event", event });
  if (matchesEverything(pattern)) return MATCH_ALL;
  const field = EVENT_TABLE[event].spec.matcher;
  // UserPromptSubmit, Stop, Interrupt: Codex ignores matchers.
  if (field === undefined) return MATCH_ALL;
  const trimmed = pattern!.trim();
  return namesOrPattern(trimmed, (input) => input[field], (p) => compileFullMatch(p, `codex ${event}`));
}

function verdictOf(output: NativeObject, event: string): Verdict {
  if (!isCodexEvent(event)) return "observe";
  if (event === "PreToolUse") {
    const own = permissionOf(output);
    if (own?.decision === "deny") return "block";
    if (own?.decision === "ask") return "ask";
    if (own?.decision === "allow" && isObject(specificOf(output)?.["updatedInput"])) return "modify";
    return "allow";
  }
  if (event === "PermissionRequest") {
    const decision = specificOf(output)?.["decision"];
    if ((isObject(decision) && decision["behavior"] === "deny") || output["continue"] === false) return "block";
    return "allow";
  }
  if (output["decision"] === "block" && EVENT_TABLE[event].spec.can_block) return "block";
  if (output["continue"] === false) return "block";
  if (specificOf(output)?.["updatedMCPToolOutput"] !== undefined) return "modify";
  return "allow";
}

/**
 * Read a finished Codex command hook as Codex does: exit 0 ⇒ stdout JSON (empty or plain text: no
 * answer); exit 2 ⇒ blocking with stderr as the reason (PreToolUse: a failure when stderr is empty);
 * any other code, a signal or a timeout ⇒ a failed hook (Codex goes on without it).
 *
 * @example
 * ```ts
 * parseCommandResult({ exitCode: 2, stdout: "", stderr: "no rm" }, "h", "PreToolUse").output;
 * // { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "no rm" } }
 * ```
 */
export function parseCommandResult(result: CommandResult, hook: string, event: string): ParsedCommand {
  return readCommandResult(result, {
    failed: (why) => failureOutput(hook, why, false, event),
    words: CODEX_WORDS,
    exitCode(code, stderr) {
      if (code !== 2 || !isCodexEvent(event) || !EVENT_TABLE[event].spec.can_block) return undefined;
      if (stderr !== "") return { output: blockingAnswer(stderr, event) };
      const why = `${event} hook exited with code 2 but did not write a blocking reason to stderr`;
      return { output: failureOutput(hook, why, false, event), failure: why };
    },
  });
}

/** Codex's own words for a failed hook (codex-rs/hooks), which its UI shows: kept, so a migrated user reads the same. */
const CODEX_WORDS: FailureWords = { exitCode: (code) => `hook exited with code ${code}`, noStatus: "hook exited without a status code" };

/** The codex profile object the framework registers. */
export const codexProfile: EventProfile = {
  id: "codex",
  version: "0.x",
  upstream: { repo: "openai/codex", commit: "npm:@openai/codex@0.171.0" },
  events: EVENT_SPECS,
  unknownEventPattern: FUTURE_EVENT,
  ordering: "priority_desc",
  // Upstream launches matching hooks concurrently; here each gets the original input, folded in plan order.
  execution: "parallel",
  // Codex configures `timeout` in seconds (default 600 s); the sandbox caps any hook at 30 s.
  timeouts: { default_ms: 600_000, max_ms: 30_000, config_unit: "s" },
  failure: { default: "open", term_grace_ms: 5_000 },
  settingsSchema: agentSettingsSchema,
  strictFixes: [],

  sessionIdOf: sessionIdFrom,

  subjectOf: (input, event) => (event === "UserPromptSubmit" ? promptSubject(input["prompt"]) : toolSubject(input["tool_name"], input["tool_input"])),

  reasonOf(output) {
    const decision = specificOf(output)?.["decision"];
    if (isObject(decision) && typeof decision["message"] === "string" && decision["message"] !== "") return decision["message"];
    return reasonAt(output, ["hookSpecificOutput.permissionDecisionReason", "reason", "stopReason", "systemMessage"]);
  },

  ...nativeSchemas({ inputOf: (e) => (isCodexEvent(e) ? EVENT_TABLE[e].input : undefined), outputOf: (e) => (isCodexEvent(e) ? EVENT_TABLE[e].output : undefined), unknownEvent }),

  compileMatcher,


  failureOutput: (hook, why, failClosed, event) => failureOutput(hook, why, failClosed, event),

  answerFields: (output) => answerFieldsOf(output, { continue: true, suppressOutput: false }),

  verdictOf,

  chainInput(input, output, event) {
    const hso = specificOf(output);
    if (event === "PreToolUse" && hso?.["permissionDecision"] === "allow" && isObject(hso["updatedInput"])) return { ...input, tool_input: hso["updatedInput"] };
    return input;
  },

  reduce: (outputs, event) => reduceCodex(outputs, event),

  // Codex reads JSON on stdout with exit 0; the fold already gave it only fields it accepts.
  present: presentJson,

  // A command hook's exit 2 blocks with stderr as the reason; the JSON says the same.
  refusalAnswer: (reason, event) => ({
    native: isCodexEvent(event) ? reduceCodex([blockingAnswer(reason, event)], event) : {},
    exit_code: 2,
    stderr: reason,
  }),

  parseCommandResult,
};

export type { CommandResult, ParsedCommand } from "../types.js";
export type * from "./types.js";
