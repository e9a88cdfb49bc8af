/**
 * Author types of the `copilot` profile (GitHub Copilot CLI and cloud agent hooks, `.github/hooks/*.json`,
 * `"version": 1`): `import type { HookInput, HookOutput } from "vcp-hooks/profiles/copilot"`. An action
 * receives exactly the JSON a Copilot command hook reads on stdin (the camelCase format) and returns the
 * JSON it would print.
 *
 * @example
 * ```ts
 * import type { HookInput, HookOutput } from "vcp-hooks/profiles/copilot";
 * export const noSudo = (input: HookInput): HookOutput =>
 *   String(input.toolArgs ?? "").includes("sudo ") ? { permissionDecision: "deny", permissionDecisionReason: "no sudo" } : {};
 * ```
 */

export type HookEventName =
  | "sessionStart"
  | "sessionEnd"
  | "userPromptSubmitted"
  | "userPromptTransformed"
  | "preToolUse"
  | "postToolUse"
  | "postToolUseFailure"
  | "permissionRequest"
  | "agentStop"
  | "subagentStart"
  | "subagentStop"
  | "errorOccurred"
  | "preCompact"
  | "notification";

/** One shape for every event; a field is present only where it applies. */
export interface HookInput {
  /** The CLI reference sends it; the cloud agent's payload examples omit it. */
  sessionId?: string;
  /** Unix milliseconds. */
  timestamp: number;
  cwd: string;
  /** `bash`, `powershell`, `create`, `edit`, `view`, `glob`, `grep`, `web_fetch`, `task`, `ask_user` … */
  toolName?: string;
  /** A JSON string in the cloud agent's reference, any JSON value in the CLI reference. */
  toolArgs?: unknown;
  /** permissionRequest as the real CLI 1.0.102 sends it (the reference says `toolArgs`). */
  toolInput?: unknown;
  permissionSuggestions?: unknown;
  hookName?: string;
  toolResult?: { resultType: string; textResultForLlm: string };
  prompt?: string;
  /** userPromptTransformed: the prompt as the model receives it. */
  transformedPrompt?: string;
  source?: "startup" | "resume" | "new";
  initialPrompt?: string;
  reason?: string;
  error?: string | { message: string; name: string; stack?: string };
  errorContext?: string;
  recoverable?: boolean;
  transcriptPath?: string;
  stopReason?: string;
  agentName?: string;
  agentDisplayName?: string;
  agentDescription?: string;
  trigger?: "manual" | "auto";
  customInstructions?: string;
  message?: string;
  title?: string;
  notification_type?: string;
}

/** What each event reads (anything else is ignored by Copilot and refused by name here). */
export interface HookOutput {
  /** preToolUse. The cloud agent's reference: only "deny" is processed. */
  permissionDecision?: "allow" | "deny" | "ask";
  permissionDecisionReason?: string;
  /** preToolUse: substitute tool arguments (CLI reference). */
  modifiedArgs?: Record<string, unknown>;
  /** permissionRequest. */
  behavior?: "allow" | "deny";
  message?: string;
  interrupt?: boolean;
  /** agentStop, subagentStop: "block" forces another turn with `reason` as the prompt. */
  decision?: "block" | "allow";
  reason?: string;
  /**
   * notification, subagentStart, postToolUseFailure; and sessionStart, userPromptSubmitted, preToolUse,
   * postToolUse (the real CLI 1.0.102 adds it to the model's context there).
   */
  additionalContext?: string;
}
