import type {
  AfterToolInput,
  AfterToolOutput,
  BeforeToolInput,
  BeforeToolOutput,
  BeforeToolSelectionInput,
  BeforeToolSelectionOutput,
} from "vcp-hooks/profiles/llxprt";
import { checkShell, describeFound, isInsideProject, redactSecrets, textOf } from "../../safe-shell-rules.js";

/**
 * LLxprt Code safe-shell policy. Same rules as gemini-safe-shell, in LLxprt's dialect: it always sets
 * the top-level `decision` (LLxprt's OR merge reads only that when several hooks run), redacts through
 * additionalContext and systemMessage (LLxprt has no tool_output replacement), and relies on LLxprt
 * intersecting BeforeToolSelection lists, so no other hook can add a tool back.
 */

export const LOCAL_TOOLS = ["glob", "list_directory", "read_file", "read_many_files", "replace", "run_shell_command", "search_file_content", "write_file"];

const CONTEXT_LIMIT = 4000;

/** BeforeTool on run_shell_command: block destructive commands, rewrite risky ones (tool_input). */
export function guardShell(input: BeforeToolInput): BeforeToolOutput {
  const command = input.tool_input["command"];
  if (typeof command !== "string") return {};
  const verdict = checkShell(command, input.cwd);
  if (verdict.kind === "block") return { decision: "block", reason: verdict.reason };
  if (verdict.kind === "allow") return {};
  return {
    decision: "allow",
    systemMessage: verdict.note,
    hookSpecificOutput: { hookEventName: "BeforeTool", tool_input: { ...input.tool_input, command: verdict.command } },
  };
}

/** BeforeTool on write_file|replace: the target must stay inside the project and out of .git/. */
export function guardWrite(input: BeforeToolInput): BeforeToolOutput {
  const path = input.tool_input["file_path"];
  if (typeof path !== "string") return {};
  if (!isInsideProject(path, input.cwd)) return { decision: "block", reason: `blocked: ${input.tool_name} outside the project: ${path}` };
  if (/(^|\/)\.git(\/|$)/.test(path)) return { decision: "block", reason: `blocked: ${input.tool_name} inside .git: ${path}` };
  return {};
}

/** AfterTool: warn the model (additionalContext, with the redacted text) and the user (systemMessage). */
export function redactOutput(input: AfterToolInput): AfterToolOutput {
  const { redacted, found, total } = redactSecrets(textOf(input.tool_response.llmContent ?? input.tool_response));
  if (total === 0) return {};
  const what = describeFound(found);
  return {
    systemMessage: `Redacted ${what} from the ${input.tool_name} output`,
    hookSpecificOutput: {
      hookEventName: "AfterTool",
      additionalContext: `SECURITY: the ${input.tool_name} output above contained ${what}. Treat them as compromised; never repeat, store or use them. Redacted copy:\n${redacted.slice(0, CONTEXT_LIMIT)}`,
    },
  };
}

/** BeforeToolSelection: only local tools (LLxprt intersects the lists of all hooks). */
export function restrictTools(_input: BeforeToolSelectionInput): BeforeToolSelectionOutput {
  return { hookSpecificOutput: { hookEventName: "BeforeToolSelection", toolConfig: { mode: "AUTO", allowedFunctionNames: [...LOCAL_TOOLS] } } };
}
