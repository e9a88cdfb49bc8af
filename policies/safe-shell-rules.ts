/**
 * Rules shared by the three safe-shell example policies (gemini-safe-shell, llxprt-safe-shell,
 * claude-safe-shell): which shell commands are destructive, which have a safe variant, whether a path
 * stays inside the project, and which secrets to redact from tool output. Plain TypeScript with no
 * imports: it runs inside the sandbox isolate (no Node APIs there, so paths are normalized by hand).
 */

export type ShellVerdict =
  | { readonly kind: "allow" }
  | { readonly kind: "block"; readonly reason: string }
  | { readonly kind: "rewrite"; readonly command: string; readonly note: string };

/** Commands refused outright, each with the reason the agent is given. */
const BLOCKED: ReadonlyArray<readonly [RegExp, string]> = [
  [/:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/, "fork bomb"],
  [/\bmkfs(\.\w+)?\b/, "formats a filesystem (mkfs)"],
  [/\bdd\b[^|;&]*\bof=\/dev\//, "writes a raw device (dd of=/dev/…)"],
  [/>\s*\/dev\/(sd|nvme|hd|vd)\w*/, "writes a raw device"],
  [/\bshred\b/, "shreds files (shred)"],
  [/\bchmod\s+(-\w*R\w*\s+)?0?777\s+\/(\s|$)/, "makes / world-writable"],
  [/\bchmod\s+-\w*R\w*\s+0?777\b/, "recursive chmod 777"],
  [/\b(curl|wget)\b[^|;&]*\|\s*(sudo\s+)?(ba|z|da)?sh\b/, "pipes a download into a shell"],
  [/(^|[;&|]\s*)sudo\b/, "runs as root (sudo)"],
  [/\bgit\s+reset\s+--hard\b/, "discards uncommitted work (git reset --hard)"],
];

/** The segments of a command line (`a && b; c | d` → four commands). */
function segments(command: string): string[] {
  return command.split(/&&|\|\||;|\n/).map((s) => s.trim()).filter((s) => s !== "");
}

/** Resolve `path` against `cwd` without Node: collapse `.`, `..` and repeated slashes. */
export function resolvePath(path: string, cwd: string): string {
  const home = path === "~" || path.startsWith("~/") || path.startsWith("$HOME");
  const absolute = home ? `/__home__/${path.replace(/^(~|\$HOME)\/?/, "")}` : path.startsWith("/") ? path : `${cwd}/${path}`;
  const out: string[] = [];
  for (const part of absolute.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") out.pop();
    else out.push(part);
  }
  return `/${out.join("/")}`;
}

/** True when `path` (absolute or relative to `cwd`) stays inside the project directory `cwd`. */
export function isInsideProject(path: string, cwd: string | undefined): boolean {
  if (cwd === undefined || cwd === "" || !cwd.startsWith("/")) return false; // no project root known: refuse
  const root = resolvePath(cwd, "/");
  const target = resolvePath(path, root);
  return target === root || target.startsWith(`${root}/`);
}

/** `rm` with both recursive and force flags, and its targets. */
function recursiveForceRm(segment: string): string[] | undefined {
  const words = segment.split(/\s+/);
  const at = words.indexOf("rm");
  if (at === -1) return undefined;
  let recursive = false;
  let force = false;
  const targets: string[] = [];
  for (const word of words.slice(at + 1)) {
    if (word === "--recursive") recursive = true;
    else if (word === "--force") force = true;
    else if (/^-[a-zA-Z]+$/.test(word)) {
      if (/[rR]/.test(word)) recursive = true;
      if (word.includes("f")) force = true;
    } else targets.push(word.replace(/^['"]|['"]$/g, ""));
  }
  return recursive && force ? targets : undefined;
}

/**
 * Judge one shell command line run in `cwd`.
 *
 * @example
 * checkShell("rm -rf /", "/p")                  // { kind: "block", reason: "rm -rf outside the project: /" }
 * checkShell("git push --force origin main", "/p") // { kind: "rewrite", command: "git push --force-with-lease origin main", … }
 */
export function checkShell(command: string, cwd: string | undefined): ShellVerdict {
  for (const [pattern, why] of BLOCKED) if (pattern.test(command)) return { kind: "block", reason: `blocked: ${why}` };
  for (const segment of segments(command)) {
    const targets = recursiveForceRm(segment);
    if (targets === undefined) continue;
    const outside = targets.filter((t) => t === "*" || t.includes("$") || !isInsideProject(t, cwd));
    if (outside.length > 0 || targets.length === 0) return { kind: "block", reason: `blocked: rm -rf of a wildcard or a path outside the project: ${outside.join(" ") || "(no target)"}` };
  }
  // Safe variants: same intent, without the footgun.
  const forcePush = /\bgit\s+push\b(.*?)\s(--force|-f)(?=\s|$)/;
  if (forcePush.test(command) && !command.includes("--force-with-lease")) {
    return { kind: "rewrite", command: command.replace(forcePush, (_m, mid: string) => `git push${mid} --force-with-lease`), note: "git push --force rewritten to --force-with-lease" };
  }
  const clean = /\bgit\s+clean\s+(-\w*)f(\w*)/;
  if (clean.test(command)) {
    return { kind: "rewrite", command: command.replace(clean, (_m, a: string, b: string) => `git clean ${a}n${b}`), note: "git clean -f rewritten to a dry run (-n)" };
  }
  return { kind: "allow" };
}

/** Secret patterns redacted from tool output, by kind. Global regexes, used with `replace` only. */
const SECRETS: ReadonlyArray<readonly [string, RegExp]> = [
  ["private_key", /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g],
  ["aws_access_key", /\bAKIA[0-9A-Z]{16}\b/g],
  ["github_token", /\bgh[pousr]_[A-Za-z0-9]{36,}\b/g],
  ["api_key", /\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}/g],
  ["slack_token", /\bxox[abprs]-[A-Za-z0-9-]{10,}/g],
];
const ASSIGNMENT = /\b(password|passwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token)(\s*[=:]\s*)(['"]?)([^\s'"]{8,})\3/gi;

export interface Redaction {
  readonly redacted: string;
  /** Kind → count, only kinds that occurred. */
  readonly found: Readonly<Record<string, number>>;
  readonly total: number;
}

/** Replace every secret in `text` by `[REDACTED:<kind>]`. */
export function redactSecrets(text: string): Redaction {
  const found: Record<string, number> = {};
  let out = text;
  for (const [kind, pattern] of SECRETS) {
    out = out.replace(pattern, () => {
      found[kind] = (found[kind] ?? 0) + 1;
      return `[REDACTED:${kind}]`;
    });
  }
  out = out.replace(ASSIGNMENT, (match, name: string, sep: string, quote: string, value: string) => {
    if (value.startsWith("[REDACTED:")) return match;
    found["assigned_secret"] = (found["assigned_secret"] ?? 0) + 1;
    return `${name}${sep}${quote}[REDACTED:assigned_secret]${quote}`;
  });
  const total = Object.values(found).reduce((a, b) => a + b, 0);
  return { redacted: out, found, total };
}

/** Text of a tool result in whatever shape the agent sends it. */
export function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return "";
  return JSON.stringify(value);
}

/** "2 aws_access_key, 1 api_key" */
export function describeFound(found: Readonly<Record<string, number>>): string {
  return Object.entries(found).map(([kind, n]) => `${n} ${kind}`).join(", ");
}
