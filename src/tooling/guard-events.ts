/**
 * The events a guard exists for, per agent profile: the ones before a tool runs (or a memory operation,
 * an ability call). One table, read by the adapter (`--on-error auto` blocks them when nothing is known
 * of the server's plan, src/cli/hook-guard.ts) and by the settings `init` and `import` write (Claude
 * Code's `"onFailure": "block"` goes on these, src/tooling/agent-settings.ts).
 *
 *   gemini-cli, llxprt  BeforeTool
 *   claude-code, codex  PreToolUse, PermissionRequest
 *   vscode, openhands,  PreToolUse
 *   goose
 *   cursor              beforeShellExecution, beforeMCPExecution, beforeReadFile, preToolUse
 *   ai-memory           every pre_* event (pre_store, pre_recall, pre_delete, …)
 *   repo-yaml           PreAbilityCall (its only blocking event)
 *   amplifier           tool:pre (no adapter dialect: for a caller of the route that uses this table)
 *
 * No imports: the adapter's cold start loads this module.
 */

/** True when `event` of `profile` is one a tool guard runs on. */
export function isToolEvent(profile: string, event: string): boolean {
  switch (profile) {
    case "gemini-cli":
    case "llxprt":
      return event === "BeforeTool";
    case "claude-code":
    case "codex":
      return event === "PreToolUse" || event === "PermissionRequest";
    case "vscode":
    case "openhands":
    case "goose":
      return event === "PreToolUse";
    case "cursor":
      return event === "beforeShellExecution" || event === "beforeMCPExecution" || event === "beforeReadFile" || event === "preToolUse";
    case "ai-memory":
      return event.startsWith("pre_");
    case "repo-yaml":
      return event === "PreAbilityCall";
    case "amplifier":
      return event === "tool:pre";
    default:
      return false;
  }
}
