/**
 * `vcp-hooks doctor` (PROFILES §3.5, issue 14): deployment problems that no single install or
 * request reveals, found from the deployment's own view — a config and its data directory (local),
 * or a running server's `GET /v1/profiles`, `GET /v1/status` and `GET /v1/hooks?profile=…&event=…`.
 *
 * ```
 *  view { enabled profiles (+ settings), installed bundles (+ their profile, hooks) , enabled hooks per event }
 *    ─► required_events with no enabled hook  (problem: every such event is denied 503)
 *    ─► profile enabled, no bundle of it       (problem; a note when `profiles:` is absent and all are on)
 *    ─► bundle of a profile not enabled        (problem: refused at install / not run)
 *    ─► hooks on advisory events, exec hooks, timeouts that look like seconds   (notes)
 * ```
 * Problems need action (exit 1); notes are information.
 */
import { createBundleStore } from "../bundle/store.js";
import { getProfile, listProfiles } from "../profile-kit.js";

export type Severity = "problem" | "note";

export interface Finding {
  severity: Severity;
  code: "REQUIRED_EVENT_WITHOUT_HOOK" | "PROFILE_WITHOUT_BUNDLE" | "BUNDLE_OF_DISABLED_PROFILE" | "HOOK_ON_ADVISORY_EVENT" | "EXEC_HOOK" | "ALL_PROFILES_ENABLED" | "TIMEOUT_UNIT";
  message: string;
  profile?: string;
  event?: string;
  bundle?: string;
  hook?: string;
}

/** What doctor looks at, from a config or from a server. */
export interface DeploymentView {
  /** Where the view came from, for messages: `vcp.yaml` or a server URL. */
  source: string;
  /** Enabled profiles by id (vcp excluded), with their deployment settings. */
  profiles: ReadonlyArray<{ id: string; settings: Readonly<Record<string, unknown>> }>;
  /** `false` when the deployment lists no `profiles:` (every catalogued profile is on by default). */
  explicitProfiles: boolean;
  bundles: ReadonlyArray<{
    bundle: string;
    /** The profile id (`vcp` for a VCP bundle). */
    profile: string;
    /** Hooks with their events, when the view knows them (a local data directory does; a server's status does not). */
    hooks?: ReadonlyArray<{ name: string; event: string; enabled: boolean; exec: boolean; timeout_ms?: number }>;
  }>;
  /** Enabled hooks of one profile event (a server answers per event; a local view counts its bundles' hooks). */
  enabledHooks(profile: string, event: string): Promise<number>;
}

const VCP = "vcp";

function profileIdOf(ref: string | undefined): string {
  if (ref === undefined || ref === "") return VCP;
  return ref.split("@")[0]!;
}

/**
 * @example
 * ```ts
 * const findings = await diagnose(view);
 * process.exitCode = findings.some((f) => f.severity === "problem") ? 1 : 0;
 * ```
 */
export async function diagnose(view: DeploymentView): Promise<Finding[]> {
  const out: Finding[] = [];
  const enabled = new Map(view.profiles.filter((p) => p.id !== VCP).map((p) => [p.id, p]));

  for (const { id, settings } of enabled.values()) {
    const required = settings["required_events"];
    if (!Array.isArray(required)) continue;
    for (const event of required) {
      if (typeof event !== "string") continue;
      if ((await view.enabledHooks(id, event)) === 0) {
        out.push({
          severity: "problem", code: "REQUIRED_EVENT_WITHOUT_HOOK", profile: id, event,
          message: `${id} event ${event} is in required_events but no enabled hook handles it: every ${event} is denied with 503 (install a bundle with a hook on ${event}, or remove it from profiles.${id}.required_events)`,
        });
      }
    }
  }

  const withBundle = new Set(view.bundles.map((b) => profileIdOf(b.profile)));
  if (!view.explicitProfiles) {
    out.push({ severity: "note", code: "ALL_PROFILES_ENABLED", message: `${view.source} lists no profiles: every catalogued profile is enabled; list the ones you run under profiles: so a stray bundle of another is refused` });
  }
  for (const id of enabled.keys()) {
    if (withBundle.has(id)) continue;
    out.push({
      severity: view.explicitProfiles ? "problem" : "note", code: "PROFILE_WITHOUT_BUNDLE", profile: id,
      message: `profile ${id} is enabled but no installed bundle belongs to it: its events run no hook${view.explicitProfiles ? ` (install its bundle, or remove profiles.${id})` : ""}`,
    });
  }
  for (const b of view.bundles) {
    const id = profileIdOf(b.profile);
    if (id === VCP || enabled.has(id)) continue;
    out.push({
      severity: "problem", code: "BUNDLE_OF_DISABLED_PROFILE", profile: id, bundle: b.bundle,
      message: `bundle ${b.bundle} belongs to profile ${id}, which is not enabled: its hooks never run and a reinstall is refused with PROFILE_DISABLED (enable profiles.${id}, or remove the bundle)`,
    });
  }

  for (const b of view.bundles) {
    const id = profileIdOf(b.profile);
    let profile: ReturnType<typeof getProfile> | undefined;
    try {
      profile = id === VCP ? undefined : getProfile(id);
    } catch {
      profile = undefined;
    }
    for (const h of b.hooks ?? []) {
      if (h.exec) {
        out.push({ severity: "note", code: "EXEC_HOOK", bundle: b.bundle, hook: h.name, profile: id, message: `hook ${b.bundle}/${h.name} is an exec hook: it runs a command outside the sandbox (sandboxed: false)` });
      }
      // Upstream configs in seconds (Claude Code `timeout: 30`) copied into timeout_ms by hand.
      if (profile?.timeouts.config_unit === "s" && h.timeout_ms !== undefined && h.timeout_ms > 0 && h.timeout_ms < 100) {
        out.push({ severity: "note", code: "TIMEOUT_UNIT", bundle: b.bundle, hook: h.name, profile: id, message: `hook ${b.bundle}/${h.name} has timeout_ms ${h.timeout_ms}: ${id} configs count seconds, manifests count milliseconds — did you mean ${h.timeout_ms * 1000}?` });
      }
      const spec = profile === undefined ? undefined : (profile.specOf?.(h.event) ?? profile.events[h.event]);
      if (spec?.advisory === true) {
        out.push({ severity: "note", code: "HOOK_ON_ADVISORY_EVENT", bundle: b.bundle, hook: h.name, profile: id, event: h.event, message: `hook ${b.bundle}/${h.name} is on ${id} event ${h.event}, which is advisory: nothing it returns changes the agent's behaviour` });
      }
    }
  }
  return out;
}

