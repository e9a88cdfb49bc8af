/**
 * Shared model of the importers (PROFILES §7): an agent's hook configuration becomes pinned exec hooks
 * (the command lane, §6), deployment settings, one policy stub per hook and a report of every
 * conversion. Importing is parsing: nothing here runs a command; the only file access is reading the
 * command files to pin their SHA-256 (through the `ReadFile` the caller passes, so tests and the CLI
 * decide what may be read). Writing is the CLI's job (src/cli/import.ts), inside `-o` only.
 */
import { createHash } from "node:crypto";
import { posix } from "node:path";
import { RE2JS } from "re2js";

/** Reads a file for hashing; returns undefined when it does not exist or is not a regular file. */
export type ReadFile = (absolutePath: string) => { bytes: Uint8Array; executable: boolean } | undefined;

export interface ImportContext {
  /** The configuration file (or directory) being imported, as given (for the report). */
  readonly source: string;
  /** Absolute project directory: what `$CLAUDE_PROJECT_DIR` / `$GEMINI_PROJECT_DIR` expand to. */
  readonly projectDir: string;
  /** Absolute home directory: what `~` and `$HOME` expand to. */
  readonly home: string;
  readonly readFile: ReadFile;
}

/** One exec hook of the generated `exec/policy.yaml`. */
export interface ImportedHook {
  name: string;
  event: string;
  matcher?: string;
  sequential?: boolean;
  priority?: number;
  timeout_ms?: number;
  fail_closed?: boolean;
  enabled?: boolean;
  /** repo-yaml hook fields. */
  match?: Record<string, unknown>;
  blocking?: boolean;
  exec: { command: string; sha256: string; args?: string[]; cwd?: string; shell?: boolean };
  /** The command exactly as the agent's config had it (stub comment, report). */
  original: string;
  /** Where in the source it was (`hooks.PreToolUse[0].hooks[1]`). */
  at: string;
  /** What was changed on the way, one line each. */
  conversions: string[];
  /** Things the user must look at (unpinned scripts, shell strings). */
  warnings: string[];
}

export interface Refusal {
  at: string;
  why: string;
}

export interface ImportResult {
  /** Target profile (bare name): gemini-cli, llxprt, claude-code, ai-memory, repo-yaml. */
  profile: string;
  format: string;
  hooks: ImportedHook[];
  refused: Refusal[];
  /** File-level notes (conversions that concern the whole file). */
  notes: string[];
  /** Whether any hook needs `exec.shell: true`. */
  needsShell: boolean;
  /** Variables the scripts read from the agent that the deployment should let through. */
  envAllow: string[];
}

export class ImportError extends Error {}

export const sha256Hex = (bytes: Uint8Array | string): string => createHash("sha256").update(bytes).digest("hex");

/** The manifest's bounds (src/model/hook.ts): priority 0–100, timeout 1–30 000 ms. */
export const MAX_TIMEOUT_MS = 30_000;

/** A unique manifest hook name (`[a-z0-9_-]{1,64}`) from free text. */
export function hookName(base: string, taken: Set<string>): string {
  let stem = base.toLowerCase().replace(/[^a-z0-9_]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 56) || "hook";
  if (!/^[a-z0-9]/.test(stem)) stem = `h-${stem}`.slice(0, 56);
  let name = stem;
  for (let i = 2; taken.has(name); i++) name = `${stem}-${i}`;
  taken.add(name);
  return name;
}

// ── commands ──────────────────────────────────────────────────────────────────────────────────────

const INTERPRETERS = new Set(["node", "python", "python3", "bash", "sh", "zsh", "deno", "bun", "ruby", "perl", "npx", "uv", "uvx"]);
/** Anything a plain argv split cannot honour: pipes, lists, redirections, substitutions, globs. */
const SHELL_SYNTAX = /[|&;<>()`*?[\]{}!]|\$\(|\$[A-Za-z_{]/;

/** Split a command line into words the way sh would for quotes and backslashes only; undefined if unbalanced. */
export function splitWords(text: string): string[] | undefined {
  const words: string[] = [];
  let cur = "";
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end === -1) return undefined;
      cur += text.slice(i + 1, end);
      i = end;
      inWord = true;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === "\\" && j + 1 < text.length && '"\\$`'.includes(text[j + 1]!)) j++;
        cur += text[j];
      }
      if (j >= text.length) return undefined;
      i = j;
      inWord = true;
    } else if (c === "\\" && i + 1 < text.length) {
      cur += text[++i];
      inWord = true;
    } else if (c === " " || c === "\t") {
      if (inWord) words.push(cur);
      cur = "";
      inWord = false;
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (inWord) words.push(cur);
  return words;
}

