import type { Decoded, NativeObject } from "../types.js";

export type HookAction = "continue" | "deny" | "modify" | "inject_context" | "ask_user";
export type InjectionRole = "system" | "user" | "assistant";
export type MessageLevel = "info" | "warning" | "error";

/**
 * Amplifier's `HookResult` (`crates/amplifier-core/src/models.rs`) with every field present, as upstream
 * serializes it (absent optionals are `null`). Unknown keys a hook returns are kept under `extensions`
 * (upstream flattens them into the object; nested here so they can never shadow a field of the answer).
 */
export interface HookResult {
  action: HookAction;
  data: NativeObject | null;
  reason: string | null;
  context_injection: string | null;
  context_injection_role: InjectionRole;
  ephemeral: boolean;
  approval_prompt: string | null;
  approval_options: string[] | null;
  /** Seconds. */
  approval_timeout: number;
  approval_default: "allow" | "deny";
  suppress_output: boolean;
  user_message: string | null;
  user_message_level: MessageLevel;
  user_message_source: string | null;
  append_to_last_tool_result: boolean;
  extensions: NativeObject;
}

const ACTIONS: readonly HookAction[] = ["continue", "deny", "modify", "inject_context", "ask_user"];
const ROLES: readonly InjectionRole[] = ["system", "user", "assistant"];
const LEVELS: readonly MessageLevel[] = ["info", "warning", "error"];
const KNOWN = new Set([
  "action", "data", "reason", "context_injection", "context_injection_role", "ephemeral", "approval_prompt",
  "approval_options", "approval_timeout", "approval_default", "suppress_output", "user_message",
  "user_message_level", "user_message_source", "append_to_last_tool_result", "extensions",
]);

/** The default result: `continue` with upstream's defaults (timeout 300 s, default deny, role system). */
export function defaultResult(): HookResult {
  return {
    action: "continue", data: null, reason: null, context_injection: null, context_injection_role: "system",
    ephemeral: false, approval_prompt: null, approval_options: null, approval_timeout: 300,
    approval_default: "deny", suppress_output: false, user_message: null, user_message_level: "info",
    user_message_source: null, append_to_last_tool_result: false, extensions: {},
  };
}

function isObject(v: unknown): v is NativeObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

class Refused extends Error {}

/**
 * `target[key] = value` as an own data property, whatever the key: an own `"__proto__"` key (JSON.parse
 * makes one; a command hook's stdout or a library caller's object may carry it) stays a plain key
 * instead of replacing the prototype of the answer's `extensions`.
 */
function keep(target: NativeObject, key: string, value: unknown): void {
  // SECURITY: defineProperty never invokes the __proto__ setter (Object.assign and `=` would).
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function oneOf<T extends string>(raw: NativeObject, key: string, allowed: readonly T[], fallback: T): T {
  const v = raw[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== "string" || !(allowed as readonly string[]).includes(v)) {
    throw new Refused(`${key}: must be one of ${allowed.join(", ")} (got ${JSON.stringify(v)})`);
  }
  return v as T;
}

function optString(raw: NativeObject, key: string): string | null {
  const v = raw[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== "string") throw new Refused(`${key}: must be a string`);
  return v;
}

function bool(raw: NativeObject, key: string): boolean {
  const v = raw[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== "boolean") throw new Refused(`${key}: must be a boolean`);
  return v;
}

/**
 * Decode what an Amplifier action returned into a full {@link HookResult}. Anything that is not an
 * object, an unknown `action`, or a field of the wrong type is refused (the executor records the hook
 * as failed; Amplifier skips it: fail-open). Unknown keys go to `extensions`.
 *
 * @example
 * ```ts
 * decodeHookResult({ action: "deny", reason: "no" }); // { ok: true, value: { action: "deny", reason: "no", approval_timeout: 300, … } }
 * decodeHookResult({ action: "explode" });            // { ok: false, error: "action: must be one of continue, deny, …" }
 * ```
 */
export function decodeHookResult(raw: unknown): Decoded<HookResult> {
  if (!isObject(raw)) return { ok: false, error: `hook result must be a JSON object (got ${raw === null ? "null" : Array.isArray(raw) ? "an array" : typeof raw})` };
  try {
    const r = defaultResult();
    r.action = oneOf(raw, "action", ACTIONS, "continue");
    if (raw.data !== undefined && raw.data !== null) {
      if (!isObject(raw.data)) throw new Refused("data: must be an object");
      r.data = raw.data;
    }
    r.reason = optString(raw, "reason");
    r.context_injection = optString(raw, "context_injection");
    r.context_injection_role = oneOf(raw, "context_injection_role", ROLES, "system");
    r.ephemeral = bool(raw, "ephemeral");
    r.approval_prompt = optString(raw, "approval_prompt");
    const options = raw.approval_options;
    if (options !== undefined && options !== null) {
      if (!Array.isArray(options) || !options.every((o) => typeof o === "string")) {
        throw new Refused("approval_options: must be an array of strings");
      }
      r.approval_options = [...options] as string[];
    }
    const timeout = raw.approval_timeout;
    if (timeout !== undefined && timeout !== null) {
      if (typeof timeout !== "number" || !Number.isFinite(timeout) || timeout <= 0) {
        throw new Refused("approval_timeout: must be a positive number of seconds");
      }
      r.approval_timeout = timeout;
    }
    r.approval_default = oneOf(raw, "approval_default", ["allow", "deny"] as const, "deny");
    r.suppress_output = bool(raw, "suppress_output");
    r.user_message = optString(raw, "user_message");
    r.user_message_level = oneOf(raw, "user_message_level", LEVELS, "info");
    r.user_message_source = optString(raw, "user_message_source");
    r.append_to_last_tool_result = bool(raw, "append_to_last_tool_result");
    const extensions: NativeObject = {};
    if (raw.extensions !== undefined && raw.extensions !== null) {
      if (!isObject(raw.extensions)) throw new Refused("extensions: must be an object");
      for (const [k, v] of Object.entries(raw.extensions)) keep(extensions, k, v);
    }
    for (const [k, v] of Object.entries(raw)) if (!KNOWN.has(k)) keep(extensions, k, v);
    r.extensions = extensions;
    return { ok: true, value: r };
  } catch (e) {
    if (e instanceof Refused) return { ok: false, error: e.message };
    throw e;
  }
}
