/**
 * The Gemini CLI family as an {@link EventProfile}: `gemini-cli` and its fork `llxprt` share events,
 * schemas, matching, chaining and failure rules, and differ in a few merge rules and in how a command
 * hook's exit code is read (see `reduce.ts`, `command.ts`). Pure: no I/O.
 *
 * @module
 */
import { VcpError } from "../../errors.js";
import {
  MATCH_ALL,
  compileSearch,
  costedMatcher,
  fieldMatcher,
  isObject,
  matchesEverything,
  sessionIdFrom,
  specificOf,
  answerFieldsOf,
  agentSettingsSchema,
  nativeSchemas,
} from "../common/native.js";
import type { CompiledMatcher, EventProfile, EventSpec, NativeObject, ProfileContext, Verdict } from "../types.js";
import { promptSubject, reasonAt, toolSubject } from "../common/subject.js";
import { parseGeminiCommand } from "./command.js";
import { isBlockingDecision, reduceGemini, type GeminiVariant } from "./reduce.js";
import { GEMINI_EVENTS, OUTPUT_SCHEMA, inputSchemaOf } from "./schemas.js";
import type { HookEventName } from "./types.js";

/** Fields whose presence changes what the agent does (stripped from `session`-trust hooks, spec §8.3). */
const ALWAYS_CONTROLLED = ["decision", "continue", "stopReason", "suppressOutput"] as const;

const EVENTS: Readonly<Record<HookEventName, EventSpec>> = {
  BeforeTool: { matcher: "tool_name", pre: true, can_block: true, modifiable: [...ALWAYS_CONTROLLED, "hookSpecificOutput.tool_input", "hookSpecificOutput.permissionDecision"] },
  AfterTool: { matcher: "tool_name", pre: false, can_block: true, modifiable: [...ALWAYS_CONTROLLED, "hookSpecificOutput.tool_output"] },
  BeforeAgent: { pre: true, can_block: true, modifiable: [...ALWAYS_CONTROLLED] },
  AfterAgent: { pre: false, can_block: true, modifiable: [...ALWAYS_CONTROLLED, "hookSpecificOutput.clearContext"] },
  Notification: { pre: false, can_block: false, advisory: true, modifiable: [...ALWAYS_CONTROLLED] },
  SessionStart: { matcher: "source", pre: true, can_block: false, modifiable: [...ALWAYS_CONTROLLED] },
  SessionEnd: { matcher: "reason", pre: false, can_block: false, advisory: true, modifiable: [...ALWAYS_CONTROLLED] },
  PreCompress: { matcher: "trigger", pre: true, can_block: false, advisory: true, modifiable: [...ALWAYS_CONTROLLED] },
  BeforeModel: { pre: true, can_block: true, modifiable: [...ALWAYS_CONTROLLED, "hookSpecificOutput.llm_request", "hookSpecificOutput.llm_response"] },
  AfterModel: { pre: false, can_block: true, modifiable: [...ALWAYS_CONTROLLED, "hookSpecificOutput.llm_response"] },
  BeforeToolSelection: { pre: true, can_block: false, modifiable: [...ALWAYS_CONTROLLED, "hookSpecificOutput.toolConfig"] },
};

const MODIFYING_SPECIFIC = ["tool_input", "tool_output", "llm_request", "llm_response", "toolConfig", "clearContext"];

const STRICT_MODEL = "BeforeModel/AfterModel: a block (decision block|deny) or continue:false from any hook wins; upstream replaces fields, so a later hook's allow overrides an earlier block.";

export interface GeminiFamilyOptions {
  readonly id: GeminiVariant;
  readonly version: string;
  readonly upstream: { readonly repo: string; readonly commit: string };
}

function isGeminiEvent(event: string): event is HookEventName {
  return Object.hasOwn(EVENTS, event);
}

/** Where a Gemini output explains its verdict, most specific first. */
const REASON_FIELDS = ["reason", "stopReason", "hookSpecificOutput.permissionDecisionReason", "systemMessage"] as const;

/** Values that say nothing: an allow, `continue: true`, `suppressOutput: false` (and a `decision: null`). */
const NEUTRAL: NativeObject = Object.freeze({ decision: "allow", continue: true, suppressOutput: false });

