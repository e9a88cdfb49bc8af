import type { Decoded, NativeObject } from "../types.js";
import { isPreEvent } from "./events.js";

/** Upstream `default_deny_code`. */
export const DEFAULT_DENY_CODE = 403;

/** Upstream `MemoryDelta`: every field optional; `null` means "not set". */
const DELTA_FIELDS: Record<string, (v: unknown) => string | undefined> = {
  tier: (v) => (v === "short" || v === "mid" || v === "long" ? undefined : "must be one of short, mid, long"),
  namespace: str,
  title: str,
  content: str,
  tags: (v) => (Array.isArray(v) && v.every((t) => typeof t === "string") ? undefined : "must be an array of strings"),
  priority: (v) => (Number.isInteger(v) && Math.abs(v as number) <= 2 ** 31 - 1 ? undefined : "must be a 32-bit integer"),
  confidence: (v) => (typeof v === "number" && Number.isFinite(v) ? undefined : "must be a number"),
  source: str,
  expires_at: str,
  metadata: () => undefined,
};

function str(v: unknown): string | undefined {
  return typeof v === "string" ? undefined : "must be a string";
}

function isObject(v: unknown): v is NativeObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function fail(error: string): Decoded<NativeObject> {
  return { ok: false, error };
}

/**
 * Parse a delta as upstream's serde does: typed fields checked, `null` fields dropped; unknown keys are
 * ignored upstream (compatibility) and refused under `strict` (a delta key that is silently dropped is
 * a policy that silently does nothing).
 */
function decodeDelta(raw: unknown, strict: boolean): Decoded<NativeObject> {
  if (!isObject(raw)) return fail(`hook decision action="modify": delta must be an object`);
  const delta: NativeObject = {};
  for (const [key, value] of Object.entries(raw)) {
    const check = DELTA_FIELDS[key];
    if (check === undefined) {
      if (strict) return fail(`hook decision action="modify": delta.${key} is not a memory field (${Object.keys(DELTA_FIELDS).join(", ")})`);
      continue;
    }
    if (value === null || value === undefined) continue;
    const why = check(value);
    if (why !== undefined) return fail(`hook decision action="modify": delta.${key} ${why}`);
    delta[key] = value;
  }
  return { ok: true, value: delta };
}

/**
 * Decode one hook decision (upstream `HookDecision::parse`), as a JS value an action returned or the
 * parsed decision line of a command hook. `undefined`, `null` and `{}` allow. Unknown action, missing
 * field, wrong type ⇒ refused (a hook error: the fail mode decides). A `modify` on a non-`pre_` event
 * degrades to allow and carries a `warning` (upstream `degrade_modify_for_post_event`).
 *
 * @example
 * ```ts
 * decodeDecision({ action: "deny", reason: "no" }, "pre_store", false); // ok: { action: "deny", reason: "no", code: 403 }
 * decodeDecision({ action: "modify" }, "pre_store", false);             // error: action="modify" missing required field "delta"
 * ```
 */
export function decodeDecision(raw: unknown, event: string, strict: boolean): Decoded<NativeObject> {
  if (raw === undefined || raw === null) return { ok: true, value: { action: "allow" } };
  if (!isObject(raw)) return fail("hook decision must be a JSON object");
  if (Object.keys(raw).length === 0) return { ok: true, value: { action: "allow" } };
  if (!("action" in raw)) return fail('hook decision missing required "action" field');
  const action = raw.action;
  if (typeof action !== "string") return fail('hook decision malformed: "action" must be a string');
  switch (action) {
    case "allow":
      return { ok: true, value: { action: "allow" } };
    case "modify": {
      if (!("delta" in raw)) return fail('hook decision action="modify" missing required field "delta"');
      const delta = decodeDelta(raw.delta, strict);
      if (!delta.ok) return delta;
      if (!isPreEvent(event)) {
        return { ok: true, value: { action: "allow", warning: `modify returned for ${event}, which is not a pre_ event: treated as allow` } };
      }
      return { ok: true, value: { action: "modify", delta: delta.value } };
    }
    case "deny": {
      if (!("reason" in raw)) return fail('hook decision action="deny" missing required field "reason"');
      if (typeof raw.reason !== "string") return fail('hook decision malformed: "reason" must be a string');
      // Upstream: a code that is not a 32-bit integer falls back to 403.
      const c = raw.code;
      const code = Number.isInteger(c) && Math.abs(c as number) <= 2 ** 31 - 1 ? (c as number) : DEFAULT_DENY_CODE;
      return { ok: true, value: { action: "deny", reason: raw.reason, code } };
    }
    case "ask_user": {
      if (!("prompt" in raw)) return fail('hook decision action="ask_user" missing required field "prompt"');
      if (typeof raw.prompt !== "string") return fail('hook decision malformed: "prompt" must be a string');
      if (!("options" in raw)) return fail('hook decision action="ask_user" missing required field "options"');
      const options = raw.options;
      if (!Array.isArray(options) || !options.every((o) => typeof o === "string")) return fail('hook decision malformed: "options" must be an array of strings');
      const out: NativeObject = { action: "ask_user", prompt: raw.prompt, options: [...options] };
      if (raw.default !== undefined && raw.default !== null) {
        if (typeof raw.default !== "string") return fail('hook decision malformed: "default" must be a string');
        out.default = raw.default;
      }
      return { ok: true, value: out };
    }
    default:
      return fail(`hook decision has unknown action ${JSON.stringify(action)}`);
  }
}

/** What a command hook produced (exec lane, adapter), before the decision is parsed. */
export interface CommandRun {
  stdout: string;
  stderr?: string;
  /** `null` when the process was killed by a signal. */
  exitCode: number | null;
  timedOut?: boolean;
  timeoutMs?: number;
}

/**
 * ai-memory's own command-hook wire (upstream `executor.rs`): a timeout or a non-zero exit is a hook
 * error (no exit-code semantics); otherwise the LAST non-empty stdout line is the decision (earlier
 * lines may be debug output), and an empty stdout allows.
 *
 * @example
 * ```ts
 * parseCommandResult({ stdout: 'debug\n{"action":"deny","reason":"x"}\n', exitCode: 0 }, "pre_store", false);
 * // { ok: true, value: { action: "deny", reason: "x", code: 403 } }
 * ```
 */
export function parseCommandResult(run: CommandRun, event: string, strict: boolean): Decoded<NativeObject> {
  if (run.timedOut === true) return fail(`hook timed out after ${run.timeoutMs ?? "?"}ms`);
  if (run.exitCode !== 0) {
    const preview = [...(run.stderr ?? "")].slice(0, 256).join("");
    return fail(`hook child exited (code ${run.exitCode === null ? "<signaled>" : run.exitCode}): ${preview}`);
  }
  const lines = run.stdout.split(/\r?\n/).filter((l) => l.trim() !== "");
  const line = (lines[lines.length - 1] ?? "").trim();
  if (line === "") return { ok: true, value: { action: "allow" } };
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (e) {
    return fail(`hook decision malformed: ${(e as Error).message}`);
  }
  // On the wire only an object is a decision (`null` from a JS action allows; the line "null" does not).
  if (parsed === null) return fail("hook decision must be a JSON object");
  return decodeDecision(parsed, event, strict);
}
