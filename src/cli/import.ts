/**
 * `vcp-hooks import <format> <config> -o <out>` (PROFILES §7): an agent's hook configuration becomes
 * pinned exec hooks, deployment settings, policy stubs and a report. Pure parsing plus hashing the
 * command files: nothing is executed, and nothing is written outside `-o` (which must be new or empty).
 */
import { constants, lstatSync, mkdirSync, openSync, closeSync, fstatSync, readdirSync, readSync, writeFileSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { VcpError } from "../index.js";
import { INPUT_FILE_BYTES, readInputFileSync } from "../tooling.js";
import { importAiMemory } from "../tooling/import/ai-memory.js";
import { ImportError, type ImportContext, type ImportResult, type ReadFile } from "../tooling/import/common.js";
import { warnUnprovidedEnv } from "../tooling/import/env-reads.js";
import { renderImport } from "../tooling/import/render.js";
import { importRepoYaml } from "../tooling/import/repo-yaml.js";
import { importSettingsJson, type SettingsTarget } from "../tooling/import/settings-json.js";
import { CheckFailed, EXIT_FAILED, EXIT_OK, parseCommand, printJson, requireOption, stringOption, UsageError, type Command } from "./common.js";

const FORMATS = ["claude", "gemini", "llxprt", "codex", "vscode", "cursor", "openhands", "goose", "ai-memory", "repo-yaml"] as const;
const MAX_HASHED_BYTES = 256 * 1024 * 1024;

const USAGE = `usage: vcp-hooks import <format> <config> -o <out> [options]

Convert an agent's hook configuration into vcp-hooks files. Formats:
  claude     .claude/settings.json (or ~/.claude/settings.json)
  gemini     .gemini/settings.json
  llxprt     .llxprt/settings.json
  codex      .codex/hooks.json or .codex/config.toml (its [hooks] tables)
  vscode     a VS Code hook file (.github/hooks/*.json)
  cursor     .cursor/hooks.json (or ~/.cursor/hooks.json)
  openhands  .openhands/hooks.json
  goose      a goose plugin's hooks/hooks.json
  ai-memory  hooks.toml
  repo-yaml  a .system/hooks/ directory

Writes into <out> (must not exist, or be empty):
  exec/policy.yaml   pinned exec hooks (SHA-256 of each command file), unsigned until 'vcp-hooks sign'
  profile.yaml       deployment settings to merge into vcp.yaml
  stubs/<hook>/      a typed policy stub per hook (original command in a comment) and a test case
  report.md          every conversion, and everything refused

Options:
  -o, --out <dir>        output directory (required)
  --to <profile>         claude only: import for gemini-cli or llxprt (events, tools, matchers converted)
  --project-dir <dir>    what $CLAUDE_PROJECT_DIR / $GEMINI_PROJECT_DIR expand to (default: the
                         directory holding .claude/.gemini/.llxprt/.codex, or the repository of .system/hooks)
  --bundle <name>        bundle name prefix (default: imported-<format>)
  --json                 print the result as JSON
Nothing is executed. Exit: 0 all converted, 1 something refused (see report.md), 2 usage error.`;

/** Read a command file for hashing, following symlinks; never more than MAX_HASHED_BYTES. */
const readForHash: ReadFile = (path) => {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    // SECURITY: only regular files are read (a FIFO or device could block or never end).
    if (!st.isFile() || st.size > MAX_HASHED_BYTES) return undefined;
    const bytes = Buffer.alloc(st.size);
    let off = 0;
    while (off < st.size) {
      const n = readSync(fd, bytes, off, st.size - off, off);
      if (n === 0) break;
      off += n;
    }
    return { bytes: bytes.subarray(0, off), executable: (st.mode & 0o111) !== 0 };
  } finally {
    closeSync(fd);
  }
};

/** An agent's config file: a regular file within INPUT_FILE_BYTES.config, else INPUT_FILE_REFUSED naming it. */
function readConfig(path: string): string {
  try {
    return readInputFileSync(path, INPUT_FILE_BYTES.config, "the hook configuration").toString("utf8");
  } catch (err) {
    if (err instanceof VcpError) throw err;
    throw new CheckFailed(`${path}: ${(err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (err as Error).message}`, "IMPORT_FAILED");
  }
}

function defaultProjectDir(format: string, source: string): string {
  const abs = resolve(source);
  const parent = dirname(abs);
  if (format === "repo-yaml") {
    // <repo>/.system/hooks → <repo>
    return basename(abs) === "hooks" && basename(parent) === ".system" ? dirname(parent) : abs;
  }
  // <plugin>/hooks/hooks.json (goose) → <plugin>, what ${PLUGIN_ROOT} names
  if (format === "goose" && basename(parent) === "hooks") return dirname(parent);
  // <repo>/.github/hooks/<file>.json (VS Code) → <repo>
  if (basename(parent) === "hooks" && basename(dirname(parent)) === ".github") return dirname(dirname(parent));
  return [".claude", ".gemini", ".llxprt", ".codex", ".cursor", ".openhands"].includes(basename(parent)) ? dirname(parent) : parent;
}

