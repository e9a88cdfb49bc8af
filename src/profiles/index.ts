/**
 * The event-profile catalogue (PROFILES §2, §8.2): which hook systems this runtime can run, by bare
 * name, and how a manifest's or a deployment's `name` / `name@version` reference resolves to one.
 * A core module: no I/O, so the worker in the sandbox host looks profiles up here exactly as the
 * main process does.
 *
 * @example
 * ```ts
 * const gemini = getProfile("gemini-cli@0.x"); // throws UNKNOWN_PROFILE when it is not catalogued
 * listProfiles().map((p) => `${p.id}@${p.version}`); // ["vcp@1", …]
 * ```
 */
import { VcpError } from "../errors.js";
import { describeIssues } from "../model/zod-errors.js";
import type { EventProfile } from "./types.js";
import { vcpProfile } from "./vcp/index.js";
import { geminiCliProfile } from "./gemini-cli/index.js";
import { llxprtProfile } from "./llxprt/index.js";
import { claudeCodeProfile } from "./claude-code/index.js";
import { amplifierProfile } from "./amplifier/index.js";
import { aiMemoryProfile } from "./ai-memory/index.js";
import { repoYamlProfile } from "./repo-yaml/index.js";
import { codexProfile } from "./codex/index.js";
import { vscodeProfile } from "./vscode/index.js";
import { cursorProfile } from "./cursor/index.js";
import { openhandsProfile } from "./openhands/index.js";
import { gooseProfile } from "./goose/index.js";

export type { EventProfile, EventSpec, ProfileContext, NativeObject, Decoded, CompiledMatcher, PresentedAnswer, Verdict, ExitCode, Aggregated } from "./types.js";
export { vcpProfile, VCP_PROFILE_ID } from "./vcp/index.js";
export { hookMatcher } from "./common/native.js";
export { profileConditionFields } from "./common/condition-fields.js";
export { MAX_MATCHER_COST, MatcherCostError, ScanBudgetExceeded, type ScanMeter } from "./common/scan.js";

/** The built-in profiles, in listing order. */
const BUILT_IN: readonly EventProfile[] = [vcpProfile, geminiCliProfile, llxprtProfile, claudeCodeProfile, amplifierProfile, aiMemoryProfile, repoYamlProfile, codexProfile, vscodeProfile, cursorProfile, openhandsProfile, gooseProfile];

/** id → profile; built-ins first, then {@link registerProfile} (embedders and tests). */
const catalogue = new Map<string, EventProfile>(BUILT_IN.map((p) => [p.id, p]));

const PROFILE_NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;
const PROFILE_VERSION = /^[0-9A-Za-z.x-]{1,32}$/;

/** A parsed `name` or `name@version` reference. */
export interface ProfileRef {
  readonly name: string;
  readonly version?: string;
}

/**
 * Parse `name` / `name@version` (PROFILES §8.2). Malformed ⇒ `UNKNOWN_PROFILE` naming the text.
 *
 * @example
 * ```ts
 * parseProfileRef("gemini-cli@0.x"); // { name: "gemini-cli", version: "0.x" }
 * ```
 */
export function parseProfileRef(ref: string): ProfileRef {
  const at = ref.indexOf("@");
  const name = at < 0 ? ref : ref.slice(0, at);
  const version = at < 0 ? undefined : ref.slice(at + 1);
  if (!PROFILE_NAME.test(name) || (version !== undefined && !PROFILE_VERSION.test(version))) {
    throw new VcpError("UNKNOWN_PROFILE", `'${ref}' is not a profile reference: expected <name> or <name>@<version> (e.g. gemini-cli@0.x)`, {
      profile: ref,
      known: knownRefs(),
    });
  }
  return version === undefined ? { name } : { name, version };
}

/**
 * The catalogued profile a reference names. A pinned version must equal the catalogued one (a
 * deployment runs one pinned version per name, PROFILES §8.2).
 *
 * @example
 * ```ts
 * getProfile("vcp").version; // "1"
 * ```
 */
export function getProfile(ref: string): EventProfile {
  const { name, version } = parseProfileRef(ref);
  const profile = catalogue.get(name);
  if (profile === undefined) {
    throw new VcpError("UNKNOWN_PROFILE", `unknown profile '${ref}'; known profiles: ${knownRefs().join(", ")}`, { profile: ref, known: knownRefs() });
  }
  if (version !== undefined && version !== profile.version) {
    throw new VcpError("UNKNOWN_PROFILE", `profile '${ref}': this runtime pins ${profile.id}@${profile.version}, not version ${version}`, {
      profile: ref,
      pinned: `${profile.id}@${profile.version}`,
      known: knownRefs(),
    });
  }
  return profile;
}