/** Every catalogued profile id but vcp: a server listing all of them most likely runs without `profiles:`. */
export function catalogueIds(): string[] {
  return listProfiles().map((p) => p.id).filter((id) => id !== VCP);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The hooks of a stored manifest as doctor reads them (no verification: this is a report, not an install). */
export function manifestHooks(manifest: unknown): Array<{ name: string; event: string; enabled: boolean; exec: boolean; timeout_ms?: number }> {
  if (!isObject(manifest) || !Array.isArray(manifest.hooks)) return [];
  return manifest.hooks.filter(isObject).map((h) => ({
    name: typeof h.name === "string" ? h.name : "(unnamed)",
    event: typeof h.event === "string" ? h.event : typeof h.type === "string" ? h.type : "",
    enabled: h.enabled !== false,
    exec: h.exec !== undefined,
    ...(typeof h.timeout_ms === "number" ? { timeout_ms: h.timeout_ms } : {}),
  }));
}

/**
 * The view of a config and its data directory: enabled profiles from `profiles:` (all catalogued ones
 * when absent), installed bundles from `<data_dir>/bundles` as `serve` would load them.
 */
export async function localView(config: { source: string | null; data_dir: string; profiles?: Readonly<Record<string, Readonly<Record<string, unknown>>>> | undefined }): Promise<DeploymentView> {
  const explicit = config.profiles !== undefined;
  const profiles = explicit
    ? Object.entries(config.profiles!).map(([ref, { strict: _strict, session_ttl_s: _ttl, ...settings }]) => ({ id: getProfile(ref).id, settings }))
    : catalogueIds().map((id) => ({ id, settings: {} }));
  const stored = await createBundleStore(config.data_dir).loadInstalled();
  const bundles = stored.map(({ entry, artifact }) => {
    const manifest = isObject(artifact) ? artifact.manifest : undefined;
    const profile = isObject(manifest) && typeof manifest.profile === "string" ? manifest.profile : VCP;
    return { bundle: entry.bundle, profile: profileIdOf(profile), hooks: manifestHooks(manifest) };
  });
  return {
    source: config.source ?? "the config",
    profiles,
    explicitProfiles: explicit,
    bundles,
    async enabledHooks(profile, event) {
      return bundles.filter((b) => b.profile === profile).flatMap((b) => b.hooks).filter((h) => h.enabled && h.event === event).length;
    },
  };
}

/** The view of a running server, through a JSON GET of its API (the operator token is the caller's). */
export async function serverView(source: string, get: (path: string) => Promise<unknown>): Promise<DeploymentView> {
  const listed = (await get("/v1/profiles")) as { profiles?: Array<{ id?: unknown; settings?: unknown }> };
  const profiles = (listed.profiles ?? [])
    .filter((p): p is { id: string; settings?: unknown } => typeof p.id === "string" && p.id !== VCP)
    .map((p) => ({ id: p.id, settings: isObject(p.settings) ? p.settings : {} }));
  const status = (await get("/v1/status")) as { bundles?: Array<{ bundle?: unknown; profile?: unknown }>; hooks?: Array<{ hook?: unknown; bundle?: unknown; event?: unknown; enabled?: unknown; sandboxed?: unknown }> };
  // The server's status lists every hook, exec hooks (sandboxed: false) first: the notes need only those.
  const execHooks = (status.hooks ?? []).filter((h) => h.sandboxed === false && typeof h.bundle === "string" && typeof h.hook === "string");
  const bundles = (status.bundles ?? []).filter((b) => typeof b.bundle === "string").map((b) => ({
    bundle: b.bundle as string,
    profile: profileIdOf(typeof b.profile === "string" ? b.profile : undefined),
    hooks: execHooks.filter((h) => h.bundle === b.bundle).map((h) => ({ name: h.hook as string, event: typeof h.event === "string" ? h.event : "", enabled: h.enabled !== false, exec: true })),
  }));
  // A server does not say whether its config lists profiles: all of the catalogue enabled is the default.
  const all = catalogueIds();
  const explicit = !(profiles.length === all.length && all.every((id) => profiles.some((p) => p.id === id)));
  return {
    source,
    profiles,
    explicitProfiles: explicit,
    bundles,
    async enabledHooks(profile, event) {
      const plan = (await get(`/v1/hooks?profile=${encodeURIComponent(profile)}&event=${encodeURIComponent(event)}`)) as { hooks?: Array<{ enabled?: unknown; deduplicated_by?: unknown }> };
      return (plan.hooks ?? []).filter((h) => h.enabled !== false).length;
    },
  };
}
