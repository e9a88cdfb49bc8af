import type { PostToolUseInput, PostToolUseOutput, PreToolUseInput, PreToolUseOutput } from "vcp-hooks/profiles/vscode";
import { checkShell, describeFound, isInsideProject, redactSecrets, textOf } from "../../safe-shell-rules.js";

/**
 * VS Code safe-shell policy: deny destructive terminal commands and edits of files outside the workspace
 * (permissionDecision "deny"; with several hooks VS Code takes the most restrictive answer), propose a
 * safe variant through updatedInput with an `ask` so the user sees the rewrite, and warn about secrets
 * in tool output (additionalContext + systemMessage).
 */

const deny = (reason: string): PreToolUseOutput => ({
  hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: reason },
});

/** PreToolUse on the terminal tool: `tool_input.command` is the command line. */
export function guardTerminal(input: PreToolUseInput): PreToolUseOutput {
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

/** An apply_patch text's file headers (`*** Add File: p`, `*** Update File: p`, `*** Delete File: p`, `*** Move to: p`). */
const PATCH_FILE = /^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$/gm;

/**
 * The file paths a VS Code edit tool names: `filePath` (create_file, replace_string_in_file,
 * insert_edit_into_file), `files` (editFiles), each `replacements[].filePath`
 * (multi_replace_string_in_file) and the file headers of apply_patch's `input`.
 */
function pathsOf(toolName: string, toolInput: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const key of ["filePath", "file_path", "path"]) if (typeof toolInput[key] === "string") out.push(toolInput[key]);
  const files = toolInput["files"];
  if (Array.isArray(files)) for (const f of files) if (typeof f === "string") out.push(f);
  const replacements = toolInput["replacements"];
  if (Array.isArray(replacements)) {
    for (const r of replacements) if (typeof r === "object" && r !== null && typeof (r as { filePath?: unknown }).filePath === "string") out.push((r as { filePath: string }).filePath);
  }
  const patch = toolInput["input"];
  if (toolName === "apply_patch" && typeof patch === "string") for (const m of patch.matchAll(PATCH_FILE)) out.push(m[1]!.trim());
  return out;
}

/** PreToolUse on the edit tools: every file must stay inside the workspace. */
export function guardEdit(input: PreToolUseInput): PreToolUseOutput {
  const outside = pathsOf(input.tool_name, input.tool_input).filter((p) => !isInsideProject(p, input.cwd));
  if (outside.length > 0) return deny(`blocked: ${input.tool_name} outside the project: ${outside.join(" ")}`);
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