/** The profile, or undefined when the reference names none (no throw; for lookups on trusted ids). */
export function findProfile(id: string): EventProfile | undefined {
  return catalogue.get(id);
}

/**
 * Every catalogued profile, built-ins first.
 *
 * @example
 * ```ts
 * for (const p of listProfiles()) console.log(p.id, Object.keys(p.events).length);
 * ```
 */
export function listProfiles(): readonly EventProfile[] {
  return [...catalogue.values()];
}

/**
 * Whether `event` is one of the profile's events (its own `isEvent` for open vocabularies).
 *
 * @example
 * ```ts
 * isProfileEvent(vcpProfile, "pre_inject"); // true
 * ```
 */
export function isProfileEvent(profile: EventProfile, event: string): boolean {
  return profile.isEvent !== undefined ? profile.isEvent(event) : Object.hasOwn(profile.events, event);
}

/**
 * `UNKNOWN_EVENT` unless the profile has `event`.
 *
 * @example
 * ```ts
 * assertProfileEvent(vcpProfile, "BeforeTool"); // throws UNKNOWN_EVENT
 * ```
 */
export function assertProfileEvent(profile: EventProfile, event: string): void {
  if (!isProfileEvent(profile, event)) {
    const known = Object.keys(profile.events);
    throw new VcpError("UNKNOWN_EVENT", `profile '${profile.id}' has no event '${event}'; its events: ${known.join(", ")}`, {
      profile: profile.id,
      event,
      known,
    });
  }
}

/**
 * Add a profile to this process's catalogue: for embedders with their own hook system and for
 * tests. A built-in cannot be replaced. The sandbox host has its own catalogue: a profile chain
 * runs there only when the same module is passed as `sandbox.profileModules` (RuntimeOptions).
 *
 * @example
 * ```ts
 * registerProfile(myProfile);
 * ```
 */
export function registerProfile(profile: EventProfile): void {
  if (!PROFILE_NAME.test(profile.id)) throw new VcpError("INVALID_CONFIG", `profile id '${profile.id}' must match [a-z0-9][a-z0-9-]{0,63}`, { field: "profile.id" });
  // SECURITY: a refused event a fail_closed hook guards is answered by this (issue 24): no profile without it.
  if (typeof profile.refusalAnswer !== "function") {
    throw new VcpError("INVALID_CONFIG", `profile '${profile.id}' has no refusalAnswer(reason, event, ctx): every profile must say how it blocks an event the runtime refused`, { field: "profile.refusalAnswer", profile: profile.id });
  }
  const existing = catalogue.get(profile.id);
  if (existing === profile) return;
  if (BUILT_IN.some((p) => p.id === profile.id)) {
    throw new VcpError("INVALID_CONFIG", `profile '${profile.id}' is built in and cannot be replaced`, { field: "profile.id", profile: profile.id });
  }
  catalogue.set(profile.id, profile);
}

function knownRefs(): string[] {
  return [...catalogue.values()].map((p) => `${p.id}@${p.version}`);
}

/**
 * Check a deployment's settings for one profile (`vcp.yaml` `profiles.<ref>` without `strict`) against
 * the profile's `settingsSchema` (every built-in profile has one); a profile without one (an
 * embedder's) gets its settings as given. Returns the settings as the schema parsed them. A refused
 * setting is `INVALID_CONFIG` naming `profiles.<ref>.<field>`: a misspelt limit must never silently be
 * the default.
 *
 * @example
 * ```ts
 * checkProfileSettings(getProfile("ai-memory"), "ai-memory@0.7", { required_events: ["pre_stor"] });
 * // throws INVALID_CONFIG "profiles.ai-memory@0.7.required_events[0]: not an ai-memory event"
 * ```
 */
export function checkProfileSettings(profile: EventProfile, ref: string, settings: Readonly<Record<string, unknown>>, source?: string): Record<string, unknown> {
  if (profile.settingsSchema === undefined) return { ...settings };
  const parsed = profile.settingsSchema.safeParse(settings);
  if (!parsed.success) {
    // An unknown key is named as the field itself (`profiles.amplifier.injection_size_limmit`).
    const problems = describeIssues(parsed.error, `profiles.${ref}`).map((p, i) => {
      const issue = parsed.error.issues[i]!;
      return issue.code === "unrecognized_keys" ? { field: `${p.field}.${issue.keys.join(",")}`, rule: "unknown setting" } : p;
    });
    throw new VcpError("INVALID_CONFIG", `${source !== undefined ? `${source}: ` : ""}${problems.map((p) => `${p.field}: ${p.rule}`).join("; ")}`, {
      field: problems[0]!.field,
      problems,
      ...(source !== undefined ? { file: source } : {}),
    });
  }
  return { ...(parsed.data as Record<string, unknown>) };
}
