import type { HookInput, HookOutput } from "vcp-hooks/profiles/goose";
import { checkShell, isInsideProject } from "../../safe-shell-rules.js";

/**
 * goose safe-shell policy: block destructive shell commands and writes outside the working directory
 * (`{"decision":"block","reason":…}`; goose tells the model "Tool call denied by policy hook"). goose
 * hooks cannot rewrite a command or ask: a risky command's safe variant is named in the block.
 */

/** PreToolUse on developer__shell: `tool_input.command` is the command line. */
export function guardShell(input: HookInput): HookOutput {
  const command = input.tool_input?.["command"];
  if (typeof command !== "string") return {};
  const verdict = checkShell(command, input.working_dir);
  if (verdict.kind === "block") return { decision: "block", reason: verdict.reason };
  if (verdict.kind === "rewrite") return { decision: "block", reason: `${verdict.note}: run \`${verdict.command}\` instead` };
  return {};
}

/** PreToolUse on developer__write / developer__edit: `tool_input.path` must stay inside the working directory. */
export function guardWrite(input: HookInput): HookOutput {
  const path = input.tool_input?.["path"];
  if (typeof path !== "string") return {};
  return isInsideProject(path, input.working_dir) ? {} : { decision: "block", reason: `blocked: ${input.tool_name} outside the project: ${path}` };
}
