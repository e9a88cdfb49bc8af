import { VcpError } from "../errors.js";
import type { Scope } from "../model/hook-type.js";
import type { RegisterOptions } from "./types.js";

/** The scope of one call once checked: a session id exactly when the scope is `session`. */
export type ScopeKey = { scope: "deployment"; sessionId?: undefined } | { scope: "session"; sessionId: string };

/**
 * Checks the scope of a call and that the principal may act in it (spec §8.2.1): deployment scope
 * belongs to operators and the runtime; any principal may act in a session, but what a client may
 * register there is limited by {@link checkAllowlist}.
 *
 * @example
 * ```ts
 * const key = authorizeScope({ scope: "session", sessionId: "s1", principal: { id: "u", role: "client" } });
 * ```
 */
export function authorizeScope(opts: RegisterOptions): ScopeKey {
  const { scope, sessionId, principal } = opts;
  if (scope === "deployment") {
    if (sessionId !== undefined) {
      const rule = "must be absent for deployment scope";
      throw new VcpError("INVALID_HOOK", `hooks: session_id: ${rule}`, { field: "session_id", rule, received: sessionId });
    }
    // SECURITY: end users never register deployment hooks (spec §8.2.1).
    if (principal.role !== "operator" && principal.role !== "system") throw unauthorized(opts, scope);
    return { scope };
  }
  if (scope === "session") {
    if (typeof sessionId !== "string" || sessionId.length === 0) {
      const rule = "a session-scope call needs a non-empty session id";
      throw new VcpError("INVALID_HOOK", `hooks: session_id: ${rule}`, { field: "session_id", rule, received: sessionId });
    }
    if (principal.role !== "operator" && principal.role !== "system" && principal.role !== "client") {
      throw unauthorized(opts, scope);
    }
    return { scope, sessionId };
  }
  const rule = 'must be "deployment" or "session"';
  throw new VcpError("INVALID_HOOK", `hooks: scope: ${rule}`, { field: "scope", rule, received: String(scope) });
}

/**
 * Checks a call that switches a deployment-scope hook off (or back on) in one session only (spec
 * §7.3.4, a cascade in that session): only operators and the runtime may, like every other change of
 * a deployment hook; the session id must be a non-empty string.
 *
 * @example
 * ```ts
 * authorizeSessionOverride({ scope: "deployment", sessionId: "s1", principal: { id: "runtime", role: "system" } });
 * ```
 */
export function authorizeSessionOverride(opts: RegisterOptions): { scope: "deployment"; sessionId: string } {
  const { sessionId, principal } = opts;
  if (typeof sessionId !== "string" || sessionId.length === 0) {
    const rule = "a session-local change of a deployment hook needs a non-empty session id";
    throw new VcpError("INVALID_HOOK", `hooks: session_id: ${rule}`, { field: "session_id", rule, received: sessionId });
  }
  // SECURITY: a client never switches deployment policy off, not even in its own session.
  if (principal.role !== "operator" && principal.role !== "system") throw unauthorized(opts, "deployment");
  return { scope: "deployment", sessionId };
}

/**
 * Spec §8.2.1: a session-scope hook must be on the deployment's allowlist as `"bundle/hook"`.
 * Nobody bypasses it, not even role `system`: the list is the deployment's decision.
 *
 * @example
 * ```ts
 * checkAllowlist("pii", "strip", "s1", new Set(["pii/strip"])); // ok
 * ```
 */
export function checkAllowlist(bundle: string, hook: string, sessionId: string, allowlist: ReadonlySet<string>): void {
  const entry = `${bundle}/${hook}`;
  // SECURITY: the only gate between a client and code running in its session's chains.
  if (!allowlist.has(entry)) {
    throw new VcpError(
      "SESSION_HOOK_NOT_ALLOWED",
      `hooks: "${entry}" is not on the deployment's session hook allowlist (spec §8.2.1)`,
      { hook, bundle, entry, session_id: sessionId },
    );
  }
}

function unauthorized(opts: RegisterOptions, scope: Scope): VcpError {
  const { id, role } = opts.principal;
  return new VcpError(
    "UNAUTHORIZED_PRINCIPAL",
    `hooks: principal "${id}" (role ${String(role)}) may not change ${scope}-scope hooks (spec §8.2.1)`,
    { principal: id, role, scope },
  );
}
