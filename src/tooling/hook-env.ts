/**
 * The environment an agent gives its command hooks, carried to the command lane (issue 26 item 3).
 * A migrated hook script reads `$CLAUDE_PROJECT_DIR` as it did natively; the lane runs it on the
 * server, so the adapter that the agent runs (`vcp-hooks hook`, or the sh adapter) reads the documented
 * variables from its own environment and sends them in one request header; the server passes exactly
 * those to the script, next to `exec.env_allow` (never its own environment):
 *
 *   agent ─ env: CLAUDE_PROJECT_DIR=/p … ─► adapter ─ x-vcp-hook-env: CLAUDE_PROJECT_DIR=/p ─► route
 *     (decodeHookEnv: bounds, encoding) ─► runtime.fireProfile({ env }) (checkHookEnv: the profile's
 *     names, bounds again) ─► the lane's child env: env_allow (PATH, HOME, LANG) + these + VCP_EXEC_RUN
 *
 * One table keyed by profile id: a new profile adds its row. Each row lists what that host documents
 * for hooks (read from the pinned CLIs and their hooks references):
 *
 *   claude-code  CLAUDE_PROJECT_DIR; CLAUDE_PLUGIN_ROOT, CLAUDE_PLUGIN_DATA (plugin hooks);
 *                CLAUDE_CODE_REMOTE ("true" in remote sessions). Not CLAUDE_ENV_FILE: it names a file on
 *                the agent's machine for the hook to write; a value chosen by the client would direct a
 *                write on the server's.
 *   gemini-cli   GEMINI_PROJECT_DIR, GEMINI_PLANS_DIR, GEMINI_SESSION_ID, GEMINI_CWD, CLAUDE_PROJECT_DIR (alias)
 *   llxprt       LLXPRT_PROJECT_DIR; GEMINI_PROJECT_DIR and CLAUDE_PROJECT_DIR (the fork's aliases)
 *   codex        PLUGIN_ROOT, PLUGIN_DATA and their CLAUDE_PLUGIN_* aliases (plugin hooks)
 *   copilot      COPILOT_PROJECT_DIR, CLAUDE_PROJECT_DIR (its alias): what the real CLI 1.0.102 sets for
 *                every hook (no reference lists them yet). Not COPILOT_HOOK_DIR: a directory on the agent's machine.
 *
 * SECURITY: values come from the client, like the event on stdin: no name a loader or shell interprets
 * (PATH, LD_*, BASH_ENV, …) is ever in a row, every bound applies before anything is decoded, and the
 * runtime checks the names against the table again, whoever calls it.
 *
 * Wire form (one header, also written by the POSIX sh adapter without any tool but `od`):
 *   `NAME=VALUE&NAME=VALUE`, each VALUE UTF-8 percent-encoded (RFC 3986 `%XX`; `A-Za-z0-9-._~/` may
 *   stay as they are). At most HOOK_ENV_LIMITS: header bytes, variables, bytes of each decoded value.
 *
 * No imports: the adapter's cold start loads this module.
 */

/** The request header carrying the agent's hook environment. */
export const HOOK_ENV_HEADER = "x-vcp-hook-env";

/** Bounds of the carried environment; the adapter and the server check the same ones. */
export const HOOK_ENV_LIMITS = Object.freeze({
  /** The header's value, encoded (under Node's 16 KiB for all of a request's headers). */
  headerBytes: 8192,
  variables: 16,
  /** One decoded value (PATH_MAX). */
  valueBytes: 4096,
});

/** Per profile id: the variables the host documents for its command hooks. */
export const HOOK_ENV: Readonly<Record<string, readonly string[]>> = Object.freeze({
  "claude-code": Object.freeze(["CLAUDE_PROJECT_DIR", "CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA", "CLAUDE_CODE_REMOTE"]),
  "gemini-cli": Object.freeze(["GEMINI_PROJECT_DIR", "GEMINI_PLANS_DIR", "GEMINI_SESSION_ID", "GEMINI_CWD", "CLAUDE_PROJECT_DIR"]),
  llxprt: Object.freeze(["LLXPRT_PROJECT_DIR", "GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"]),
  codex: Object.freeze(["PLUGIN_ROOT", "PLUGIN_DATA", "CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA"]),
  copilot: Object.freeze(["COPILOT_PROJECT_DIR", "CLAUDE_PROJECT_DIR"]),
});

/**
 * The variables of `profile`'s hooks that the lane passes on (none for a profile without a row).
 *
 * @example
 * ```ts
 * hookEnvNames("llxprt"); // ["LLXPRT_PROJECT_DIR", "GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"]
 * ```
 */
export function hookEnvNames(profile: string): readonly string[] {
  return Object.hasOwn(HOOK_ENV, profile) ? HOOK_ENV[profile]! : [];
}