export function createGeminiFamilyProfile(options: GeminiFamilyOptions): EventProfile & Required<Pick<EventProfile, "parseCommandResult">> {
  const variant = options.id;
  const unknownEvent = (event: string) => `unknown ${variant} event ${JSON.stringify(event)} (known: ${GEMINI_EVENTS.join(", ")})`;

  function failureOutput(hook: string, why: string, failClosed: boolean, event: string): NativeObject {
    if (!failClosed) return { decision: "allow", systemMessage: `Warning: ${hook}: ${why}` };
    return blockingOutput(`fail-closed: ${hook}: ${why}`, event);
  }

  /** The event's own refusal carrying `reason`: a failed fail-closed hook's output, a refused event's answer. */
  function blockingOutput(reason: string, event: string): NativeObject {
    // SECURITY: the most restrictive answer the event can carry.
    if (event === "BeforeToolSelection") {
      return { decision: "block", reason, hookSpecificOutput: { hookEventName: event, toolConfig: { mode: "NONE", allowedFunctionNames: [] } } };
    }
    if (EVENTS[event as HookEventName]?.can_block === true) return { decision: "block", reason };
    return { decision: "block", reason, continue: false, stopReason: reason };
  }

  const strictFixes = variant === "gemini-cli"
    ? [
        STRICT_MODEL,
        "BeforeToolSelection: allowedFunctionNames are intersected, so a hook can take away a tool another hook allowed; upstream takes the union (hooks can only add tools).",
      ]
    : [
        STRICT_MODEL,
        "BeforeTool: hookSpecificOutput.permissionDecision deny|block blocks when several hooks run too; upstream honours it only when a single hook runs.",
      ];

  const profile: EventProfile & Required<Pick<EventProfile, "parseCommandResult">> = {
    id: variant,
    version: options.version,
    upstream: options.upstream,
    events: EVENTS,
    ordering: "priority_desc",
    execution: "per_definition",
    // Upstream default 60 s; the sandbox caps any hook at 30 s (spec §5.4). Config unit: milliseconds.
    timeouts: { default_ms: 60_000, max_ms: 30_000, config_unit: "ms" },
    // Upstream: SIGTERM at the timeout, SIGKILL 5 s later.
    failure: { default: "open", term_grace_ms: 5_000 },
    settingsSchema: agentSettingsSchema,
    strictFixes,

    sessionIdOf: sessionIdFrom,

    subjectOf(input, event) {
      if (event === "BeforeTool" || event === "AfterTool") return toolSubject(input["tool_name"], input["tool_input"]);
      if (event === "BeforeAgent") return promptSubject(input["prompt"]);
      return { kind: "event" };
    },

    reasonOf: (output) => reasonAt(output, REASON_FIELDS),

    // A string is what a command hook printed: JSON, or plain text that becomes a system message.
    ...nativeSchemas({
      inputOf: (e) => (isGeminiEvent(e) ? inputSchemaOf(e) : undefined),
      outputOf: (e) => (isGeminiEvent(e) ? OUTPUT_SCHEMA : undefined),
      unknownEvent,
      plainText: (text) => ({ decision: "allow", systemMessage: text }),
    }),

    compileMatcher(pattern, event): CompiledMatcher {
      if (!isGeminiEvent(event)) throw new VcpError("INVALID_HOOK", unknownEvent(event), { field: "event", event });
      if (matchesEverything(pattern)) return MATCH_ALL;
      const field = EVENTS[event].matcher;
      // Upstream has no match context for the other events, so their matcher is ignored (all match).
      if (field === undefined) return MATCH_ALL;
      const trimmed = pattern!.trim();
      if (field === "tool_name") {
        return fieldMatcher((input) => input["tool_name"], compileSearch(trimmed, `${variant} ${event}`));
      }
      // Session and compress events: exact match on source / reason / trigger.
      return costedMatcher((input) => input[field] === trimmed, 0);
    },

    failureOutput: (hook, why, failClosed, event) => failureOutput(hook, why, failClosed, event),

    answerFields: (output) => answerFieldsOf(output, NEUTRAL),

    verdictOf(output, event): Verdict {
      const spec = EVENTS[event as HookEventName];
      const hso = specificOf(output);
      if (spec?.can_block === true && isBlockingDecision(output["decision"])) return "block";
      if (variant === "llxprt" && event === "BeforeTool" && isBlockingDecision(hso?.["permissionDecision"])) return "block";
      if (output["continue"] === false) return "block";
      if (output["decision"] === "ask") return "ask";
      if (hso !== undefined && MODIFYING_SPECIFIC.some((key) => hso[key] !== undefined)) return "modify";
      return "allow";
    },

    chainInput(input, output, event) {
      const hso = specificOf(output);
      if (hso === undefined) return input;
      if (event === "BeforeAgent") {
        const context = hso["additionalContext"];
        if (typeof context === "string" && typeof input["prompt"] === "string") return { ...input, prompt: `${input["prompt"]}\n\n${context}` };
      } else if (event === "BeforeModel") {
        const partial = hso["llm_request"];
        if (isObject(partial) && isObject(input["llm_request"])) return { ...input, llm_request: { ...input["llm_request"], ...partial } };
      } else if (event === "BeforeTool") {
        const partial = hso["tool_input"];
        if (isObject(partial) && isObject(input["tool_input"])) return { ...input, tool_input: { ...input["tool_input"], ...partial } };
      }
      return input;
    },

    reduce: (outputs, event, ctx: ProfileContext) => reduceGemini(outputs, event, variant, ctx),

    // Native JSON with exit 0 for allow and deny alike: the only code both agents read the same way.
    present: (aggregated) => ({ native: aggregated, exit_code: 0 }),

    // The merged form of the block (the JSON decides for both agents); exit 2 with the reason on stderr
    // is a block too, for a caller that reads only the exit code.
    refusalAnswer: (reason, event, ctx) => ({ native: reduceGemini([blockingOutput(reason, event)], event, variant, ctx), exit_code: 2, stderr: reason }),

    parseCommandResult: (result, hook, event) =>
      parseGeminiCommand(result, variant, (why) => failureOutput(hook, why, false, event)),
  };
  return profile;
}
