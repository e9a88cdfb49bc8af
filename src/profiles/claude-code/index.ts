/**
 * The `claude-code` event profile (PROFILES §3.3): the 34 hook events of Claude Code 2.1.332 (events.ts),
 * native JSON in and out, folded in plan order (fold.ts). The native answer is usable as the whole 200
 * body of a Claude Code http hook (the route's `?answer=native`, PROFILES §8.1). An event name Claude
 * Code adds after 2.1.332 is answered `{}` (observe-only, audited as `unknown_event`) instead of a 404
 * the agent would log as a hook error on every such event (`unknownEventPattern`). Pure: no I/O.
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
import { VcpError } from "../../errors.js";
import {
  MATCH_ALL,
  compileSearch,
  isObject,
  matchesEverything,
  sessionIdFrom,
  specificOf,
  answerFieldsOf,
  agentSettingsSchema,
  namesOrPattern,
  nativeSchemas,
  presentJson,
} from "../common/native.js";
import type { CommandResult, CompiledMatcher, EventProfile, ParsedCommand, NativeObject, Verdict } from "../types.js";
import { CLAUDE_EVENTS, EVENT_SPECS, EVENT_TABLE, isClaudeEvent } from "./events.js";
import { permissionOf, reduceClaude } from "./fold.js";
import { promptSubject, reasonAt, toolSubject } from "../common/subject.js";
import { EXIT_2_WITHOUT_REASON, readCommandResult } from "../common/command-result.js";

export { CLAUDE_EVENTS } from "./events.js";
export { reduceClaude } from "./fold.js";

// ── matching ─────────────────────────────────────────────────────────────────────────────────────
// A matcher of plain names is a list of exact names (`Write` ≠ `NotebookWrite`): letters, digits, `_`
// and `|` on every event, and on the events Claude Code reads leniently also `,`, spaces and `-`
// (`Edit, Write`, `general-purpose`). Anything else is an unanchored regex (`mcp__memory__.*`, `^Bash`).
const PLAIN_LENIENT = /^[A-Za-z0-9_|, -]+$/;

/**
 * Event names Claude Code may add after the version this profile pins: PascalCase like all 34. Such an
 * event is answered `{}` with exit code 0 and audited as `unknown_event` (fire/profile.ts):
 * Claude Code logs a 404 as a hook error on every event, and a new event it fires in every run
 * (PostToolBatch, MessageDisplay were such) would flood every session with errors.
 */
const FUTURE_EVENT = /^[A-Z][A-Za-z0-9]{1,63}$/;

const unknownEvent = (event: string) => `unknown claude-code event ${JSON.stringify(event)} (known: ${CLAUDE_EVENTS.join(", ")})`;

/** Values that say nothing: `continue: true`, `suppressOutput: false`. A permission `allow` is a decision. */
const NEUTRAL: NativeObject = Object.freeze({ continue: true, suppressOutput: false });

// ── failure ──────────────────────────────────────────────────────────────────────────────────────
function failureOutput(hook: string, why: string, failClosed: boolean, event: string): NativeObject {
  // A non-blocking error: Claude Code goes on; the message is shown to the user.
  if (!failClosed) return { systemMessage: `Warning: ${hook}: ${why}` };
  return blockingAnswer(`fail-closed: ${hook}: ${why}`, event);
}

/** The event's own refusal carrying `reason` (what exit 2 with `reason` on stderr amounts to). */
function blockingAnswer(reason: string, event: string): NativeObject {
  // SECURITY: the most restrictive answer the event can carry.
  switch (isClaudeEvent(event) ? EVENT_TABLE[event].refusal : "stop") {
    case "permission":
      return { hookSpecificOutput: { hookEventName: event, permissionDecision: "deny", permissionDecisionReason: reason } };
    case "request":
      return { hookSpecificOutput: { hookEventName: event, decision: { behavior: "deny", message: reason } } };
    case "elicitation":
      return { decision: "block", reason, hookSpecificOutput: { hookEventName: event, action: "decline" } };
    case "prompt":
      // As Claude Code refuses a prompt its guard could not judge: the prompt is not echoed back.
      return { decision: "block", reason, hookSpecificOutput: { hookEventName: event, suppressOriginalPrompt: true } };
    case "block":
      return { decision: "block", reason };
    case "stop":
      return { continue: false, stopReason: reason };
  }
}

