/*
 * `runtime.hooks`: the registry as callers read and switch it. A member that names a session checks
 * it like every session member (session-api.ts `visibleKey`: another client's session is
 * SESSION_NOT_FOUND), with either store — so each is async: with Redis the check is a round trip.
 * What leaves names sessions as the caller does (caller-view.ts).
 */
import { isHookType, type HookType, type Scope } from "../model/hook-type.js";
import type { ResolvedHook } from "../model/hook.js";
import type { EnabledProfile } from "../profiles/enabled.js";
import type { SessionAccess } from "../pipeline/index.js";
import type { HookSwitches, Principal, Registry } from "../registry/index.js";
import type { RegistryAdmission } from "../store/adapters.js";
import { listHooks, type HookListFilter, type HookListing } from "../registry/listing.js";
import { LOCAL_OPERATOR } from "../install/bundles.js";
import { callerHook } from "./caller-view.js";
import { unknownType } from "./vcp.js";

export interface HooksApi {
  /**
   * The resolved chain order for a type and optional session (DESIGN §6.2 `GET /v1/hooks`). With a
   * session and a principal, the session must be one the principal may see (SESSION_NOT_FOUND otherwise).
   */
  chain(type: HookType, sessionId?: string, options?: SessionAccess): Promise<ResolvedHook[]>;
  /**
   * Every hook of the registry (`GET /v1/hooks`), keyed by (profile, event): the VCP chains (profile
   * `vcp`, event = type; `session`: that session's) then each enabled profile's plans, in the order
   * they run. Filters `profile`, `event`, `bundle`, `type` combine; a profile that is not enabled or an
   * event it does not have is INVALID_REQUEST naming the field. With `session` and a principal, the
   * session must be one the principal may see (SESSION_NOT_FOUND otherwise).
   */
  list(filter?: HookListFilter & { session?: string }, options?: SessionAccess): Promise<HookListing[]>;
  /**
   * Re-enable (or disable) a hook, e.g. after a cascade disabled it (spec §7.3.4). Without a
   * `sessionId`: globally (a deployment hook by default; operators only). With a `sessionId`: in that
   * session only: its session-scope hook of that name, else the deployment hook there (scope
   * `deployment` names the deployment hook explicitly). Cascades disable hooks per session this way.
   * With a `sessionId` and a principal, the session must be one the principal may see (SESSION_NOT_FOUND).
   * The switch holds until switched again, on every replica (registry/switches.ts); a store that
   * cannot record it leaves it unswitched (STORE_UNAVAILABLE).
   */
  setEnabled(name: string, enabled: boolean, options?: { scope?: Scope; sessionId?: string; owner?: string | null; principal?: Principal }): Promise<ResolvedHook>;
}

/**
 * @example
 * ```ts
 * const hooks = createHooksApi({ registry, switches, enabledProfiles, visibleKey: sessionApi.visibleKey, admission });
 * await hooks.setEnabled("strip_pii", true, { sessionId: "s1" });
 * ```
 */
export function createHooksApi(deps: {
  registry: Registry;
  /** Where a switch is applied and recorded (registry/switches.ts): with a shared store, for every replica. */
  switches: Pick<HookSwitches, "set">;
  enabledProfiles: ReadonlyMap<string, EnabledProfile>;
  /** The session's key, or SESSION_NOT_FOUND for a session the principal may not see (session-api.ts). */
  visibleKey(sessionId: string, access: SessionAccess): Promise<string>;
  /** The registry-change limit (spec §8.2.5): with a shared store, counted once for every replica. */
  admission: RegistryAdmission;
}): HooksApi {
  const { registry, visibleKey } = deps;
  const keyOf = (sessionId: string | undefined, access: SessionAccess) => (sessionId === undefined ? Promise.resolve(undefined) : visibleKey(sessionId, access));
  return {
    async chain(type, sessionId, access = {}) {
      if (!isHookType(type)) throw unknownType(type);
      // A session's chain lists its session hooks: another client's session is "not found".
      const key = await keyOf(sessionId, access);
      return registry.snapshot().chain(type, key).hooks.map((p) => callerHook(p.hook));
    },
    async list({ session, ...filter } = {}, access = {}) {
      const key = await keyOf(session, access);
      return listHooks(registry.snapshot(), deps.enabledProfiles, filter, key).map(callerHook);
    },
    async setEnabled(name, enabled, options = {}) {
      // An operator names another owner's session with `owner` (ids are per owner).
      const sessionId = await keyOf(options.sessionId, { principal: options.principal, owner: options.owner });
      // With a session and no scope: that session's own hook of the name, else the deployment hook in
      // that session only (how a cascade disabled it).
      const inSession = sessionId !== undefined && registry.snapshot().find(name, "session", sessionId) !== undefined;
      // A change like any other: the deployment-wide limit first, then not counted again here.
      await deps.admission.admit(options.principal);
      return callerHook(await deps.switches.set(name, enabled, {
        scope: options.scope ?? (sessionId === undefined ? "deployment" : inSession ? "session" : "deployment"),
        ...(sessionId !== undefined ? { sessionId } : {}),
        principal: options.principal ?? LOCAL_OPERATOR,
        ...(deps.admission.shared && options.principal !== undefined ? { rateAdmitted: "shared" as const } : {}),
      }));
    },
  };
}