/** Characters a value may carry unencoded (the sh adapter's `case` pattern allows exactly these). */
const PLAIN = /^[A-Za-z0-9\-._~/]*$/;
const ENCODED_VALUE = /^(?:[A-Za-z0-9\-._~/!*'()]|%[0-9A-Fa-f]{2})*$/;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The header value carrying the allow-listed variables of `profile` that are set in `env`; undefined
 * when none is set. Throws an Error naming the variable or bound when the set ones do not fit.
 *
 * @example
 * ```ts
 * encodeHookEnv("claude-code", { CLAUDE_PROJECT_DIR: "/home/me/p", SECRET: "x" }); // "CLAUDE_PROJECT_DIR=/home/me/p"
 * ```
 */
export function encodeHookEnv(profile: string, env: Readonly<Record<string, string | undefined>>): string | undefined {
  const parts: string[] = [];
  for (const name of hookEnvNames(profile)) {
    const value = Object.hasOwn(env, name) ? env[name] : undefined;
    if (typeof value !== "string") continue;
    const problem = valueProblem(name, value);
    if (problem !== undefined) throw new Error(problem);
    parts.push(`${name}=${PLAIN.test(value) ? value : encodeURIComponent(value)}`);
  }
  if (parts.length === 0) return undefined;
  const header = parts.join("&");
  if (header.length > HOOK_ENV_LIMITS.headerBytes) throw new Error(`the agent's hook environment is ${header.length} bytes encoded, more than ${HOOK_ENV_LIMITS.headerBytes}`);
  return header;
}

function valueProblem(name: string, value: string): string | undefined {
  const bytes = Buffer.byteLength(value, "utf8");
  if (bytes > HOOK_ENV_LIMITS.valueBytes) return `${name} is ${bytes} bytes, more than ${HOOK_ENV_LIMITS.valueBytes}`;
  if (value.includes("\u0000")) return `${name} holds a NUL character`;
  // A lone surrogate has no UTF-8 form: the server could not pass it on as it was.
  if (!value.isWellFormed()) return `${name} is not valid Unicode`;
  return undefined;
}

/**
 * The variables a request's header carries, every bound checked (the header's length first, before
 * anything is split or decoded); or the problem, naming the variable. The names are checked against a
 * profile's row by {@link checkHookEnv} (the runtime, which knows the profile the event resolves to).
 *
 * @example
 * ```ts
 * decodeHookEnv("CLAUDE_PROJECT_DIR=%2Fp"); // { env: { CLAUDE_PROJECT_DIR: "/p" } }
 * decodeHookEnv("A=%zz");                   // { problem: "A: the value is not percent-encoded (RFC 3986)" }
 * ```
 */
export function decodeHookEnv(header: string): { env: Record<string, string>; problem?: undefined } | { problem: string; env?: undefined } {
  // SECURITY: the bound applies before any split or decode.
  if (header.length > HOOK_ENV_LIMITS.headerBytes) return { problem: `the header is ${header.length} bytes, more than ${HOOK_ENV_LIMITS.headerBytes}` };
  const env: Record<string, string> = Object.create(null) as Record<string, string>;
  if (header === "") return { env };
  const entries = header.split("&");
  if (entries.length > HOOK_ENV_LIMITS.variables) return { problem: `${entries.length} variables, more than ${HOOK_ENV_LIMITS.variables}` };
  for (const entry of entries) {
    const eq = entry.indexOf("=");
    const name = eq < 0 ? entry : entry.slice(0, eq);
    if (eq < 0 || !NAME.test(name)) return { problem: `'${shown(entry)}' is not NAME=VALUE` };
    const raw = entry.slice(eq + 1);
    if (!ENCODED_VALUE.test(raw)) return { problem: `${name}: the value is not percent-encoded (RFC 3986)` };
    let value: string;
    try {
      value = decodeURIComponent(raw);
    } catch {
      return { problem: `${name}: the value is not percent-encoded UTF-8` };
    }
    if (Object.hasOwn(env, name)) return { problem: `${name} is given twice` };
    const problem = valueProblem(name, value);
    if (problem !== undefined) return { problem };
    env[name] = value;
  }
  return { env };
}

/**
 * The problem of an environment given to the runtime directly (`runtime.fireProfile({ env })`), or
 * undefined: the profile's names only, and the same bounds as the header's.
 *
 * @example
 * ```ts
 * checkHookEnv("claude-code", { CLAUDE_PROJECT_DIR: "/p" }); // undefined
 * checkHookEnv("claude-code", { PATH: "/tmp" });            // "PATH is not a claude-code hook variable (allowed: …)"
 * ```
 */
export function checkHookEnv(profile: string, env: unknown): string | undefined {
  if (typeof env !== "object" || env === null || Array.isArray(env)) return "must be an object of variable names to strings";
  const entries = Object.entries(env);
  if (entries.length > HOOK_ENV_LIMITS.variables) return `${entries.length} variables, more than ${HOOK_ENV_LIMITS.variables}`;
  const seen: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [name, value] of entries) {
    if (typeof value !== "string") return `${shown(name)}: the value must be a string`;
    const problem = checkVariable(profile, name, value, seen);
    if (problem !== undefined) return problem;
    seen[name] = value;
  }
  return undefined;
}

function checkVariable(profile: string, name: string, value: string, seen: Readonly<Record<string, string>>): string | undefined {
  if (!NAME.test(name)) return `'${shown(name)}' is not a variable name`;
  const allowed = hookEnvNames(profile);
  // SECURITY: only the host's documented names; never PATH, LD_PRELOAD or anything the server holds.
  if (!allowed.includes(name)) {
    return `${shown(name)} is not a ${profile} hook variable (${allowed.length > 0 ? `allowed: ${allowed.join(", ")}` : "this profile passes none"})`;
  }
  if (Object.hasOwn(seen, name)) return `${name} is given twice`;
  return valueProblem(name, value);
}

const shown = (text: string) => (text.length > 64 ? `${text.slice(0, 64)}…` : text).replace(/[^\x20-\x7e]/g, "?");
