/**
 * The hooks block of an agent's own settings file that routes events through the drop-in adapter
 * (`vcp-hooks hook <Event> --dialect …`), as `vcp-hooks init --profile` and `vcp-hooks import` write it
 * next to what they generate. Pure: the callers write the text.
 *
 * Claude Code (>= 2.1.295) honours `"onFailure": "block"` on command and http hooks: a hook that cannot
 * start, times out, exits with a code other than 0 or 2 or prints invalid JSON then blocks the action
 * instead of letting it through (ignored on Stop, SubagentStop, TaskCompleted, TeammateIdle). It goes
 * on the guard events (src/tooling/guard-events.ts), so that a guard fails closed even when the adapter
 * itself cannot run. Gemini CLI, LLxprt and Codex have no such switch: there the adapter's own
 * `--on-error auto` (exit 2 on a guarded event) is what blocks. Codex reads the same `hooks` shape as
 * Claude Code from `~/.codex/hooks.json` (timeouts in seconds; the file's root takes `hooks` and
 * `description` only). VS Code lists an event's hooks directly, without matcher groups (`timeout` in
 * seconds); it has no failing-hook switch either. Cursor (`~/.cursor/hooks.json`, `version: 1`) lists
 * hooks directly too and has one: `"failClosed": true` blocks the action when the hook crashes, times
 * out or prints invalid JSON — it goes on the guard events, as Claude Code's `onFailure`. OpenHands
 * (`~/.openhands/hooks.json`) reads Claude Code's layout, seconds, no failing-hook switch. goose (a
 * plugin's `hooks/hooks.json`) reads it too, but its matcher is a regex (`*` is invalid there, so the
 * groups carry none) and its switch is `"on_failure": "block"` (PreToolUse only). GitHub Copilot
 * (`.github/hooks/*.json`, `version: 1`) lists hooks directly with `bash` / `powershell` commands and
 * `timeoutSec`; it has no failing-hook switch (a failed hook is logged and skipped), so the adapter's own
 * `--on-error auto` deny on stdout is what blocks. The file goes in the user's `~/.copilot/hooks/`: the
 * real CLI (1.0.102) skips a repository's `.github/hooks/` in `copilot -p` unless the folder is trusted.
 */
import { isToolEvent } from "./guard-events.js";

export type SettingsAgent = "claude-code" | "gemini-cli" | "llxprt" | "codex" | "vscode" | "cursor" | "openhands" | "goose" | "copilot";

const DIALECT: Record<SettingsAgent, string> = { "claude-code": "claude", "gemini-cli": "gemini", llxprt: "llxprt", codex: "codex", vscode: "vscode", cursor: "cursor", openhands: "openhands", goose: "goose", copilot: "copilot" };
/** Events whose matcher is a tool name; elsewhere the groups carry no matcher. */
const TOOL_MATCHED = new Set(["PreToolUse", "PostToolUse", "PermissionRequest", "BeforeTool", "AfterTool"]);
/**
 * The agent's hook timeout: above the adapter's own deadline (10 s, --timeout-ms), so that the adapter
 * answers — a block for a guarded event — before the agent gives up on it.
 */
const TIMEOUT_S = 15;

/** Which agent's settings file a profile's hooks go into, or undefined (a profile with no settings.json). */
export function settingsAgentOf(profile: string): SettingsAgent | undefined {
  return profile === "claude-code" || profile === "gemini-cli" || profile === "llxprt" || profile === "codex" || profile === "vscode" || profile === "cursor" || profile === "openhands" || profile === "goose" || profile === "copilot" ? profile : undefined;
}

/** The name `init` and `import` give the file they write the block to. */
export const GENERATED_FILE: Record<SettingsAgent, string> = { "claude-code": "claude-settings.json", "gemini-cli": "gemini-settings.json", llxprt: "llxprt-settings.json", codex: "codex-hooks.json", vscode: "vscode-hooks.json", cursor: "cursor-hooks.json", openhands: "openhands-hooks.json", goose: "goose-hooks.json", copilot: "copilot-hooks.json" };

/** Where the block goes, for the messages that point at it. */
export const SETTINGS_FILE: Record<SettingsAgent, string> = { "claude-code": "~/.claude/settings.json", "gemini-cli": "~/.gemini/settings.json", llxprt: "~/.llxprt/settings.json", codex: "~/.codex/hooks.json", vscode: "a VS Code hook file (.github/hooks/vcp-hooks.json, or one listed in chat.hookFilesLocations)", cursor: "~/.cursor/hooks.json", openhands: "~/.openhands/hooks.json", goose: "~/.agents/plugins/vcp-hooks/hooks/hooks.json (beside a plugin.json naming the plugin)", copilot: "~/.copilot/hooks/vcp-hooks.json (Copilot reads a repository's .github/hooks/ only in a trusted folder)" };

/**
 * The settings JSON (pretty, newline-terminated) whose `hooks` send each of `events` through the adapter.
 *
 * @example
 * renderAgentSettings("claude-code", ["PreToolUse", "PostToolUse"]);
 * // { "hooks": { "PreToolUse": [{ "matcher": "*", "hooks": [{ "type": "command",
 * //   "command": "vcp-hooks hook PreToolUse --dialect claude", "timeout": 15, "onFailure": "block" }] }], … } }
 */
export function renderAgentSettings(agent: SettingsAgent, events: readonly string[]): string {
  const hooks: Record<string, unknown[]> = {};
  for (const event of [...new Set(events)]) {
    const command = `vcp-hooks hook ${event} --dialect ${DIALECT[agent]}`;
    const hook =
      agent === "claude-code"
        ? { type: "command", command, timeout: TIMEOUT_S, ...(isToolEvent(agent, event) ? { onFailure: "block" } : {}) }
        : agent === "codex" || agent === "openhands"
          ? { type: "command", command, timeout: TIMEOUT_S }
          : agent === "goose"
            ? { type: "command", command, timeout: TIMEOUT_S, ...(isToolEvent(agent, event) ? { on_failure: "block" } : {}) }
          : { type: "command", name: "vcp-hooks", command, timeout: TIMEOUT_S * 1000 };
    hooks[event] =
      agent === "copilot" ? [{ type: "command", bash: command, timeoutSec: TIMEOUT_S }] :
      agent === "cursor" ? [{ command, timeout: TIMEOUT_S, ...(isToolEvent(agent, event) ? { failClosed: true } : {}) }] :
      agent === "vscode" ? [{ type: "command", command, timeout: TIMEOUT_S }] : [{ ...(TOOL_MATCHED.has(event) && agent !== "goose" ? { matcher: "*" } : {}), hooks: [hook] }];
  }
  const doc = agent === "cursor" || agent === "copilot" ? { version: 1, hooks } : agent === "claude-code" || agent === "codex" || agent === "vscode" || agent === "openhands" || agent === "goose" ? { hooks } : { hooksConfig: { enabled: true }, hooks };
  return `${JSON.stringify(doc, null, 2)}\n`;
}
