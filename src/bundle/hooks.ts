/*
 * The manifest → hook mapping (DESIGN §3.1, §3.4): what a validated manifest puts in the VCP registry
 * (`manifestHookDefinitions`), what it offers to sessions, and what an event-profile bundle puts in
 * the registry's (profile, event) table (`manifestProfileHooks`, registry/profile-table.ts).
 * parseManifest validates each hook through `hookDefinition`, so install registers exactly what
 * build and parse checked.
 */
import type { Scope } from "../model/hook-type.js";
import { EXEC_ACTION, MAX_TIMEOUT_MS, type HookDefinition, type ProfileHookDefinition } from "../model/hook.js";
import { getProfile, VCP_PROFILE_ID } from "../profiles/index.js";
import type { EventProfile } from "../profiles/types.js";
import type { Manifest, ManifestHook } from "./manifest.js";

/**
 * The hook definitions install registers (`deployment`) or offers to sessions (`session`) for a
 * manifest: each hook of that scope, its action the export of this bundle revision (`digest`).
 *
 * @example
 * ```ts
 * registry.registerAll(manifestHookDefinitions(manifest, "deployment", artifact.digest), opts);
 * ```
 */
export function manifestHookDefinitions(manifest: Manifest, scope: Scope, digest?: string): HookDefinition[] {
  // An event-profile bundle's hooks enter the registry keyed by (profile, event): manifestProfileHooks.
  if (!isVcpManifest(manifest)) return [];
  return manifest.hooks.filter((hook) => (hook.scope ?? "deployment") === scope).map((hook) => hookDefinition(manifest, hook, scope, digest));
}

/** One manifest hook as the registry's definition: defaults filled in, trust from the bundle (session scope: `session`). */
export function hookDefinition(manifest: Manifest, hook: ManifestHook, scope: Scope, digest?: string): HookDefinition {
  return { ...hookFields(manifest, hook, scope, digest), type: hook.type! };
}

/** A manifest hook's definition without a VCP hook type: an event-profile hook's, and the rest of a VCP hook's. */
export function hookFields(manifest: Manifest, hook: ManifestHook, scope: Scope, digest?: string): Omit<HookDefinition, "type"> {
  return {
    name: hook.name,
    priority: hook.priority ?? DEFAULT_PROFILE_PRIORITY,
    timeout_ms: hook.timeout_ms ?? defaultProfileTimeoutMs(manifest),
    // An exec hook names no export: EXEC_ACTION marks it; its command travels in `exec` (profile hooks).
    action: { bundle: manifest.bundle, export: hook.action ?? EXEC_ACTION, ...(digest !== undefined ? { digest } : {}) },
    condition: hook.condition ?? null,
    enabled: hook.enabled ?? true,
    ...(hook.description !== undefined ? { description: hook.description } : {}),
    metadata: hook.metadata ?? {},
    fail_closed: hook.fail_closed ?? false,
    // DESIGN §3.4: a hook a session registers runs with session trust, whatever the bundle has.
    trust: scope === "session" ? "session" : manifest.trust,
  };
}

/** PROFILES §8.5: an event-profile hook without a `priority` has 50. */
export const DEFAULT_PROFILE_PRIORITY = 50;

/**
 * The `timeout_ms` of an event-profile hook that gives none: the profile's default, capped at its
 * maximum and at the sandbox's 30 000 ms (spec §5.4.5). Only reached for profile manifests (VCP
 * hooks must state theirs).
 */
function defaultProfileTimeoutMs(manifest: Pick<Manifest, "profile">): number {
  const profile = manifestProfile(manifest);
  return Math.min(profile.timeouts.default_ms, profile.timeouts.max_ms, MAX_TIMEOUT_MS);
}


/**
 * The hook definitions of an event-profile bundle (none for a `vcp@1` bundle), every one deployment
 * scope, its action the export of this bundle revision. No VCP hook type: the profile and `event` say what each is.
 *
 * @example
 * ```ts
 * store.set(manifest.bundle, manifestProfileHooks(manifest, artifact.digest));
 * ```
 */
export function manifestProfileHooks(manifest: Manifest, digest?: string): ProfileHookDefinition[] {
  if (isVcpManifest(manifest)) return [];
  return manifest.hooks.map((hook) => ({
    ...hookFields(manifest, hook, "deployment", digest),
    event: hook.event!,
    ...(hook.matcher !== undefined ? { matcher: hook.matcher } : {}),
    ...(hook.sequential !== undefined ? { sequential: hook.sequential } : {}),
    ...(hook.match !== undefined ? { match: hook.match } : {}),
    ...(hook.blocking !== undefined ? { blocking: hook.blocking } : {}),
    ...(hook.exec !== undefined ? { exec: hook.exec } : {}),
  }));
}

/** Whether any hook of the manifest is an exec hook (PROFILES §6). */
export function hasExecHooks(manifest: Pick<Manifest, "hooks">): boolean {
  return manifest.hooks.some((hook) => hook.exec !== undefined);
}

/** Whether the manifest has code to run in the sandbox (any hook with an action; an exec-only bundle has none). */
export function hasActionHooks(manifest: Pick<Manifest, "hooks">): boolean {
  return manifest.hooks.some((hook) => hook.exec === undefined);
}

/** Whether the manifest is a `vcp@1` bundle (no `profile`, or one naming vcp). */
export function isVcpManifest(manifest: Pick<Manifest, "profile">): boolean {
  return manifest.profile === undefined || manifest.profile === VCP_PROFILE_ID || manifest.profile.startsWith(`${VCP_PROFILE_ID}@`);
}

/**
 * The catalogued profile of a validated manifest.
 *
 * @example
 * ```ts
 * manifestProfile(manifest).id; // "vcp" when the manifest names none
 * ```
 */
export function manifestProfile(manifest: Pick<Manifest, "profile">): EventProfile {
  return getProfile(manifest.profile ?? VCP_PROFILE_ID);
}

/**
 * The names of a manifest's hooks of one scope, in manifest order (`BundleInfo.hooks`, `session_hooks`).
 *
 * @example
 * ```ts
 * manifestHookNames(manifest, "session"); // ["strict-mode"]
 * ```
 */
export function manifestHookNames(manifest: Manifest, scope: Scope): string[] {
  return manifest.hooks.filter((hook) => (hook.scope ?? "deployment") === scope).map((hook) => hook.name);
}
