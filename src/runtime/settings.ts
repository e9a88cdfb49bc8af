/*
 * The options of createRuntime that are checked before anything starts, so a bad keyring, limit or
 * profile module fails fast, with nothing open yet but the pid locks.
 */
import { VcpError } from "../errors.js";
import { DEFAULT_MAX_CODE_BYTES } from "../bundle/artifact.js";
import { loadKeyring, type Keyring } from "../bundle/keys.js";
import { DEFAULTS } from "../config/defaults.js";
import { resolveJsonBounds, type JsonBounds } from "../model/json-bounds.js";
import { registerProfile } from "../profiles/index.js";
import type { EventProfile } from "../profiles/types.js";
import { resolveEnabledProfiles, type EnabledProfile } from "../profiles/enabled.js";
import type { RuntimeOptions } from "./types.js";
import type { ExecDeployment } from "../fire/types.js";

export interface RuntimeSettings {
  keyring: Keyring | undefined;
  /** Default: `true` when a keyring is configured (DESIGN §3.3). */
  requireSignatures: boolean;
  maxBundleBytes: number;
  maxSessionsPerOwner: number;
  inputBounds: JsonBounds;
  enabledProfiles: ReadonlyMap<string, EnabledProfile>;
  /** The command lane (PROFILES §6), off unless `exec.enabled`. */
  exec: ExecDeployment;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The command lane's settings, checked like vcp.yaml's `exec` (config/config.ts) for library callers. */
function resolveExec(exec: RuntimeOptions["exec"]): ExecDeployment {
  const envAllow = exec?.env_allow ?? ["PATH", "HOME", "LANG"];
  const bad = envAllow.find((name) => typeof name !== "string" || !ENV_NAME.test(name));
  if (bad !== undefined) throw new VcpError("INVALID_CONFIG", `exec.env_allow: '${String(bad)}' must be an environment variable name`, { field: "exec.env_allow" });
  const maxOutput = exec?.max_output_bytes ?? 1_048_576;
  if (!Number.isSafeInteger(maxOutput) || maxOutput < 1024) throw new VcpError("INVALID_CONFIG", "exec.max_output_bytes must be an integer of at least 1024", { field: "exec.max_output_bytes" });
  if (exec?.wrapper !== undefined && (exec.wrapper.length === 0 || exec.wrapper.some((w) => typeof w !== "string" || w === ""))) {
    throw new VcpError("INVALID_CONFIG", "exec.wrapper must be a non-empty argv list", { field: "exec.wrapper" });
  }
  return Object.freeze({
    enabled: exec?.enabled === true,
    shell: exec?.shell === true,
    env_allow: Object.freeze([...envAllow]),
    ...(exec?.wrapper !== undefined ? { wrapper: Object.freeze([...exec.wrapper]) } : {}),
    max_output_bytes: maxOutput,
  });
}

/**
 * Resolve and check the settings; registers `profileModules` in this process's profile catalogue.
 *
 * @example
 * ```ts
 * const { inputBounds, requireSignatures } = await resolveSettings({ keyring: "keys.yaml" });
 * ```
 */
export async function resolveSettings(options: RuntimeOptions): Promise<RuntimeSettings> {
  const keyring = options.keyring === undefined ? undefined : await loadKeyring(options.keyring);
  const maxBundleBytes = options.maxBundleBytes ?? DEFAULT_MAX_CODE_BYTES;
  if (!Number.isSafeInteger(maxBundleBytes) || maxBundleBytes < 1) {
    throw new VcpError("INVALID_CONFIG", "maxBundleBytes must be a positive integer", { field: "maxBundleBytes" });
  }
  const maxSessionsPerOwner = options.maxSessionsPerOwner ?? DEFAULTS.limits.sessions_per_client;
  if (!Number.isSafeInteger(maxSessionsPerOwner) || maxSessionsPerOwner < 1) {
    throw new VcpError("INVALID_CONFIG", "maxSessionsPerOwner must be a positive integer", { field: "maxSessionsPerOwner" });
  }
  const inputBounds = resolveJsonBounds(options.inputLimits);
  for (const url of options.profileModules ?? []) {
    const mod = (await import(url)) as { default?: EventProfile };
    if (mod.default === undefined) throw new VcpError("INVALID_CONFIG", `profileModules: ${url} has no default export (an EventProfile)`, { field: "profileModules" });
    registerProfile(mod.default);
  }
  return {
    keyring,
    requireSignatures: options.requireSignatures ?? keyring !== undefined,
    maxBundleBytes,
    maxSessionsPerOwner,
    inputBounds,
    enabledProfiles: resolveEnabledProfiles(options.profiles),
    exec: resolveExec(options.exec),
  };
}

/**
 * Throw what createRuntime would throw for these options' settings (keyring, limits, profiles, the
 * command lane) — the same checks, run without starting anything (`vcp-hooks config check`, and
 * `serve` before it opens its data directory). Registers `profileModules`, as createRuntime does.
 *
 * @example
 * ```ts
 * await checkRuntimeOptions({ keyring: { keys: [{ key_id: "ops", public_key_file: "ops.pub.pem", max_trust: "deployment" }] } });
 * ```
 */
export async function checkRuntimeOptions(options: RuntimeOptions): Promise<void> {
  await resolveSettings(options);
}