/** Refuse an output directory that exists and is not empty: nothing already there is changed. */
function prepareOut(out: string): string {
  try {
    const st = lstatSync(out);
    // SECURITY: a symlinked -o could point anywhere; the directory must be a real one.
    if (!st.isDirectory()) throw new CheckFailed(`${out} exists and is not a directory`, "IMPORT_FAILED");
    if (readdirSync(out).length > 0) throw new CheckFailed(`${out} is not empty; import writes only into a new or empty directory`, "IMPORT_FAILED");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    mkdirSync(out, { recursive: true, mode: 0o755 });
  }
  return realpathSync(out);
}

function writeInside(root: string, files: Map<string, string>): string[] {
  const written: string[] = [];
  for (const [rel, text] of files) {
    const target = resolve(root, rel);
    // SECURITY: every path is generated from sanitized names; this re-checks that none leaves -o.
    if (relative(root, target).startsWith("..") || !target.startsWith(root + sep)) throw new CheckFailed(`refusing to write ${rel}: outside ${root}`, "IMPORT_FAILED");
    mkdirSync(dirname(target), { recursive: true });
    // 'wx': never follows or replaces an existing entry.
    writeFileSync(target, text, { flag: "wx", mode: rel.endsWith(".ts") || rel.endsWith(".md") || rel.endsWith(".yaml") ? 0o644 : 0o600 });
    written.push(rel);
  }
  return written;
}

export const importCommand: Command = {
  name: "import",
  summary: "import claude|gemini|llxprt|codex|vscode|cursor|openhands|goose|ai-memory|repo-yaml <config> -o <out>: agent hooks → pinned exec bundle, stubs, report",
  usage: USAGE,
  async run(args, io) {
    const { values, positionals, help } = parseCommand(
      "import",
      args,
      { out: { type: "string", short: "o" }, to: { type: "string" }, "project-dir": { type: "string" }, bundle: { type: "string" } },
      { min: 2, max: 2, names: "<format> <config>" },
    );
    if (help) {
      io.out(USAGE);
      return EXIT_OK;
    }
    const [format, source] = positionals as [string, string];
    if (!(FORMATS as readonly string[]).includes(format)) throw new UsageError(`import: format must be one of ${FORMATS.join(", ")}, not '${format}'`);
    const out = requireOption("import", values, "out");
    const to = stringOption("import", values, "to");
    if (to !== undefined && (format !== "claude" || !["claude-code", "gemini-cli", "llxprt"].includes(to))) {
      throw new UsageError("import: --to applies to claude only: claude-code, gemini-cli or llxprt");
    }
    const bundle = stringOption("import", values, "bundle") ?? `imported-${format}`;
    if (!/^[a-z0-9_-]{1,40}$/.test(bundle)) throw new UsageError("import: --bundle must match [a-z0-9_-]{1,40}");
    const projectDir = resolve(stringOption("import", values, "project-dir") ?? defaultProjectDir(format, source));
    const ctx: ImportContext = { source, projectDir, home: homedir(), readFile: readForHash };

    let result: ImportResult;
    try {
      if (format === "ai-memory") result = importAiMemory(readConfig(source), ctx);
      else if (format === "repo-yaml") {
        let names: string[];
        try {
          names = readdirSync(source).filter((n) => /\.ya?ml$/.test(n));
        } catch (err) {
          throw new CheckFailed(`${source}: not a readable directory (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, "IMPORT_FAILED");
        }
        result = importRepoYaml(names.map((name) => ({ name, text: readConfig(join(source, name)) })), ctx);
      } else result = importSettingsJson(readConfig(source), format as "claude" | "gemini" | "llxprt" | "codex" | "vscode" | "cursor" | "openhands" | "goose", to as SettingsTarget | undefined, ctx);
    } catch (err) {
      if (err instanceof ImportError) throw new CheckFailed(err.message, "IMPORT_FAILED");
      throw err;
    }
    // What the scripts read from the environment that the lane will not give them (issue 26).
    const unprovided = warnUnprovidedEnv(result, ctx);
    const root = prepareOut(resolve(out));
    const written = writeInside(root, renderImport(result, bundle));
    if (io.json) {
      printJson(io, {
        profile: result.profile, out: root, files: written,
        hooks: result.hooks.map((h) => ({ name: h.name, event: h.event, command: h.exec.command, sha256: h.exec.sha256, shell: h.exec.shell === true })),
        refused: result.refused,
        env_unprovided: unprovided.map((u) => ({ hook: u.hook, script: u.script, variable: u.variable })),
      });
    } else {
      io.out(`${result.hooks.length} hook(s) imported for profile ${result.profile} into ${root}${result.refused.length > 0 ? `; ${result.refused.length} refused` : ""}`);
      for (const r of result.refused) io.out(`  refused ${r.at}: ${r.why}`);
      for (const u of unprovided) io.out(`  warning ${u.hook}: ${u.warning}`);
      io.out(`see ${join(root, "report.md")}; nothing was executed`);
    }
    return result.refused.length > 0 ? EXIT_FAILED : EXIT_OK;
  },
};
