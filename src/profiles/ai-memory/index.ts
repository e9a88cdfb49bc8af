/**
 * The `ai-memory` profile (PROFILES §3.5, §8.10): ai-memory v0.7's hook pipeline
 * (alphaonedev/ai-memory-mcp `src/hooks/`).
 *
 * An action is `(input: { event, payload }) => Decision | undefined`. Hooks run by priority DESCENDING
 * (stable), each within `min(timeout_ms, what is left of its event class's chain deadline)`. `deny`
 * stops the chain; `modify` (pre_ events only) changes the payload later hooks see; `ask_user` is
 * queued. A failed hook allows (fail-open) or, with `fail_closed`, denies with code 503.
 */
import { z } from "zod";
import { compileGlob, type CompiledGlob } from "../common/glob.js";
import type {
  Aggregated, CompiledMatcher, Decoded, EventProfile, HookOutputEntry, NativeObject, PresentedAnswer, ProfileContext, Verdict, SubjectFacts,
} from "../types.js";
import { answerFieldsOf, fieldMatcher, MATCH_ALL } from "../common/native.js";
import { MAX_MATCHED_FIELD_LENGTH } from "../common/scan.js";
import { reasonAt } from "../common/subject.js";
import { decodeDecision, parseCommandResult as parseAiMemoryCommand } from "./decision.js";
import { AI_MEMORY_EVENTS } from "./events.js";
import { decisionLine, foldAiMemory, type ChainResult } from "./fold.js";

export { parseCommandResult, decodeDecision, DEFAULT_DENY_CODE, type CommandRun } from "./decision.js";
export { AI_MEMORY_EVENTS, CLASS_DEADLINES_MS, isPreEvent, type EventClass } from "./events.js";
export { foldAiMemory, decisionLine, type ChainResult, type QueuedAsk } from "./fold.js";
export { aiMemorySettingsSchema } from "./settings.js";
import { aiMemorySettingsSchema } from "./settings.js";

/** What an ai-memory action receives: the envelope ai-memory writes to a command hook's stdin. */
export interface AiMemoryEnvelope<P = Record<string, unknown>> {
  event: string;
  payload: P;
}

/** What an ai-memory action returns (`undefined`, `null` and `{}` allow). */
export type AiMemoryDecision =
  | { action: "allow" }
  | { action: "modify"; delta: MemoryDelta }
  | { action: "deny"; reason: string; code?: number }
  | { action: "ask_user"; prompt: string; options: string[]; default?: string }
  | Record<string, never>
  | null
  | undefined;

/** upstream `MemoryDelta`: the fields a `modify` may change. */
export interface MemoryDelta {
  tier?: "short" | "mid" | "long";
  namespace?: string;
  title?: string;
  content?: string;
  tags?: string[];
  priority?: number;
  confidence?: number;
  source?: string;
  expires_at?: string;
  metadata?: unknown;
}

/** upstream `MAX_TIMEOUT_MS`: a hook's `timeout_ms` is capped at 30 s. */
export const MAX_HOOK_TIMEOUT_MS = 30_000;

function isObject(v: unknown): v is NativeObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * `required_events` enforcement (PROFILES §3.5, "enforce" mode): an event listed in the deployment's
 * `required_events` with no enabled hook is denied with code 503; `undefined` for any other event.
 *
 * @example
 * ```ts
 * requiredEventAnswer("pre_store", { strict: false, settings: { required_events: ["pre_store"] } });
 * // { result: "deny", reason: "required event pre_store has no enabled hook …", code: 503, warnings: [] }
 * ```
 */
export function requiredEventAnswer(event: string, ctx: ProfileContext): Aggregated | undefined {
  const required = ctx.settings.required_events;
  if (!Array.isArray(required) || !required.includes(event)) return undefined;
  const answer: ChainResult = {
    result: "deny",
    reason: `required event ${event} has no enabled hook (required_events, enforce mode)`,
    code: 503,
    warnings: [],
  };
  return answer as unknown as Aggregated;
}

/**
 * A hook's time budget (upstream `per_hook_budget_ms`): `min(timeoutMs, chain deadline − elapsed)`, or
 * `undefined` when the event's class deadline is already spent.
 *
 * @example
 * ```ts
 * hookBudgetMs(1_000, "pre_recall_expand", 20); // 30 (hot path: 50 ms for the whole chain)
 * hookBudgetMs(1_000, "pre_recall_expand", 50); // undefined
 * ```
 */
