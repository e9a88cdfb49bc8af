import type { BeforeReadFileInput, BeforeShellExecutionInput, PermissionOutput } from "vcp-hooks/profiles/cursor";
import { checkShell } from "../../safe-shell-rules.js";

/**
 * Cursor safe-shell policy: deny destructive shell commands (`permission: "deny"`, the reason to the
 * model in `agent_message` and to the user in `user_message`), ask before a risky command (Cursor's
 * beforeShellExecution cannot rewrite it: the safe variant is named in the question), and deny reads of
 * files that hold secrets.
 */

/** beforeShellExecution: `command` is the command line, `cwd` where it runs. */
export function guardShell(input: BeforeShellExecutionInput): PermissionOutput {
  const verdict = checkShell(input.command, input.cwd ?? input.workspace_roots?.[0]);
  if (verdict.kind === "block") return { permission: "deny", user_message: verdict.reason, agent_message: verdict.reason };
  if (verdict.kind === "rewrite") return { permission: "ask", user_message: `${verdict.note}: run \`${verdict.command}\` instead?`, agent_message: `use: ${verdict.command}` };
  return {};
}

const SECRET_FILE = /(^|\/)(\.env(\.[\w-]+)?|id_(rsa|ed25519|ecdsa)|\.npmrc|\.netrc|credentials(\.json)?)$/;

/** beforeReadFile: secrets files are not read into the conversation. */
export function guardRead(input: BeforeReadFileInput): PermissionOutput {
  return SECRET_FILE.test(input.file_path) ? { permission: "deny", user_message: `blocked: ${input.file_path} holds secrets`, agent_message: `blocked: ${input.file_path} holds secrets` } : {};
}