/** Expand the project-dir variables and `~` of a command string; each expansion is reported. */
export function expandVariables(command: string, projectVars: readonly string[], ctx: ImportContext, conversions: string[]): string {
  let out = command;
  for (const v of projectVars) {
    const re = new RegExp(`\\$\\{${v}\\}|\\$${v}(?![A-Za-z0-9_])`, "g");
    if (re.test(out)) {
      out = out.replace(re, ctx.projectDir);
      conversions.push(`$${v} expanded to ${ctx.projectDir} (the pin needs a fixed path; re-import for another project)`);
    }
  }
  const homeRe = /(^|[\s"'=])~(?=\/|$|\s)|\$\{HOME\}|\$HOME(?![A-Za-z0-9_])/g;
  if (homeRe.test(out)) {
    out = out.replace(homeRe, (m, lead: string | undefined) => (m.startsWith("$") ? ctx.home : `${lead ?? ""}${ctx.home}`));
    conversions.push(`~ / $HOME expanded to ${ctx.home}`);
  }
  return out;
}

/**
 * Resolve a command string to a pinned exec block: an absolute executable (or a script run through its
 * shebang) hashed from the file, or, when the text needs a shell, a shell string pinned by its text.
 * Throws ImportError naming the problem (the hook is then refused and reported).
 */
export function resolveCommand(original: string, projectVars: readonly string[], ctx: ImportContext, hook: Pick<ImportedHook, "conversions" | "warnings">): ImportedHook["exec"] {
  // SECURITY: control characters in a path or argument would forge report lines and YAML; refuse.
  if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(original)) throw new ImportError("the command contains control characters (a newline or NUL)");
  if (original.trim() === "") throw new ImportError("the command is empty");
  const expanded = expandVariables(original.trim(), projectVars, ctx, hook.conversions);
  const words = splitWords(expanded);
  const plain = words !== undefined && words.length > 0 && !SHELL_SYNTAX.test(expanded.replace(/'[^']*'/g, "''"));
  if (!plain) {
    hook.warnings.push("runs as a shell string (/bin/sh -c), pinned by its text only: needs exec.shell: true; scripts it calls are not pinned");
    return { command: expanded, sha256: sha256Hex(expanded), cwd: ctx.projectDir, shell: true };
  }
  const [first, ...args] = words as [string, ...string[]];
  let program = first;
  if (!program.startsWith("/")) {
    if (program.includes("/")) {
      program = posix.resolve(ctx.projectDir, program);
      hook.conversions.push(`relative command resolved against the project directory: ${program}`);
    } else if (INTERPRETERS.has(program) && args[0] !== undefined && !args[0].startsWith("-")) {
      const script = args[0].startsWith("/") ? args[0] : posix.resolve(ctx.projectDir, args[0]);
      const file = ctx.readFile(script);
      if (file === undefined) throw new ImportError(`the script ${script} does not exist (or is not a regular file); nothing to pin`);
      const bytes = file.bytes;
      if (file.executable && bytes[0] === 0x23 && bytes[1] === 0x21) {
        hook.conversions.push(`'${program} ${args[0]}' runs the script directly through its #! line, so the script itself is pinned`);
        return { command: script, sha256: sha256Hex(bytes), ...(args.length > 1 ? { args: args.slice(1) } : {}), cwd: ctx.projectDir };
      }
      throw new ImportError(`'${program} ${args[0]}': the script has no #! line or is not executable, so only the interpreter could be pinned; add a #! line and chmod +x, then import again`);
    } else {
      throw new ImportError(`'${program}' is found through PATH; the command lane pins an absolute path (write /usr/bin/${program} or the script's path)`);
    }
  }
  const file = ctx.readFile(program);
  if (file === undefined) throw new ImportError(`${program} does not exist (or is not a regular file); nothing to pin`);
  if (!file.executable) hook.warnings.push(`${program} is not executable (chmod +x) — it will fail to start`);
  // The agents run hooks in the project directory; so does the lane.
  return { command: program, sha256: sha256Hex(file.bytes), ...(args.length > 0 ? { args } : {}), cwd: ctx.projectDir };
}

// ── matchers ──────────────────────────────────────────────────────────────────────────────────────

/** Undefined when RE2 compiles the pattern, else why not. */
export function re2Problem(pattern: string): string | undefined {
  try {
    RE2JS.compile(pattern);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

export const isPlainWord = (s: string): boolean => /^[A-Za-z0-9_]+$/.test(s);
export const isAll = (m: unknown): boolean => m === undefined || m === null || m === "" || m === "*";

// ── timeouts ──────────────────────────────────────────────────────────────────────────────────────

export function capTimeout(ms: number, conversions: string[], what: string): number {
  if (ms > MAX_TIMEOUT_MS) {
    conversions.push(`${what} ${ms} ms capped at ${MAX_TIMEOUT_MS} ms (the manifest maximum)`);
    return MAX_TIMEOUT_MS;
  }
  return ms;
}
