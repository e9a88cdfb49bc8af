import type { HookInput, HookOutput } from "vcp-hooks/profiles/copilot";
import { checkShell, isInsideProject } from "../../safe-shell-rules.js";

/**
 * Copilot safe-shell policy: block destructive shell commands and writes outside the working directory
 * (`{"permissionDecision":"deny","permissionDecisionReason":…}`, the one answer every Copilot reference
 * says is processed). A risky command's safe variant is named in the deny rather than substituted.
 */

/** `toolArgs` as an object: the cloud agent sends a JSON string, the CLI reference any JSON value. */
function argsOf(input: HookInput): Record<string, unknown> {
  let args = input.toolArgs;
  if (typeof args === "string") {
    try {
      args = JSON.parse(args) as unknown;
    } catch {
      return {};
    }
  }
  return typeof args === "object" && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
}

/** preToolUse on bash: `toolArgs.command` is the command line. */
export function guardShell(input: HookInput): HookOutput {
  const command = argsOf(input)["command"];
  if (typeof command !== "string") return {};
  const verdict = checkShell(command, input.cwd);
  if (verdict.kind === "block") return { permissionDecision: "deny", permissionDecisionReason: verdict.reason };
  if (verdict.kind === "rewrite") return { permissionDecision: "deny", permissionDecisionReason: `${verdict.note}: run \`${verdict.command}\` instead` };
  return {};
}

/** preToolUse on create / edit: `toolArgs.path` must stay inside the working directory. */
export function guardWrite(input: HookInput): HookOutput {
  const path = argsOf(input)["path"];
  if (typeof path !== "string") return {};
  return isInsideProject(path, input.cwd) ? {} : { permissionDecision: "deny", permissionDecisionReason: `blocked: ${input.toolName} outside the project: ${path}` };
}
