/**
 * The input schemas of VS Code's built-in agent tools, by the name a hook reads in `tool_name`, as
 * data (JSON Schema, the form VS Code itself declares and validates them in). VS Code checks the
 * `updatedInput` a PreToolUse hook returns against the tool's schema and discards one that does not
 * fit, keeping the hook's decision (vscode-copilot-chat `ChatHookService.executePreToolUseHook` →
 * `validateToolInput`, ajv): the tool then runs with its original input. The vscode profile makes the
 * same check per hook, before a rewrite becomes the answer (index.ts `checkOutput`), so a rewrite
 * that would be dropped is the hook's invalid output instead.
 *
 * Sources (the property names, types and required lists are copied as facts; descriptions left out):
 * - {@link COPILOT_CHAT}: the tools the Copilot Chat extension contributes, from its package.json
 *   `contributes.languageModelTools[].inputSchema`. A hook sees them under the names the model calls
 *   them by (`copilot_readFile` → `read_file`: src/extension/tools/common/toolNames.ts `ToolName`),
 *   the name `props.toolCall.name` that toolCalling.tsx passes to the hook.
 * - {@link VSCODE_CORE}: `run_in_terminal`, VS Code's own terminal tool.
 *
 * None of these schemas forbids unknown properties (no `additionalProperties: false`), so neither does
 * the check. VS Code's ajv coerces types (`coerceTypes: true`: `"false"` passes as a boolean); this
 * check does not — a rewrite carries the types the schema names. Tools not listed here (MCP servers,
 * other extensions) get the object check of `decode` only: their schemas live in VS Code.
 *
 * @module
 */
import type { ValidateFunction } from "ajv";
import { compileJsonSchema, describeSchemaError, type JsonSchema, type SchemaProblem } from "../../model/json-schema.js";

/** microsoft/vscode-copilot-chat 0.42.0 (commit 31acd00a, 2026-03-29; engines vscode ^1.111.0), package.json. */
const COPILOT_CHAT = "vscode-copilot-chat 0.42.0 package.json";
/**
 * microsoft/vscode src/vs/workbench/contrib/terminalContrib/chatAgentTools/browser/tools/
 * runInTerminalTool.ts `createRunInTerminalToolData`, the 2026 form with `goal` and `timeout` (and the
 * two `requestUnsandboxed…` properties it adds when the terminal sandbox is on). Releases before `goal`
 * required only `command`, `explanation` and `isBackground`; the newest, stricter list is kept: a
 * rewrite VS Code drops runs the original command under the hook's decision, the unsafe direction.
 */
const VSCODE_CORE = "microsoft/vscode runInTerminalTool.ts (2026)";

const text = { type: "string" } as const;
const number = { type: "number" } as const;
const flag = { type: "boolean" } as const;
const object = (properties: Record<string, JsonSchema>, required: readonly string[]): JsonSchema => ({ type: "object", properties, required });

/** One tool's input schema and where it was read. */
interface ToolSchema {
  readonly source: string;
  readonly schema: JsonSchema;
}

export const VSCODE_TOOL_SCHEMAS: Readonly<Record<string, ToolSchema>> = Object.freeze({
  run_in_terminal: {
    source: VSCODE_CORE,
    schema: object(
      { command: text, explanation: text, goal: text, isBackground: flag, timeout: number, requestUnsandboxedExecution: flag, requestUnsandboxedExecutionReason: text },
      ["command", "explanation", "goal", "isBackground"],
    ),
  },
  // copilot_createFile
  create_file: { source: COPILOT_CHAT, schema: object({ filePath: text, content: text }, ["filePath", "content"]) },
  // copilot_readFile
  read_file: { source: COPILOT_CHAT, schema: object({ filePath: text, startLine: number, endLine: number }, ["filePath", "startLine", "endLine"]) },
  // copilot_replaceString
  replace_string_in_file: { source: COPILOT_CHAT, schema: object({ filePath: text, oldString: text, newString: text }, ["filePath", "oldString", "newString"]) },
  // copilot_multiReplaceString
  multi_replace_string_in_file: {
    source: COPILOT_CHAT,
    schema: object(
      { explanation: text, replacements: { type: "array", items: object({ filePath: text, oldString: text, newString: text }, ["filePath", "oldString", "newString"]), minItems: 1 } },
      ["explanation", "replacements"],
    ),
  },
  // copilot_insertEdit
  insert_edit_into_file: { source: COPILOT_CHAT, schema: object({ explanation: text, filePath: text, code: text }, ["explanation", "filePath", "code"]) },
  // copilot_applyPatch
  apply_patch: { source: COPILOT_CHAT, schema: object({ input: text, explanation: text }, ["input", "explanation"]) },
  // copilot_fetchWebPage
  fetch_webpage: { source: COPILOT_CHAT, schema: object({ urls: { type: "array", items: text }, query: text }, ["urls", "query"]) },
  // copilot_createDirectory
  create_directory: { source: COPILOT_CHAT, schema: object({ dirPath: text }, ["dirPath"]) },
  // copilot_listDirectory
  list_dir: { source: COPILOT_CHAT, schema: object({ path: text }, ["path"]) },
});

// Compiled once, at load (STYLE.md: never per call).
const VALIDATORS: ReadonlyMap<string, ValidateFunction> = new Map(Object.entries(VSCODE_TOOL_SCHEMAS).map(([name, { schema }]) => [name, compileJsonSchema(schema)]));

/**
 * What is wrong with `input` as the input of VS Code's tool `toolName`, its field rooted at `root`;
 * `undefined` when it fits or the tool's schema is not known here.
 *
 * @example
 * ```ts
 * toolInputProblem("create_file", { filePath: "/p/a.ts" }, "updatedInput");
 * // { field: "updatedInput.content", rule: "is required" }
 * toolInputProblem("mcp_github_create_issue", { title: 42 }, "updatedInput"); // undefined
 * ```
 */
export function toolInputProblem(toolName: string, input: unknown, root: string): SchemaProblem | undefined {
  const validate = VALIDATORS.get(toolName);
  if (validate === undefined || validate(input)) return undefined;
  return describeSchemaError(validate.errors, root, input);
}