export function hookBudgetMs(timeoutMs: number, event: string, elapsedMs: number): number | undefined {
  const deadline = AI_MEMORY_EVENTS[event]?.chain_deadline_ms;
  if (deadline === undefined) return timeoutMs;
  const remaining = deadline - elapsedMs;
  if (remaining <= 0) return undefined;
  return Math.min(timeoutMs, remaining);
}

/** The decision that says nothing. */
const ALLOW: NativeObject = Object.freeze({ action: "allow" });

/** The `{ event, payload }` envelope and nothing else (validateInput refuses other keys). */
const ENVELOPE = z.strictObject({ event: z.string(), payload: z.unknown() });

/**
 * @example
 * ```ts
 * import { aiMemoryProfile } from "./profiles/ai-memory/index.js";
 * const ctx = { strict: false, settings: {} };
 * const agg = aiMemoryProfile.reduce([{ action: "deny", reason: "pii", code: 451 }], "pre_store", ctx);
 * aiMemoryProfile.present(agg, "pre_store", ctx).native; // { action: "deny", reason: "pii", code: 451 }
 * ```
 */
export const aiMemoryProfile: EventProfile = {
  /**
   * ai-memory's own command hooks (exec lane, adapter): the last non-empty stdout line is the decision;
   * a timeout or a non-zero exit is a hook error, which the caller turns into the fail mode's answer.
   * Compatibility mode (the strict switch is a deployment setting the lane does not see here). Not the
   * shared rule of common/command-result.ts: upstream's wire has no exit-code table, reads lines, and
   * words its errors (and caps the stderr it quotes) as executor.rs does.
   */
  parseCommandResult(result, _hook, event) {
    const decoded = parseAiMemoryCommand({ stdout: result.stdout, stderr: result.stderr, exitCode: result.exitCode, ...(result.timedOut === true ? { timedOut: true } : {}) }, event, false);
    return decoded.ok ? { output: decoded.value } : { output: {}, failure: decoded.error };
  },
  // One envelope line on stdin, then EOF (upstream executor.rs).
  commandStdin: "json_line",
  id: "ai-memory",
  version: "0.7",
  upstream: { repo: "alphaonedev/ai-memory-mcp", commit: "e2b954475ec031469c4a4c3b370653376105cf41" },
  events: AI_MEMORY_EVENTS,
  ordering: "priority_desc",
  execution: "sequential",
  timeouts: { default_ms: 5_000, max_ms: MAX_HOOK_TIMEOUT_MS, config_unit: "ms" },
  // Upstream kills a timed-out hook at once (kill_on_drop): no grace.
  failure: { default: "open", term_grace_ms: 0 },
  settingsSchema: aiMemorySettingsSchema,
  strictFixes: [
    "an allow (or a fail-open hook error) keeps the AskUsers queued before it (upstream clears them)",
    "a modify delta with a key that is not a memory field is refused (upstream drops the key silently)",
  ],

  sessionIdOf(): string | undefined {
    return undefined; // ai-memory envelopes carry no session: chains run with deployment hooks only (§8.3)
  },

  // The envelope validateInput accepts (conditions read `payload.…`; its payload is the event's own).
  inputSchema: (event: string) => (Object.hasOwn(AI_MEMORY_EVENTS, event) ? ENVELOPE : undefined),

  subjectOf(input: NativeObject, event: string): SubjectFacts {
    // The memory operation (`pre_store` ⇒ `store`) is the "tool"; the namespace it touches is its path.
    const payload = isObject(input.payload) ? input.payload : {};
    const namespace = typeof payload.namespace === "string" && payload.namespace !== "" ? { path: payload.namespace } : {};
    return { kind: "tool", tool: event.replace(/^(?:pre|post|on)_/, ""), ...namespace };
  },

  reasonOf(output: NativeObject): string | undefined {
    return reasonAt(output, ["reason", "prompt"]);
  },

  validateInput(input: unknown, event: string): Decoded<NativeObject> {
    if (!Object.hasOwn(AI_MEMORY_EVENTS, event)) return { ok: false, error: `event: ${JSON.stringify(event)} is not an ai-memory event` };
    if (!isObject(input)) return { ok: false, error: "input: must be the envelope object { event, payload }" };
    if (input.event !== event) {
      return { ok: false, error: `event: the envelope names ${JSON.stringify(input.event)} but was sent to ${JSON.stringify(event)}` };
    }
    if (!("payload" in input) || input.payload === undefined) return { ok: false, error: "payload: required" };
    for (const key of Object.keys(input)) {
      if (key !== "event" && key !== "payload") return { ok: false, error: `${key}: unknown field (the envelope is { event, payload })` };
    }
    const namespace = isObject(input.payload) ? input.payload.namespace : undefined;
    // SECURITY: the length bound namespace matchers' cost rests on, applied before any matcher runs.
    if (typeof namespace === "string" && namespace.length > MAX_MATCHED_FIELD_LENGTH) {
      return { ok: false, error: `payload.namespace: must be at most ${MAX_MATCHED_FIELD_LENGTH} characters (a field matchers search)` };
    }
    return { ok: true, value: input };
  },

  /** Matchers are globs on `payload.namespace` (upstream's per-hook `namespace`, e.g. `team/*`). */
  compileMatcher(pattern: string | undefined, event: string): CompiledMatcher {
    if (pattern === undefined || pattern === "" || pattern === "*") return MATCH_ALL;
    let test: CompiledGlob;
    try {
      test = compileGlob(pattern);
    } catch (e) {
      throw new Error(`matcher ${JSON.stringify(pattern)} on ${event}: not a valid namespace glob: ${(e as Error).message}`);
    }
    // validateInput bounds `payload.namespace` to MAX_MATCHED_FIELD_LENGTH: the matcher's cost rests on it.
    return fieldMatcher((input) => (isObject(input.payload) ? input.payload.namespace : undefined), test);
  },

  decode(raw: unknown, event: string, ctx: ProfileContext): Decoded<NativeObject> {
    return decodeDecision(raw, event, ctx.strict);
  },

  failureOutput(hook: string, why: string, failClosed: boolean): NativeObject {
    if (failClosed) return { action: "deny", reason: `hook ${hook} errored under fail_mode=closed: ${why}`, code: 503 };
    return { action: "allow", warning: `hook errored; fail_mode=open, treated as allow: ${why}` };
  },

  answerFields(output: NativeObject): readonly string[] {
    return answerFieldsOf(output, ALLOW);
  },

  verdictOf(output: NativeObject): Verdict {
    switch (output.action) {
      case "deny": return "block";
      case "modify": return "modify";
      case "ask_user": return "ask";
      default: return "allow";
    }
  },

  chainInput(input: NativeObject, output: NativeObject): NativeObject {
    if (output.action !== "modify" || !isObject(output.delta)) return input;
    // upstream apply_delta_to_payload: top-level keys overwrite; a non-object payload becomes the delta.
    const payload = isObject(input.payload) ? { ...input.payload, ...output.delta } : { ...output.delta };
    return { ...input, payload };
  },

  stopsChain(output: NativeObject): boolean {
    return output.action === "deny";
  },

  reduce(outputs: readonly NativeObject[], _event: string, ctx: ProfileContext): Aggregated {
    return foldAiMemory(outputs.map((output, i) => ({ hook: `hook-${i}`, output })), ctx) as unknown as Aggregated;
  },

  reduceWithHooks(entries: readonly HookOutputEntry[], _event: string, ctx: ProfileContext): Aggregated {
    return foldAiMemory(entries, ctx) as unknown as Aggregated;
  },

  emptyPlanAnswer: requiredEventAnswer,

  hookBudgetMs,

  deadlineExhaustedOutput(hook: string, failClosed: boolean): NativeObject | undefined {
    if (!failClosed) return undefined; // fail-open: skipped, the chain goes on
    return { action: "deny", reason: `hook ${hook} skipped under fail_mode=closed: chain class deadline exhausted`, code: 504 };
  },

  present(aggregated: Aggregated): PresentedAnswer {
    const result = aggregated as unknown as ChainResult;
    // ai-memory reads one decision line; there are no exit-code semantics (always 0). Warnings go to stderr.
    const answer: PresentedAnswer = { native: decisionLine(result), exit_code: 0 };
    const warnings = Array.isArray(result.warnings) ? result.warnings : [];
    return warnings.length > 0 ? { ...answer, stderr: warnings.join("\n") } : answer;
  },

  refusalAnswer(reason: string, _event: string, ctx: ProfileContext): PresentedAnswer {
    // What a hook failing under fail_mode=closed answers (deny, code 503); ai-memory reads the line, not the exit code.
    const folded = foldAiMemory([{ hook: "vcp-hooks", output: { action: "deny", reason, code: 503 }, failed: true }], ctx);
    return { native: decisionLine(folded), exit_code: 2, stderr: reason };
  },
};
