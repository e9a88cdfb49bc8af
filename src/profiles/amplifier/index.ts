/**
 * The `amplifier` profile (PROFILES §3.4, §8.9): Amplifier kernel hooks
 * (microsoft/amplifier-core `crates/amplifier-core/src/hooks.rs`, `models.rs`).
 *
 * An action is `(input: { event, data }) => HookResult`. Handlers run one after another by priority
 * ASCENDING (lower first, ties in registration order); a `deny` stops the chain; a `modify` with `data`
 * is what later handlers see; `inject_context` results are collected and merged; the first `ask_user`
 * is kept. A handler that fails is skipped (fail-open) unless its definition is `fail_closed`.
 */
import { z } from "zod";
import type {
  Aggregated, CompiledMatcher, Decoded, EventProfile, HookOutputEntry, NativeObject, PresentedAnswer, ProfileContext, Verdict, SubjectFacts,
} from "../types.js";
import { answerFieldsOf, MATCH_ALL } from "../common/native.js";
import { promptSubject, reasonAt, toolSubject } from "../common/subject.js";
import { AMPLIFIER_EVENTS, amplifierEventSpec, isAmplifierEvent } from "./events.js";
import { foldAmplifier } from "./fold.js";
import { decodeHookResult, defaultResult, type HookResult } from "./output.js";

export type { HookResult, HookAction } from "./output.js";
export type { AmplifierAnswer, Injection, UserMessage, ApprovalRequest } from "./fold.js";
export { AMPLIFIER_EVENT_NAMES } from "./events.js";
export { DEFAULT_INJECTION_SIZE_LIMIT, DEFAULT_INJECTION_BUDGET_PER_TURN } from "./fold.js";
export { amplifierSettingsSchema } from "./settings.js";
import { amplifierSettingsSchema } from "./settings.js";

/** What an Amplifier action receives. */
export interface AmplifierInput {
  event: string;
  data: { session_id?: string; timestamp?: string; [key: string]: unknown };
}

function isObject(v: unknown): v is NativeObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The runtime-owned timestamp (upstream `emit` stamps `chrono::Utc::now().to_rfc3339()` over whatever
 * the caller sent). Pure: the executor passes the clock's time.
 *
 * @example
 * ```ts
 * stampAmplifierInput({ event: "tool:pre", data: { timestamp: "mine" } }, "2026-11-26T04:00:00.000Z");
 * // { event: "tool:pre", data: { timestamp: "2026-11-26T04:00:00.000Z" } }
 * ```
 */
export function stampAmplifierInput(input: NativeObject, nowIso: string): NativeObject {
  const data = isObject(input.data) ? input.data : {};
  return { ...input, data: { ...data, timestamp: nowIso } };
}

/** A `continue` with upstream's defaults: the fields of a decoded result that say nothing. */
/** What validateInput hands on: `{ event, data }`, data an object of the event's own fields. */
const INPUT = z.strictObject({ event: z.string(), data: z.record(z.string(), z.unknown()) });

const NEUTRAL_RESULT: NativeObject = Object.freeze(defaultResult() as unknown as NativeObject);

/**
 * @example
 * ```ts
 * import { amplifierProfile } from "./profiles/amplifier/index.js";
 * const ctx = { strict: false, settings: {} };
 * const out = amplifierProfile.decode({ action: "deny", reason: "no" }, "tool:pre", ctx);
 * amplifierProfile.stopsChain?.(out.ok ? out.value : {}, "tool:pre", ctx); // true
 * ```
 */
