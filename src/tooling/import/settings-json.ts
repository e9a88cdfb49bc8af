/**
 * Importers for the `settings.json` family: Claude Code (`.claude/settings.json`), Gemini CLI
 * (`.gemini/settings.json`) and LLxprt Code (`.llxprt/settings.json`). All three nest
 * `hooks.<Event>[] = { matcher?, sequential?, hooks: [{ type: "command", command, timeout?, name? }] }`;
 * they differ in units (Claude: seconds, Gemini/LLxprt: ms), matcher rules (Claude: a plain word is an
 * exact match; Gemini: an unanchored regex search) and event and tool names. Codex nests its hooks the
 * same way, in `.codex/hooks.json` or as `[[hooks.<Event>]]` tables of `.codex/config.toml` (seconds;
 * a plain name matches exactly, any other matcher is a full-match regex; `[hooks.state]` is Codex's own
 * trust record, not an event). VS Code's hook files (`.github/hooks/*.json`) list the hooks of an event
 * directly (`hooks.<Event>[] = { type, command, linux?, timeout? }`, seconds), or in Claude's matcher groups.
 * Cursor's (`.cursor/hooks.json`, `version: 1`) too: `{ command, type?, timeout?, matcher?, failClosed? }`,
 * a missing type meaning a command, `failClosed: true` becoming `fail_closed: true`. GitHub Copilot's
 * (`.github/hooks/*.json`, `version: 1`, camelCase events) list hooks directly too:
 * `{ type: "command", bash, powershell?, timeoutSec?, cwd?, env? }`; the lane runs `bash` (it is Linux).
 */
import { parse as parseToml } from "smol-toml";
import { CLAUDE_EVENTS as CLAUDE_PROFILE_EVENTS } from "../../profiles/claude-code/events.js";
import { CODEX_EVENTS } from "../../profiles/codex/events.js";
import { VSCODE_EVENTS } from "../../profiles/vscode/index.js";
import { CURSOR_EVENTS } from "../../profiles/cursor/index.js";
import { OPENHANDS_EVENTS } from "../../profiles/openhands/index.js";
import { GOOSE_EVENTS } from "../../profiles/goose/index.js";
import { COPILOT_EVENTS } from "../../profiles/copilot/index.js";
import {
  capTimeout, hookName, ImportError, isAll, isPlainWord, re2Problem, resolveCommand,
  type ImportContext, type ImportedHook, type ImportResult,
} from "./common.js";

export const CLAUDE_TO_GEMINI_EVENT: Readonly<Record<string, string>> = {
  PreToolUse: "BeforeTool",
  PostToolUse: "AfterTool",
  UserPromptSubmit: "BeforeAgent",
  Stop: "AfterAgent",
  PreCompact: "PreCompress",
  SessionStart: "SessionStart",
  SessionEnd: "SessionEnd",
  Notification: "Notification",
};

export const CLAUDE_TO_GEMINI_TOOL: Readonly<Record<string, string>> = {
  Bash: "run_shell_command",
  Edit: "replace",
  MultiEdit: "replace",
  Write: "write_file",
  Read: "read_file",
  Glob: "glob",
  Grep: "search_file_content",
  LS: "list_directory",
  WebFetch: "web_fetch",
  WebSearch: "google_web_search",
  TodoWrite: "write_todos",
};

