import type {
  AfterToolInput,
  AfterToolOutput,
  BeforeToolInput,
  BeforeToolOutput,
  BeforeToolSelectionInput,
  BeforeToolSelectionOutput,
} from "vcp-hooks/profiles/gemini-cli";
import { checkShell, describeFound, isInsideProject, redactSecrets, textOf } from "../../safe-shell-rules.js";

/**
 * Gemini CLI safe-shell policy: refuse destructive shell commands and writes outside the project,
 * rewrite risky commands to a safe variant, redact secrets from tool output, and offer the model only
 * local tools. Each action speaks Gemini CLI's hook JSON exactly.
 */

/** Tools the model may call (no web access, no memory writes). */
export const LOCAL_TOOLS = ["glob", "list_directory", "read_file", "read_many_files", "replace", "run_shell_command", "search_file_content", "write_file"];

/** Longest redacted output repeated to the model as context. */
const CONTEXT_LIMIT = 4000;

/** BeforeTool on run_shell_command: block destructive commands, rewrite risky ones (tool_input). */
export function guardShell(input: BeforeToolInput): BeforeToolOutput {
  const command = input.tool_input["command"];
  if (typeof command !== "string") return {};
  const verdict = checkShell(command, input.cwd);
  if (verdict.kind === "block") return { decision: "block", reason: verdict.reason };
  if (verdict.kind === "rewrite") {
    return {
      decision: "allow",
      systemMessage: verdict.note,
      hookSpecificOutput: { hookEventName: "BeforeTool", tool_input: { ...input.tool_input, command: verdict.command } },
    };
  }
  return {};
}

/** BeforeTool on write_file|replace: the target must stay inside the project and out of .git/. */
export function guardWrite(input: BeforeToolInput): BeforeToolOutput {
  const path = input.tool_input["file_path"];
  if (typeof path !== "string") return {};
  if (!isInsideProject(path, input.cwd)) return { decision: "block", reason: `blocked: ${input.tool_name} outside the project: ${path}` };
  if (/(^|\/)\.git(\/|$)/.test(path)) return { decision: "block", reason: `blocked: ${input.tool_name} inside .git: ${path}` };
  return {};
}

/** AfterTool: replace secrets in the tool output, tell the user and warn the model. */
export function redactOutput(input: AfterToolInput): AfterToolOutput {
  const text = textOf(input.tool_response.llmContent ?? input.tool_response);
  const { redacted, found, total } = redactSecrets(text);
  if (total === 0) return {};
  const what = describeFound(found);
  return {
    systemMessage: `Redacted ${what} from the ${input.tool_name} output`,
    hookSpecificOutput: {
      hookEventName: "AfterTool",
      tool_output: redacted,
      additionalContext: `The ${input.tool_name} output contained ${what}; they are redacted. Do not repeat, store or use secrets.\n${redacted.slice(0, CONTEXT_LIMIT)}`,
    },
  };
}

/** BeforeToolSelection: only local tools. */
export function restrictTools(_input: BeforeToolSelectionInput): BeforeToolSelectionOutput {
  return { hookSpecificOutput: { hookEventName: "BeforeToolSelection", toolConfig: { mode: "AUTO", allowedFunctionNames: [...LOCAL_TOOLS] } } };
}
