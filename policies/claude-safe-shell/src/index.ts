import type { PostToolUseInput, PostToolUseOutput, PreToolUseInput, PreToolUseOutput } from "vcp-hooks/profiles/claude-code";
import { checkShell, describeFound, isInsideProject, redactSecrets, textOf } from "../../safe-shell-rules.js";

/**
 * Claude Code safe-shell policy: deny destructive Bash commands and writes outside the project
 * (permissionDecision), propose a safe variant through updatedInput with an `ask` so the user sees the
 * rewrite, warn about secrets in tool output (additionalContext + systemMessage), and deny network
 * tools (Claude Code has no tool-selection event, so tools are restricted at PreToolUse).
 */

const deny = (reason: string): PreToolUseOutput => ({
  hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: reason },
});

/** PreToolUse on Bash. */
export function guardBash(input: PreToolUseInput): PreToolUseOutput {
  const command = input.tool_input["command"];
  if (typeof command !== "string") return {};
  const verdict = checkShell(command, input.cwd);
  if (verdict.kind === "block") return deny(verdict.reason);
  if (verdict.kind === "allow") return {};
  return {
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "ask",
      permissionDecisionReason: verdict.note,
      updatedInput: { ...input.tool_input, command: verdict.command },
    },
  };
}

/** PreToolUse on Write|Edit|MultiEdit|NotebookEdit. */
export function guardWrite(input: PreToolUseInput): PreToolUseOutput {
  const path = input.tool_input["file_path"] ?? input.tool_input["notebook_path"];
  if (typeof path !== "string") return {};
  if (!isInsideProject(path, input.cwd)) return deny(`blocked: ${input.tool_name} outside the project: ${path}`);
  if (/(^|\/)\.git(\/|$)/.test(path)) return deny(`blocked: ${input.tool_name} inside .git: ${path}`);
  return {};
}

/** PreToolUse on WebFetch|WebSearch. */
export function denyNetworkTools(input: PreToolUseInput): PreToolUseOutput {
  return deny(`blocked: ${input.tool_name} is disabled by policy (local tools only)`);
}

/** PostToolUse: warn the model and the user about secrets in the output. */
export function redactOutput(input: PostToolUseInput): PostToolUseOutput {
  const { redacted, found, total } = redactSecrets(textOf(input.tool_response));
  if (total === 0) return {};
  const what = describeFound(found);
  return {
    systemMessage: `Secrets in the ${input.tool_name} output: ${what}`,
    hookSpecificOutput: {
      hookEventName: "PostToolUse",
      additionalContext: `SECURITY: the ${input.tool_name} output above contained ${what}. Treat them as compromised; never repeat, store or use them. Redacted copy:\n${redacted.slice(0, 4000)}`,
    },
  };
}