// Every event the claude-code profile knows (Claude Code 2.1.332): a hook on any of them imports.
const CLAUDE_EVENTS = new Set<string>(CLAUDE_PROFILE_EVENTS);
const GEMINI_EVENTS = new Set(["BeforeTool", "AfterTool", "BeforeAgent", "AfterAgent", "Notification", "SessionStart", "SessionEnd", "PreCompress", "BeforeModel", "AfterModel", "BeforeToolSelection"]);
const KNOWN_EVENTS: Readonly<Record<SettingsFormat, ReadonlySet<string>>> = { claude: CLAUDE_EVENTS, gemini: GEMINI_EVENTS, llxprt: GEMINI_EVENTS, codex: new Set<string>(CODEX_EVENTS), vscode: new Set<string>(VSCODE_EVENTS), cursor: new Set<string>(CURSOR_EVENTS), openhands: new Set<string>(OPENHANDS_EVENTS), goose: new Set<string>(GOOSE_EVENTS), copilot: new Set<string>(COPILOT_EVENTS) };
const TOOL_EVENTS = new Set(["PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "PermissionDenied", "PreSkillShellCommand", "BeforeTool", "AfterTool"]);

export type SettingsFormat = "claude" | "gemini" | "llxprt" | "codex" | "vscode" | "cursor" | "openhands" | "goose" | "copilot";
export type SettingsTarget = "claude-code" | "gemini-cli" | "llxprt" | "codex" | "vscode" | "cursor" | "openhands" | "goose" | "copilot";

const PROJECT_VARS: Record<SettingsFormat, string[]> = {
  claude: ["CLAUDE_PROJECT_DIR"],
  gemini: ["GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"],
  llxprt: ["LLXPRT_PROJECT_DIR", "GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"],
  // Codex documents no project-directory variable: its hooks run in the session's working directory.
  codex: [],
  vscode: ["CLAUDE_PROJECT_DIR"],
  cursor: ["CURSOR_PROJECT_DIR", "CLAUDE_PROJECT_DIR"],
  openhands: ["OPENHANDS_PROJECT_DIR"],
  // goose: ${PLUGIN_ROOT} is the plugin directory, what --project-dir defaults to for a plugin's hooks.json.
  goose: ["PLUGIN_ROOT"],
  // The real Copilot CLI (1.0.102) sets both for every hook; its references document none.
  copilot: ["COPILOT_PROJECT_DIR", "CLAUDE_PROJECT_DIR"],
};
/** Units of a hook's `timeout`: Claude Code and Codex say seconds, Gemini CLI and LLxprt milliseconds. */
const TIMEOUT_IN_SECONDS: ReadonlySet<SettingsFormat> = new Set(["claude", "codex", "vscode", "cursor", "openhands", "goose", "copilot"]);

/**
 * Convert one settings.json text. `target` defaults to the format's own profile; a Claude file may be
 * imported for Gemini CLI or LLxprt (events, tool names and matchers are converted, each reported).
 *
 * @example
 * ```ts
 * const result = importSettingsJson(text, "claude", "gemini-cli", ctx);
 * ```
 */
export function importSettingsJson(text: string, format: SettingsFormat, target: SettingsTarget | undefined, ctx: ImportContext): ImportResult {
  const profile: SettingsTarget = target ?? (format === "claude" ? "claude-code" : format === "gemini" ? "gemini-cli" : format === "codex" ? "codex" : format === "vscode" ? "vscode" : format === "cursor" ? "cursor" : format === "openhands" ? "openhands" : format === "goose" ? "goose" : format === "copilot" ? "copilot" : "llxprt");
  if (format !== "claude" && profile === "claude-code") throw new ImportError(`a ${format} settings file cannot be imported for claude-code`);
  if ((format === "codex") !== (profile === "codex") || (format === "vscode") !== (profile === "vscode") || (format === "cursor") !== (profile === "cursor") || (format === "openhands") !== (profile === "openhands") || (format === "goose") !== (profile === "goose") || (format === "copilot") !== (profile === "copilot")) throw new ImportError(`a ${format} hooks file cannot be imported for ${profile}`);
  const doc = parseConfig(text, format, ctx.source);
  const hooksRoot = (doc as { hooks?: unknown } | null)?.hooks;
  const result: ImportResult = { profile, format, hooks: [], refused: [], notes: [], needsShell: false, envAllow: ["PATH", "HOME", "LANG"] };
  if (typeof hooksRoot !== "object" || hooksRoot === null || Array.isArray(hooksRoot)) {
    throw new ImportError(`${ctx.source} has no "hooks" object`);
  }
  const toGemini = format === "claude" && profile !== "claude-code";
  if (toGemini) result.notes.push(`Claude Code events and tool names converted to ${profile}'s (PreToolUse→BeforeTool, Bash→run_shell_command, …)`);
  const taken = new Set<string>();
  for (const [event, groups] of Object.entries(hooksRoot as Record<string, unknown>)) {
    // Gemini keeps `hooks.enabled` / `hooks.disabled` next to the events in some versions.
    if ((format === "gemini" || format === "llxprt") && (event === "enabled" || event === "disabled" || event === "notifications")) continue;
    // Codex keeps its per-hook trust and enablement in config.toml's [hooks.state]: not an event.
    if (format === "codex" && event === "state") continue;
    const known = KNOWN_EVENTS[format];
    if (format === "copilot" && !known.has(event) && /^[A-Z]/.test(event)) {
      // Copilot's PascalCase names select VS Code's snake_case payloads: that file is the vscode profile's.
      result.refused.push({ at: `hooks.${event}`, why: `'${event}' is Copilot's VS Code-compatible (PascalCase) form: import this file with 'vcp-hooks import vscode', or rename the event to its camelCase form` });
      continue;
    }
    if (!known.has(event)) {
      result.refused.push({ at: `hooks.${event}`, why: `unknown ${format} event '${event}'` });
      continue;
    }
    let targetEvent = event;
    if (toGemini) {
      const mapped = CLAUDE_TO_GEMINI_EVENT[event];
      if (mapped === undefined) {
        result.refused.push({ at: `hooks.${event}`, why: `Claude Code event ${event} has no ${profile} equivalent` });
        continue;
      }
      targetEvent = mapped;
    }
    if (!Array.isArray(groups)) {
      result.refused.push({ at: `hooks.${event}`, why: "must be a list of matcher groups" });
      continue;
    }
    groups.forEach((group: unknown, gi) => {
      const at = `hooks.${event}[${gi}]`;
      if (typeof group !== "object" || group === null) {
        result.refused.push({ at, why: "a matcher group must be an object" });
        return;
      }
      // VS Code lists an event's hooks directly: one such entry is a group of one hook, matching all.
      const flat = (format === "vscode" && !("hooks" in group) && "type" in group) || ((format === "cursor" || format === "copilot") && !("hooks" in group));
      const g = (flat ? { ...("matcher" in group ? { matcher: (group as { matcher?: unknown }).matcher } : {}), hooks: [format === "cursor" ? { type: "command", ...group } : group] } : group) as { matcher?: unknown; sequential?: unknown; hooks?: unknown };
      if (g.matcher !== undefined && typeof g.matcher !== "string") {
        result.refused.push({ at: `${at}.matcher`, why: "the matcher must be a string" });
        return;
      }
      const matcherConversions: string[] = [];
      let matcher: string | undefined;
      try {
        matcher = convertMatcher(g.matcher as string | undefined, event, format, profile, matcherConversions);
      } catch (err) {
        result.refused.push({ at: `${at}.matcher`, why: (err as Error).message });
        return;
      }
      if (!Array.isArray(g.hooks)) {
        result.refused.push({ at: `${at}.hooks`, why: "must be a list of hooks" });
        return;
      }
      g.hooks.forEach((h: unknown, hi) => {
        const hat = `${at}.hooks[${hi}]`;
        const entry = h as { type?: unknown; command?: unknown; linux?: unknown; bash?: unknown; powershell?: unknown; cwd?: unknown; env?: unknown; timeout?: unknown; timeoutSec?: unknown; timeout_sec?: unknown; name?: unknown; url?: unknown } | null;
        if (format === "copilot" && entry !== null && typeof entry === "object" && entry.type === "command") {
          // The lane runs the command itself, in the project directory, with the profile's environment.
          if (entry.cwd !== undefined || entry.env !== undefined) {
            result.refused.push({ at: hat, why: `${entry.cwd !== undefined ? "cwd" : "env"} is not carried by the command lane: fold it into the bash command (cd …; VAR=… cmd) and import again` });
            return;
          }
          if (typeof entry.bash !== "string") {
            result.refused.push({ at: `${hat}.bash`, why: typeof entry.powershell === "string" ? "only a powershell command: the command lane runs bash on Linux" : "must be a string" });
            return;
          }
        }
        // VS Code: `linux` overrides the cross-platform `command` here (the lane runs on Linux).
        const hook =
          entry !== null && typeof entry === "object" && format === "vscode" && typeof entry.linux === "string" ? { ...entry, command: entry.linux }
          : entry !== null && typeof entry === "object" && format === "copilot" && typeof entry.bash === "string" ? { ...entry, command: entry.bash }
          : entry;
        if (typeof hook !== "object" || hook === null) {
          result.refused.push({ at: hat, why: "a hook must be an object" });
          return;
        }
        if (hook.type !== "command" && !(format === "goose" && hook.type === undefined)) {
          result.refused.push({ at: hat, why: `type '${String(hook.type)}' is not a command hook (only command hooks run in the command lane; point an http hook at the profile route instead)` });
          return;
        }
        if (typeof hook.command !== "string") {
          result.refused.push({ at: `${hat}.command`, why: "must be a string" });
          return;
        }
        const imported: ImportedHook = {
          name: hookName(typeof hook.name === "string" ? hook.name : `${targetEvent}-${matcher ?? "all"}`, taken),
          event: targetEvent,
          exec: { command: "", sha256: "" },
          original: hook.command,
          at: hat,
          conversions: [...matcherConversions],
          warnings: [],
        };
        if (typeof hook.name === "string" && hook.name !== imported.name) imported.conversions.push(`name '${hook.name}' → '${imported.name}' (hook names are [a-z0-9_-]{1,64})`);
        if (toGemini && targetEvent !== event) imported.conversions.push(`event ${event} → ${targetEvent}`);
        if (matcher !== undefined) imported.matcher = matcher;
        if (format === "goose" && (h as { on_failure?: unknown }).on_failure === "block") {
          imported.fail_closed = true;
          imported.conversions.push("on_failure: block → fail_closed: true");
        }
        if (format === "copilot" && event === "preToolUse") {
          // Observed with the real Copilot CLI 1.0.102: a preToolUse hook that exits non-zero denies the tool.
          imported.fail_closed = true;
          imported.conversions.push("preToolUse: fail_closed: true (Copilot CLI 1.0.102 denies the tool when a preToolUse hook fails)");
        }
        if (format === "cursor" && (h as { failClosed?: unknown }).failClosed === true) {
          imported.fail_closed = true;
          imported.conversions.push("failClosed: true → fail_closed: true");
        }
        if (g.sequential === true && profile !== "claude-code") imported.sequential = true;
        // Codex also spells it timeoutSec / timeout_sec.
        const timeout = hook.timeout ?? (format === "codex" ? (hook.timeoutSec ?? hook.timeout_sec) : format === "copilot" ? hook.timeoutSec : undefined);
        if (timeout !== undefined) {
          if (typeof timeout !== "number" || !(timeout > 0)) {
            result.refused.push({ at: `${hat}.timeout`, why: "must be a positive number" });
            return;
          }
          let ms = timeout;
          if (TIMEOUT_IN_SECONDS.has(format)) {
            ms = Math.round(timeout * 1000);
            imported.conversions.push(`timeout ${timeout} s → ${ms} ms`);
          }
          imported.timeout_ms = capTimeout(Math.max(1, Math.round(ms)), imported.conversions, "timeout");
        }
        try {
          imported.exec = resolveCommand(hook.command, PROJECT_VARS[format], ctx, imported);
        } catch (err) {
          result.refused.push({ at: `${hat}.command`, why: (err as Error).message });
          return;
        }
        if (imported.exec.shell) result.needsShell = true;
        if (/\$\{?CLAUDE_PROJECT_DIR|\$\{?GEMINI_PROJECT_DIR|\$\{?LLXPRT_PROJECT_DIR/.test(hook.command) && imported.exec.shell) {
          imported.warnings.push("the shell string read a project-dir variable; it was expanded at import");
        }
        result.hooks.push(imported);
      });
    });
  }
  return result;
}

/** The configuration document: JSON, or for Codex a config.toml (its `[hooks]` tables) when it is not JSON. */
function parseConfig(text: string, format: SettingsFormat, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    if (format !== "codex" || /\.json$/i.test(source)) throw new ImportError(`${source} is not JSON: ${(err as Error).message}`);
  }
  try {
    return parseToml(text);
  } catch (err) {
    throw new ImportError(`${source} is neither JSON (hooks.json) nor TOML (config.toml): ${(err as Error).message.split("\n")[0]}`);
  }
}

/**
 * A matcher in the target's terms. Claude: a plain word (or `A|B` of plain words) matches exactly, so
 * for Gemini/LLxprt (unanchored search) it becomes `^(?:…)$`, tool names mapped. Any regex is checked
 * with RE2; one RE2 cannot compile is refused (never a silent exact match).
 */
function convertMatcher(matcher: string | undefined, event: string, format: SettingsFormat, profile: SettingsTarget, conversions: string[]): string | undefined {
  if (isAll(matcher)) return undefined;
  const m = matcher!;
  if (!TOOL_EVENTS.has(event)) {
    // Lifecycle events: an exact string (source / reason / trigger), not a regex.
    return m;
  }
  const problem = re2Problem(m);
  if (problem !== undefined) throw new ImportError(`matcher '${m}' is not a regex RE2 can compile (${problem}); rewrite it without look-around or back-references`);
  if (format !== "claude" || profile === "claude-code") return m;
  const words = m.split("|");
  if (words.every(isPlainWord)) {
    const mapped = words.map((w) => CLAUDE_TO_GEMINI_TOOL[w] ?? w);
    for (const [i, w] of words.entries()) {
      if (mapped[i] !== w) conversions.push(`tool ${w} → ${mapped[i]}`);
      else conversions.push(`tool ${w} kept: no known ${profile} name (check it)`);
    }
    const anchored = `^(?:${[...new Set(mapped)].join("|")})$`;
    conversions.push(`matcher '${m}' → '${anchored}' (Claude matches a plain name exactly; ${profile} searches unanchored)`);
    return anchored;
  }
  conversions.push(`matcher '${m}' is a regex kept as is: Claude tool names in it are not converted (check it against ${profile}'s tool names)`);
  return m;
}