/** What plain (non-JSON) stdout of a hook that exited 0 says on `event`. */
function plainTextOutput(text: string, event: string): NativeObject {
  const form = isClaudeEvent(event) ? EVENT_TABLE[event].plainText : undefined;
  if (form === "context") return { hookSpecificOutput: { hookEventName: event, additionalContext: text } };
  // A WorktreeCreate command hook prints the path of the worktree it created.
  if (form === "worktreePath") return { hookSpecificOutput: { hookEventName: event, worktreePath: text } };
  return {};
}

const canBlock = (event: string): boolean => isClaudeEvent(event) && EVENT_TABLE[event].spec.can_block;

/**
 * Read a finished Claude Code command hook: exit 0 ⇒ stdout JSON (plain text is context on
 * UserPromptSubmit, UserPromptExpansion, SessionStart and PostModelSwitch, the worktree path on
 * WorktreeCreate, otherwise only shown in the transcript); exit 2 ⇒ blocking, stderr to the model
 * (stdout ignored; on events that cannot block, stderr is shown to the user); any other code ⇒ a
 * non-blocking error, a warning like a timeout's (the shared rule: common/command-result.ts).
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
    plainStdout: (text) => ({ output: plainTextOutput(text, event) }),
    exitCode(code, stderr) {
      if (code !== 2) return undefined;
      const reason = stderr || EXIT_2_WITHOUT_REASON;
      return { output: canBlock(event) ? blockingAnswer(reason, event) : { systemMessage: reason } };
    },
  });
}

/** The matcher of `event`: what it tests (EVENT_TABLE) and how Claude Code reads a plain-name pattern. */
function compileMatcher(pattern: string | undefined, event: string): CompiledMatcher {
  if (!isClaudeEvent(event)) throw new VcpError("INVALID_HOOK", unknownEvent(event), { field: "event", event });
  if (matchesEverything(pattern)) return MATCH_ALL;
  const entry = EVENT_TABLE[event];
  const field = entry.spec.matcher;
  // UserPromptSubmit, Stop, PostToolBatch, TeammateIdle, Task*, Worktree*, CwdChanged, MessageDisplay: matchers are ignored.
  if (field === undefined) return MATCH_ALL;
  const read = entry.query ?? ((input: NativeObject) => input[field]);
  const trimmed = pattern!.trim();
  return entry.lenientNames
    ? namesOrPattern(trimmed, read, (p) => compileSearch(p, `claude-code ${event}`), PLAIN_LENIENT, /[|,]/)
    : namesOrPattern(trimmed, read, (p) => compileSearch(p, `claude-code ${event}`));
}