export const amplifierProfile: EventProfile = {
  id: "amplifier",
  version: "1",
  upstream: { repo: "microsoft/amplifier-core", commit: "7a471437dbebcc05b608b3cf811e44c5213cc923" },
  events: AMPLIFIER_EVENTS,
  ordering: "priority_asc",
  execution: "sequential",
  // Upstream `emit` has no per-handler timeout; the runtime's default sandbox limits apply.
  timeouts: { default_ms: 30_000, max_ms: 30_000, config_unit: "ms" },
  failure: { default: "open", term_grace_ms: 5_000 },
  settingsSchema: amplifierSettingsSchema,
  strictFixes: [
    "an ask_user or inject_context answer keeps the data accumulated by earlier modify results (upstream drops it)",
  ],

  isEvent: isAmplifierEvent,
  specOf: amplifierEventSpec,

  sessionIdOf(input: NativeObject): string | undefined {
    const data = input.data;
    // An empty id is no session (as common/native.ts sessionIdFrom): the chain runs sessionless.
    return isObject(data) && typeof data.session_id === "string" && data.session_id !== "" ? data.session_id : undefined;
  },

  inputSchema: (event: string) => (isAmplifierEvent(event) ? INPUT : undefined),

  subjectOf(input: NativeObject, event: string): SubjectFacts {
    const data = isObject(input.data) ? input.data : {};
    if (event === "prompt:submit") return promptSubject(data.prompt);
    // tool:pre / tool:post / tool:error carry the tool call in data; other events are the event itself.
    return toolSubject(data.tool_name, data.tool_input);
  },

  reasonOf(output: NativeObject): string | undefined {
    return reasonAt(output, ["reason", "approval_prompt"]);
  },

  validateInput(input: unknown, event: string): Decoded<NativeObject> {
    if (!isAmplifierEvent(event)) return { ok: false, error: `event: ${JSON.stringify(event)} is neither an Amplifier event nor a custom "namespace:name"` };
    if (!isObject(input)) return { ok: false, error: "input: must be an object { event, data }" };
    if (input.event !== undefined && input.event !== event) {
      return { ok: false, error: `event: the input names ${JSON.stringify(input.event)} but was sent to ${JSON.stringify(event)}` };
    }
    if (input.data !== undefined && !isObject(input.data)) return { ok: false, error: "data: must be an object" };
    const data = (input.data ?? {}) as NativeObject;
    if (data.session_id !== undefined && typeof data.session_id !== "string") return { ok: false, error: "data.session_id: must be a string" };
    for (const key of Object.keys(input)) {
      if (key !== "event" && key !== "data") return { ok: false, error: `${key}: unknown field (the input is { event, data })` };
    }
    return { ok: true, value: { event, data } };
  },

  compileMatcher(pattern: string | undefined, event: string): CompiledMatcher {
    if (pattern === undefined || pattern === "" || pattern === "*") return MATCH_ALL;
    throw new Error(`matcher ${JSON.stringify(pattern)} on ${event}: Amplifier handlers have no matcher (they register per event); use a condition or test inside the action`);
  },

  decode(raw: unknown): Decoded<NativeObject> {
    const d = decodeHookResult(raw);
    return d.ok ? { ok: true, value: d.value as unknown as NativeObject } : d;
  },

  failureOutput(hook: string, why: string, failClosed: boolean): NativeObject {
    const r: HookResult = defaultResult();
    if (failClosed) {
      r.action = "deny";
      r.reason = `fail-closed: ${hook}: ${why}`;
    }
    // Open: a continue contributes nothing to the fold, exactly as upstream skipping the handler.
    return r as unknown as NativeObject;
  },

  answerFields(output: NativeObject): readonly string[] {
    // Decoded results carry every field (absent ones at their defaults): the defaults say nothing.
    return answerFieldsOf(output, NEUTRAL_RESULT);
  },

  verdictOf(output: NativeObject): Verdict {
    switch (output.action) {
      case "deny": return "block";
      case "ask_user": return "ask";
      case "modify": return isObject(output.data) ? "modify" : "allow";
      default: return "allow";
    }
  },

  stampInput(input: NativeObject, _event: string, nowIso: string): NativeObject {
    return stampAmplifierInput(input, nowIso);
  },

  chainInput(input: NativeObject, output: NativeObject): NativeObject {
    // Upstream replaces the data wholesale with the modifier's `data` (not a merge).
    if (output.action === "modify" && isObject(output.data)) return { ...input, data: output.data };
    return input;
  },

  stopsChain(output: NativeObject): boolean {
    return output.action === "deny";
  },

  reduce(outputs: readonly NativeObject[], _event: string, ctx: ProfileContext): Aggregated {
    return foldAmplifier(outputs.map((output, i) => ({ hook: `hook-${i}`, output })), ctx, {}) as unknown as Aggregated;
  },

  reduceWithHooks(entries: readonly HookOutputEntry[], _event: string, ctx: ProfileContext, input: NativeObject): Aggregated {
    return foldAmplifier(entries, ctx, input) as unknown as Aggregated;
  },

  present(aggregated: Aggregated): PresentedAnswer {
    // Amplifier hooks are in-process functions: no exit-code semantics, the action says it all.
    return { native: aggregated, exit_code: 0 };
  },

  refusalAnswer(reason: string, _event: string, ctx: ProfileContext): PresentedAnswer {
    // The coordinator reads `action: deny` (a failed fail-closed handler's answer); exit 2 for exit-code readers.
    const deny: HookResult = { ...defaultResult(), action: "deny", reason };
    return { native: foldAmplifier([{ hook: "vcp-hooks", output: deny as unknown as NativeObject }], ctx, {}) as unknown as Aggregated, exit_code: 2, stderr: reason };
  },
};

/** The spec of a kernel or custom event (custom events may do anything a kernel event may). */
export { amplifierEventSpec };
