import { checkShell } from "../../safe-shell-rules.js";

/**
 * Amplifier guard: the kernel's own hook protocol (microsoft/amplifier-core `models.rs` HookResult).
 * A `tool:pre` deny stops the chain; `ask_user` becomes a pending approval (GET /v1/approvals);
 * `inject_context` adds the project's rules to the prompt as a system message.
 */

/** What an amplifier action receives: the event name and its data (session_id, runtime-stamped timestamp). */
export interface AmplifierInput {
  event: string;
  data: { session_id?: string; timestamp?: string; tool_name?: string; tool_input?: Record<string, unknown>; prompt?: string; [key: string]: unknown };
}

/** The HookResult fields these actions use (every field optional; `action` defaults to continue). */
export interface AmplifierResult {
  action?: "continue" | "deny" | "modify" | "inject_context" | "ask_user";
  reason?: string;
  context_injection?: string;
  context_injection_role?: "system" | "user" | "assistant";
  ephemeral?: boolean;
  approval_prompt?: string;
  approval_options?: string[];
  approval_timeout?: number;
  approval_default?: "allow" | "deny";
  user_message?: string;
  user_message_level?: "info" | "warning" | "error";
}

/** Tools that reach the network: the user decides each time (or "Allow always" for the session). */
export const NETWORK_TOOLS = ["web_fetch", "web_search", "http_request"];

/** The rules every prompt carries (kept short: injections count against the per-turn budget). */
export const PROJECT_RULES = "Project rules: never commit secrets; run the tests before proposing a commit; keep changes inside the repository.";

/** tool:pre on bash: deny what the shared safe-shell rules block (rm -rf outside the project, sudo, curl | sh, …). */
export function denyDestructiveBash(input: AmplifierInput): AmplifierResult {
  if (input.data.tool_name !== "bash") return { action: "continue" };
  const command = input.data.tool_input?.["command"];
  if (typeof command !== "string") return { action: "continue" };
  const cwd = typeof input.data["cwd"] === "string" ? input.data["cwd"] : "/";
  const verdict = checkShell(command, cwd);
  if (verdict.kind === "block") return { action: "deny", reason: verdict.reason, user_message: `Denied: ${verdict.reason}`, user_message_level: "warning" };
  return { action: "continue" };
}

/** tool:pre on a network tool: ask the user; no answer within two minutes means deny. */
export function askBeforeNetwork(input: AmplifierInput): AmplifierResult {
  const tool = input.data.tool_name;
  if (tool === undefined || !NETWORK_TOOLS.includes(tool)) return { action: "continue" };
  const target = input.data.tool_input?.["url"] ?? input.data.tool_input?.["query"];
  return {
    action: "ask_user",
    approval_prompt: `Allow ${tool}${typeof target === "string" ? ` (${target})` : ""}?`,
    approval_options: ["Allow once", "Allow always", "Deny"],
    approval_timeout: 120,
    approval_default: "deny",
  };
}

/** prompt:submit: inject the project rules as a system message. */
export function injectProjectRules(_input: AmplifierInput): AmplifierResult {
  return { action: "inject_context", context_injection: PROJECT_RULES, context_injection_role: "system" };
}
