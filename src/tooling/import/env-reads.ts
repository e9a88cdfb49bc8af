/**
 * What a migrated script reads from its environment that the command lane will not give it
 * (issue 26 item 3). Natively the agent runs a hook with the user's whole environment plus its own
 * hook variables; the lane gives a script `exec.env_allow` (PATH, HOME, LANG) and the agent's
 * documented hook variables (src/tooling/hook-env.ts), nothing else. A script that reads anything
 * more sees it unset — the migrated `audit-log.mjs` that exits 1 — so `import` names each such
 * variable, per script, in the report.
 *
 * A scan of the text, not a parse: it finds
 *   every language   process.env.X / process.env["X"], os.environ["X"], os.environ.get("X"),
 *                    (os.)getenv("X"), ENV["X"], ENV.fetch("X"), $ENV{X}, env::var("X"),
 *                    Deno.env.get("X"), Bun.env.X, os.Getenv("X")
 *   shell scripts    $X and ${X…} (a #!…sh script, or a shell-string hook) for UPPER_CASE names — the
 *                    convention for environment variables — that the script does not assign itself
 *                    (X=, read X, for X in, export/local/readonly X) and the shell does not set.
 * It can miss a name built at run time and name one read only in a comment: a warning, never a refusal.
 */
import { hookEnvNames } from "../hook-env.js";
import { sha256Hex, type ImportContext, type ImportResult } from "./common.js";

/** Scripts larger than this are not scanned (a compiled executable, a bundle): nothing to warn from. */
const MAX_SCAN_BYTES = 1024 * 1024;

