/**
 * Author types of the Gemini CLI family (`gemini-cli`, `llxprt`): the JSON an action receives (what a
 * command hook reads on stdin) and the JSON it returns (what it would print). Types only.
 *
 * @example
 * ```ts
 * import type { BeforeToolInput, BeforeToolOutput } from "vcp-hooks/profiles/gemini-cli";
 * export function noRmRf(input: BeforeToolInput): BeforeToolOutput {
 *   return /rm\s+-rf\s+\//.test(String(input.tool_input["command"])) ? { decision: "block", reason: "rm -rf /" } : {};
 * }
 * ```
 */

/** The eleven events of Gemini CLI and LLxprt Code. */
export type HookEventName =
  | "BeforeTool"
  | "AfterTool"
  | "BeforeAgent"
  | "AfterAgent"
  | "Notification"
  | "SessionStart"
  | "SessionEnd"
  | "PreCompress"
  | "BeforeModel"
  | "AfterModel"
  | "BeforeToolSelection";

/** Fields every input carries. `cwd`, `transcript_path` and `timestamp` are sent by the agent. */
export interface HookInput {
  session_id: string;
  hook_event_name: HookEventName;
  transcript_path?: string;
  cwd?: string;
  timestamp?: string;
}

export interface McpToolContext {
  server_name: string;
  tool_name: string;
  command?: string;
  args?: string[];
  cwd?: string;
  url?: string;
  tcp?: string;
}

export interface BeforeToolInput extends HookInput {
  hook_event_name: "BeforeTool";
  tool_name: string;
  tool_input: Record<string, unknown>;
  mcp_context?: McpToolContext;
}

export interface AfterToolInput extends HookInput {
  hook_event_name: "AfterTool";
  tool_name: string;
  tool_input: Record<string, unknown>;
  tool_response: { llmContent?: unknown; returnDisplay?: unknown; error?: unknown; [key: string]: unknown };
  mcp_context?: McpToolContext;
}

export interface BeforeAgentInput extends HookInput {
  hook_event_name: "BeforeAgent";
  prompt: string;
}

export interface AfterAgentInput extends HookInput {
  hook_event_name: "AfterAgent";
  prompt: string;
  prompt_response: string;
  stop_hook_active?: boolean;
}

export interface NotificationInput extends HookInput {
  hook_event_name: "Notification";
  notification_type: string;
  message: string;
  details?: Record<string, unknown>;
}

export interface SessionStartInput extends HookInput {
  hook_event_name: "SessionStart";
  source: "startup" | "resume" | "clear";
}

export interface SessionEndInput extends HookInput {
  hook_event_name: "SessionEnd";
  reason: "exit" | "clear" | "logout" | "prompt_input_exit" | "other";
}

export interface PreCompressInput extends HookInput {
  hook_event_name: "PreCompress";
  trigger: "manual" | "auto";
}

/** The text-only, SDK-independent request format (spec/related/llxprt-code-hooks.md §5.1). */
export interface LLMRequest {
  model?: string;
  messages?: Array<{ role: "user" | "model" | "system"; content: string }>;
  config?: {
    temperature?: number;
    maxOutputTokens?: number;
    topP?: number;
    topK?: number;
    stopSequences?: string[];
    candidateCount?: number;
    presencePenalty?: number;
    frequencyPenalty?: number;
  };
  toolConfig?: HookToolConfig;
  [key: string]: unknown;
}

/** §5.2 response format. */
export interface LLMResponse {
  text?: string;
  candidates?: Array<{
    content?: { role?: string; parts?: string[] };
    finishReason?: "STOP" | "MAX_TOKENS" | "SAFETY" | "RECITATION" | "OTHER";
    index?: number;
    safetyRatings?: Array<{ category: string; probability: string }>;
  }>;
  usageMetadata?: { promptTokenCount?: number; candidatesTokenCount?: number; totalTokenCount?: number };
  [key: string]: unknown;
}

export interface HookToolConfig {
  mode?: "AUTO" | "ANY" | "NONE";
  allowedFunctionNames?: string[];
}

export interface BeforeModelInput extends HookInput {
  hook_event_name: "BeforeModel";
  llm_request: LLMRequest;
}