/** How the chain treats one output: the event's own refusal blocks, a rewrite modifies, a question asks. */
function verdictOf(output: NativeObject, event: string): Verdict {
  if (!isClaudeEvent(event)) return "observe";
  const hso = specificOf(output);
  const entry = EVENT_TABLE[event];
  if (entry.refusal === "permission") {
    const own = permissionOf(output, event);
    if (own?.decision === "deny") return "block";
    if (output["continue"] === false) return "block";
    if (event === "PreSkillShellCommand") {
      // A skill cannot wait for an answer: ask, defer and any updatedInput keep the command from running.
      if (own?.decision === "ask" || own?.decision === "defer" || isObject(hso?.["updatedInput"])) return "block";
      return "allow";
    }
    if (own?.decision === "ask" || own?.decision === "defer") return "ask";
    if (isObject(hso?.["updatedInput"])) return "modify";
    return "allow";
  }
  if (entry.refusal === "request") {
    const decision = hso?.["decision"];
    if (isObject(decision) && decision["behavior"] === "deny") return "block";
    if (output["continue"] === false) return "block";
    if (isObject(decision) && isObject(decision["updatedInput"])) return "modify";
    return "allow";
  }
  if (entry.refusal === "elicitation") {
    if (output["decision"] === "block" || hso?.["action"] === "decline" || hso?.["action"] === "cancel") return "block";
    if (output["continue"] === false) return "block";
    if (isObject(hso?.["content"])) return "modify";
    return "allow";
  }
  if (output["decision"] === "block" && entry.spec.can_block) return "block";
  if (output["continue"] === false) return "block";
  if (hso?.["updatedToolOutput"] !== undefined || hso?.["updatedMCPToolOutput"] !== undefined || typeof hso?.["displayContent"] === "string") return "modify";
  return "allow";
}

const STRICT_FIXES: readonly string[] = [];

/** Where a Claude Code output explains its verdict, most specific first (a permission's reason, a block's, a stop's). */
const REASON_FIELDS = ["hookSpecificOutput.permissionDecisionReason", "reason", "stopReason", "systemMessage"] as const;

/** The claude-code profile object the framework registers. */
export const claudeCodeProfile: EventProfile = {
  id: "claude-code",
  version: "2.x",
  // No public source repository: the event list, input schemas, output fields and the permission fold
  // were read from the strings of the published 2.1.332 package (events.ts), checked against the hooks
  // reference (code.claude.com/docs/en/hooks).
  upstream: { repo: "anthropics/claude-code", commit: "npm:@anthropic-ai/claude-code@2.1.332" },
  events: EVENT_SPECS,
  unknownEventPattern: FUTURE_EVENT,
  ordering: "priority_desc",
  // Upstream runs every matching hook in parallel; here each gets the original input, folded in plan order.
  execution: "parallel",
  // Claude Code configures `timeout` in seconds (default 60 s); the sandbox caps any hook at 30 s.
  timeouts: { default_ms: 60_000, max_ms: 30_000, config_unit: "s" },
  failure: { default: "open", term_grace_ms: 5_000 },
  settingsSchema: agentSettingsSchema,
  strictFixes: STRICT_FIXES,

  sessionIdOf: sessionIdFrom,

  subjectOf(input, event) {
    if (event === "UserPromptSubmit" || event === "UserPromptExpansion") return promptSubject(input["prompt"]);
    // Tool events (PreToolUse, PostToolUse, PermissionRequest, …) name the tool; others are the event itself.
    return toolSubject(input["tool_name"], input["tool_input"]);
  },

  reasonOf(output) {
    const decision = specificOf(output)?.["decision"];
    // PermissionRequest: the decision object's `message` explains a deny.
    if (isObject(decision) && typeof decision["message"] === "string" && decision["message"] !== "") return decision["message"];
    return reasonAt(output, REASON_FIELDS);
  },

  ...nativeSchemas({
    inputOf: (e) => (isClaudeEvent(e) ? EVENT_TABLE[e].input : undefined),
    outputOf: (e) => (isClaudeEvent(e) ? EVENT_TABLE[e].output : undefined),
    unknownEvent,
    plainText: plainTextOutput,
  }),

  compileMatcher,

  failureOutput: (hook, why, failClosed, event) => failureOutput(hook, why, failClosed, event),

  answerFields: (output) => answerFieldsOf(output, NEUTRAL),

  verdictOf,

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
  present: presentJson,

  // The http hook reads the JSON (deny / block); a command hook's exit 2 blocks with stderr as the reason.
  refusalAnswer: (reason, event) => ({ native: reduceClaude([blockingAnswer(reason, event)], event), exit_code: 2, stderr: reason }),

  parseCommandResult,
};

export type { CommandResult, ParsedCommand } from "../types.js";
export type * from "./types.js";