/** Explicit environment reads; group 1 or 2 is the name. */
const API_READS = [
  /\bprocess\.env(?:\?\.|\.)([A-Za-z_][A-Za-z0-9_]*)/g,
  /\bprocess\.env\[\s*["'`]([A-Za-z_][A-Za-z0-9_]*)["'`]\s*\]/g,
  /\benviron(?:\.get\(|\[)\s*["']([A-Za-z_][A-Za-z0-9_]*)["']/g,
  /\b(?:getenv|Getenv|env::var|env::var_os|Deno\.env\.get)\(\s*["']([A-Za-z_][A-Za-z0-9_]*)["']/g,
  /\bENV(?:\[|\.fetch\(\s*)\s*["']([A-Za-z_][A-Za-z0-9_]*)["']/g,
  /\$ENV\{\s*["']?([A-Za-z_][A-Za-z0-9_]*)["']?\s*\}/g,
  /\bBun\.env\.([A-Za-z_][A-Za-z0-9_]*)/g,
];

/** `$X` / `${X…}` with X in UPPER_CASE (at least one letter). */
const SHELL_READ = /\$\{?([A-Z_][A-Z0-9_]*)(?![A-Za-z0-9_])/g;
/** Assignments and bindings of the script's own: X=…, read [-r] X Y, for X in, export/local/readonly/declare X. */
const SHELL_BINDINGS = [
  /(?:^|[\s;&|(])([A-Za-z_][A-Za-z0-9_]*)\+?=/gm,
  /\bread\s+(?:-[A-Za-z]*[dnNptu]\s+\S+\s+|-[A-Za-z]+\s+)*((?:[A-Za-z_][A-Za-z0-9_]*[ \t]*)+)/g,
  /\bfor\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\b/g,
  /\b(?:export|local|readonly|declare|typeset|unset)\s+(?:-[A-Za-z]+\s+)*((?:[A-Za-z_][A-Za-z0-9_]*[ \t]*)+)/g,
];
/** Variables a POSIX shell or bash sets itself. */
const SHELL_OWN = new Set(["IFS", "PWD", "OLDPWD", "PPID", "RANDOM", "LINENO", "SECONDS", "OPTARG", "OPTIND", "OPTERR", "REPLY", "PS1", "PS2", "PS3", "PS4", "UID", "EUID", "GROUPS", "SHLVL", "PIPESTATUS", "FUNCNAME", "HOSTNAME", "HOSTTYPE", "OSTYPE", "MACHTYPE", "COLUMNS", "LINES", "EPOCHSECONDS", "EPOCHREALTIME", "SRANDOM", "_"]);

/** A `#!` line naming a shell (sh, bash, dash, zsh, ksh, ash; directly or through env). */
const SHELL_SHEBANG = /^#!\s*\S*?(?:\/|\benv\s+(?:-\S+\s+)*)(?:ba|da|z|k|a)?sh\b/;

/**
 * The variables `text` reads from the environment, sorted; `shell` says the text is a shell script
 * (a shell-string hook); otherwise a `#!` shell line decides.
 *
 * @example
 * ```ts
 * envReads('#!/bin/sh\nlog="$AUDIT_DIR/x"; echo "$CLAUDE_PROJECT_DIR"\n'); // ["AUDIT_DIR", "CLAUDE_PROJECT_DIR"]
 * envReads("const dir = process.env.AUDIT_DIR;");                          // ["AUDIT_DIR"]
 * ```
 */
export function envReads(text: string, shell = false): string[] {
  const names = new Set<string>();
  for (const re of API_READS) for (const m of text.matchAll(re)) names.add(m[1]!);
  if (shell || SHELL_SHEBANG.test(text)) {
    const own = new Set<string>();
    for (const re of SHELL_BINDINGS) for (const m of text.matchAll(re)) for (const name of m[1]!.trim().split(/\s+/)) own.add(name);
    for (const m of text.matchAll(SHELL_READ)) {
      const name = m[1]!;
      if (/[A-Z]/.test(name) && !own.has(name) && !SHELL_OWN.has(name) && !name.startsWith("BASH")) names.add(name);
    }
  }
  return [...names].sort();
}

/**
 * Add a warning to each imported hook whose script (the pinned file, or the shell string) reads a
 * variable the lane will not provide: neither in the result's `exec.env_allow` nor one of the
 * profile's hook variables. A file that changed since it was pinned, is binary or larger than
 * MAX_SCAN_BYTES is not scanned.
 *
 * @example
 * ```ts
 * const result = importSettingsJson(text, "claude", undefined, ctx);
 * warnUnprovidedEnv(result, ctx); // result.hooks[i].warnings: "…/audit-log.sh reads $AUDIT_DIR, which …"
 * ```
 */
export function warnUnprovidedEnv(result: ImportResult, ctx: Pick<ImportContext, "readFile">): UnprovidedEnv[] {
  const found: UnprovidedEnv[] = [];
  const agent = hookEnvNames(result.profile);
  const provided = new Set([...result.envAllow, ...agent]);
  const lane = [...result.envAllow, ...agent].join(", ");
  for (const hook of result.hooks) {
    let text: string;
    let what: string;
    if (hook.exec.shell === true) {
      text = hook.exec.command;
      what = "the shell string";
    } else {
      const file = ctx.readFile(hook.exec.command);
      // Only the bytes that were pinned, and only text.
      if (file === undefined || file.bytes.length > MAX_SCAN_BYTES || sha256Hex(file.bytes) !== hook.exec.sha256 || file.bytes.includes(0)) continue;
      text = Buffer.from(file.bytes).toString("utf8");
      what = hook.exec.command;
    }
    for (const name of envReads(text, hook.exec.shell === true)) {
      if (provided.has(name)) continue;
      const warning = `${what} reads $${name}, which the command lane does not provide: there it is unset (the lane passes ${lane}); port the hook, or add ${name} to exec.env_allow to pass the server's own value`;
      hook.warnings.push(warning);
      found.push({ hook: hook.name, script: what, variable: name, warning });
    }
  }
  return found;
}

/** One variable a migrated script reads that the lane does not provide. */
export interface UnprovidedEnv {
  hook: string;
  /** The pinned file, or "the shell string". */
  script: string;
  variable: string;
  /** The warning line also added to the hook's report entry. */
  warning: string;
}