export interface AfterModelInput extends HookInput {
  hook_event_name: "AfterModel";
  llm_request: LLMRequest;
  llm_response: LLMResponse;
}

export interface BeforeToolSelectionInput extends HookInput {
  hook_event_name: "BeforeToolSelection";
  llm_request: LLMRequest;
}

/** `ask` is kept by Gemini CLI when nothing blocks; LLxprt folds it to `allow`. */
export type HookDecision = "ask" | "block" | "deny" | "approve" | "allow" | null;

/** What any hook may return. Unknown keys are tolerated, as upstream does. */
export interface HookOutput {
  continue?: boolean;
  stopReason?: string;
  suppressOutput?: boolean;
  systemMessage?: string;
  decision?: HookDecision;
  reason?: string;
  hookSpecificOutput?: Record<string, unknown>;
}

export interface BeforeToolOutput extends HookOutput {
  hookSpecificOutput?: {
    hookEventName?: "BeforeTool";
    /** Shallow-merged into the tool's arguments (and into the next hook's input when sequential). */
    tool_input?: Record<string, unknown>;
    /** LLxprt only, and only when a single hook runs; prefer the top-level `decision`. */
    permissionDecision?: "allow" | "deny" | "block" | "ask";
    permissionDecisionReason?: string;
  };
}

export interface AfterToolOutput extends HookOutput {
  hookSpecificOutput?: { hookEventName?: "AfterTool"; additionalContext?: string; tool_output?: string };
}

export interface BeforeAgentOutput extends HookOutput {
  hookSpecificOutput?: { hookEventName?: "BeforeAgent"; additionalContext?: string };
}

export interface AfterAgentOutput extends HookOutput {
  hookSpecificOutput?: { hookEventName?: "AfterAgent"; clearContext?: boolean };
}

export interface SessionStartOutput extends HookOutput {
  hookSpecificOutput?: { hookEventName?: "SessionStart"; additionalContext?: string };
}

export interface NotificationOutput {
  suppressOutput?: boolean;
  systemMessage?: string;
}

export type SessionEndOutput = HookOutput;

export interface PreCompressOutput {
  suppressOutput?: boolean;
  systemMessage?: string;
}

export interface BeforeModelOutput extends HookOutput {
  hookSpecificOutput?: { hookEventName?: "BeforeModel"; llm_request?: Partial<LLMRequest>; llm_response?: LLMResponse };
}

export interface AfterModelOutput extends HookOutput {
  hookSpecificOutput?: { hookEventName?: "AfterModel"; llm_response?: Partial<LLMResponse> };
}

export interface BeforeToolSelectionOutput extends HookOutput {
  hookSpecificOutput?: { hookEventName?: "BeforeToolSelection"; toolConfig?: HookToolConfig };
}

/** Input type per event name. */
export interface HookInputs {
  BeforeTool: BeforeToolInput;
  AfterTool: AfterToolInput;
  BeforeAgent: BeforeAgentInput;
  AfterAgent: AfterAgentInput;
  Notification: NotificationInput;
  SessionStart: SessionStartInput;
  SessionEnd: SessionEndInput;
  PreCompress: PreCompressInput;
  BeforeModel: BeforeModelInput;
  AfterModel: AfterModelInput;
  BeforeToolSelection: BeforeToolSelectionInput;
}

/** Output type per event name. */
export interface HookOutputs {
  BeforeTool: BeforeToolOutput;
  AfterTool: AfterToolOutput;
  BeforeAgent: BeforeAgentOutput;
  AfterAgent: AfterAgentOutput;
  Notification: NotificationOutput;
  SessionStart: SessionStartOutput;
  SessionEnd: SessionEndOutput;
  PreCompress: PreCompressOutput;
  BeforeModel: BeforeModelOutput;
  AfterModel: AfterModelOutput;
  BeforeToolSelection: BeforeToolSelectionOutput;
}

/** An action for event `E`: may return nothing (allow, no changes). */
export type HookAction<E extends HookEventName> = (input: HookInputs[E]) => HookOutputs[E] | undefined | void;
