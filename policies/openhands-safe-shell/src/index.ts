import type { HookInput, HookOutput } from "vcp-hooks/profiles/openhands";
import { checkShell, isInsideProject } from "../../safe-shell-rules.js";

/**
 * OpenHands safe-shell policy: deny destructive terminal commands and file edits outside the working
 * directory (`decision: "deny"` with the reason; OpenHands stops at the first hook that denies). A risky
 * command's safe variant is named in the denial: OpenHands hooks cannot rewrite a command or ask.
 */

/** PreToolUse on the terminal tool: `tool_input.command` is the command line. */
export function guardTerminal(input: HookInput): HookOutput {
  const command = input.tool_input?.["command"];
  if (typeof command !== "string") return {};
  const verdict = checkShell(command, input.working_dir ?? undefined);
  if (verdict.kind === "block") return { decision: "deny", reason: verdict.reason };
  if (verdict.kind === "rewrite") return { decision: "deny", reason: `${verdict.note}: run \`${verdict.command}\` instead` };
  return {};
}

/** PreToolUse on file_editor: `tool_input.path` must stay inside the working directory. */
export function guardEdit(input: HookInput): HookOutput {
  const path = input.tool_input?.["path"];
  if (typeof path !== "string" || input.tool_input?.["command"] === "view") return {};
  return isInsideProject(path, input.working_dir ?? undefined) ? {} : { decision: "deny", reason: `blocked: file_editor outside the project: ${path}` };
}
