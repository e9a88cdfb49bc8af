import type { PostToolUseInput, PostToolUseOutput, PreToolUseInput, PreToolUseOutput } from "vcp-hooks/profiles/codex";
import { checkShell, describeFound, isInsideProject, redactSecrets, textOf } from "../../safe-shell-rules.js";

/**
 * Codex safe-shell policy: deny destructive shell commands and patches that touch files outside the
 * project (permissionDecision "deny" with a reason: Codex refuses a deny without one), rewrite a risky
 * command to its safe variant (allow + updatedInput: Codex cannot ask, so the rewrite itself is the
 * answer), and warn about secrets in tool output (additionalContext + systemMessage).
 */

const deny = (reason: string): PreToolUseOutput => ({
  hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: reason },
});

/** PreToolUse on Bash: `tool_input.command` is the shell command line. */
export function guardBash(input: PreToolUseInput): PreToolUseOutput {
  const command = input.tool_input["command"];
  if (typeof command !== "string") return {};
  const verdict = checkShell(command, input.cwd);
  if (verdict.kind === "block") return deny(verdict.reason);
  if (verdict.kind === "allow") return {};
  return {
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "allow",
      updatedInput: { ...input.tool_input, command: verdict.command },
      additionalContext: verdict.note,
    },
  };
}

/** The files an apply_patch envelope adds, updates, deletes or moves to. */
function patchedFiles(patch: string): string[] {
  const files: string[] = [];
  for (const line of patch.split("\n")) {
    const m = /^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$/.exec(line.trim());
    if (m) files.push((m[1] ?? m[2]!).trim());
  }
  return files;
}

/** PreToolUse on apply_patch: every file the patch touches must stay inside the project. */
export function guardPatch(input: PreToolUseInput): PreToolUseOutput {
  const patch = input.tool_input["command"] ?? input.tool_input["patch"] ?? input.tool_input["input"];
  if (typeof patch !== "string") return {};
  const outside = patchedFiles(patch).filter((f) => !isInsideProject(f, input.cwd));
  if (outside.length > 0) return deny(`blocked: apply_patch outside the project: ${outside.join(" ")}`);
  const git = patchedFiles(patch).filter((f) => /(^|\/)\.git(\/|$)/.test(f));
  if (git.length > 0) return deny(`blocked: apply_patch inside .git: ${git.join(" ")}`);
  return {};
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
