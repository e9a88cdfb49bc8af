/**
 * Native input and output schemas of the Gemini CLI family, compiled once at module load (STYLE.md:
 * never compile a schema per call). Unknown keys are tolerated in both directions, as upstream does;
 * a known key of the wrong type is refused with a message naming it.
 *
 * @module
 */
import { z } from "zod";
import { baseInputShape, matchedField } from "../common/native.js";
import type { HookEventName } from "./types.js";

export const GEMINI_EVENTS = [
  "BeforeTool",
  "AfterTool",
  "BeforeAgent",
  "AfterAgent",
  "Notification",
  "SessionStart",
  "SessionEnd",
  "PreCompress",
  "BeforeModel",
  "AfterModel",
  "BeforeToolSelection",
] as const satisfies readonly HookEventName[];

const record = z.record(z.string(), z.unknown());

function base(event: HookEventName) {
  return { ...baseInputShape(event), timestamp: z.string().optional() };
}

const mcpContext = z.looseObject({ server_name: z.string(), tool_name: z.string() });
const llmRequest = z.looseObject({
  model: z.string().optional(),
  messages: z.array(z.looseObject({ role: z.string(), content: z.string() })).optional(),
  config: record.optional(),
});
const llmResponse = z.looseObject({ text: z.string().optional(), candidates: z.array(z.unknown()).optional() });

const INPUTS: Readonly<Record<HookEventName, z.ZodType>> = {
  BeforeTool: z.looseObject({ ...base("BeforeTool"), tool_name: matchedField(), tool_input: record, mcp_context: mcpContext.optional() }),
  AfterTool: z.looseObject({
    ...base("AfterTool"),
    tool_name: matchedField(),
    tool_input: record,
    tool_response: record,
    mcp_context: mcpContext.optional(),
  }),
  BeforeAgent: z.looseObject({ ...base("BeforeAgent"), prompt: z.string() }),
  AfterAgent: z.looseObject({ ...base("AfterAgent"), prompt: z.string(), prompt_response: z.string(), stop_hook_active: z.boolean().optional() }),
  Notification: z.looseObject({ ...base("Notification"), notification_type: z.string(), message: z.string(), details: record.optional() }),
  SessionStart: z.looseObject({ ...base("SessionStart"), source: z.enum(["startup", "resume", "clear"]) }),
  SessionEnd: z.looseObject({ ...base("SessionEnd"), reason: z.enum(["exit", "clear", "logout", "prompt_input_exit", "other"]) }),
  PreCompress: z.looseObject({ ...base("PreCompress"), trigger: z.enum(["manual", "auto"]) }),
  BeforeModel: z.looseObject({ ...base("BeforeModel"), llm_request: llmRequest }),
  AfterModel: z.looseObject({ ...base("AfterModel"), llm_request: llmRequest, llm_response: llmResponse }),
  BeforeToolSelection: z.looseObject({ ...base("BeforeToolSelection"), llm_request: llmRequest }),
};

export function inputSchemaOf(event: HookEventName): z.ZodType {
  return INPUTS[event];
}

const toolConfig = z.looseObject({
  mode: z.enum(["AUTO", "ANY", "NONE"]).optional(),
  allowedFunctionNames: z.array(z.string()).optional(),
});

/** `hookSpecificOutput`: the known fields typed, the rest kept. */
const specific = z.looseObject({
  hookEventName: z.string().optional(),
  tool_input: record.optional(),
  additionalContext: z.string().optional(),
  llm_request: record.optional(),
  llm_response: record.optional(),
  toolConfig: toolConfig.optional(),
  clearContext: z.boolean().optional(),
  tool_output: z.string().optional(),
  permissionDecision: z.enum(["allow", "deny", "block", "ask", "approve"]).optional(),
  permissionDecisionReason: z.string().optional(),
});

/** One output schema for every event: upstream parses every stdout with the same HookOutput shape. */
export const OUTPUT_SCHEMA = z.looseObject({
  continue: z.boolean().optional(),
  stopReason: z.string().optional(),
  suppressOutput: z.boolean().optional(),
  systemMessage: z.string().optional(),
  decision: z.enum(["ask", "block", "deny", "approve", "allow"]).nullable().optional(),
  reason: z.string().optional(),
  hookSpecificOutput: specific.optional(),
});
