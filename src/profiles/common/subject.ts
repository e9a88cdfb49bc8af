/**
 * Reading a decision's subject and a hook's reason out of native JSON (EventProfile `subjectOf`,
 * `reasonOf`): the field names the agents use for a tool call's command and path, and for the text
 * that explains a verdict. Pure; values are returned raw (chain/decision.ts redacts and bounds them).
 */
import type { NativeObject, SubjectFacts } from "../types.js";

/** Keys a tool's input names its command line with (Gemini `run_shell_command`, Claude `Bash`, …). */
const COMMAND_KEYS = ["command", "cmd", "commandLine"] as const;
/** Keys a tool's input names the file or directory it touches with. */
const PATH_KEYS = ["file_path", "filePath", "absolute_path", "path", "notebook_path", "dir_path", "directory", "target_file"] as const;
/**
 * What file-editor tools (OpenHands `file_editor`, goose `developer__text_editor`) put in their `command`
 * argument: the editor operation, not a command line. Beside a path it is left out of the subject, so
 * the subject (and its summary) names the file the call touches.
 */
const EDITOR_OPERATIONS: ReadonlySet<string> = new Set(["view", "create", "write", "str_replace", "insert", "undo_edit"]);

function isObject(value: unknown): value is NativeObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function firstString(object: NativeObject, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = object[key];
    if (typeof value === "string" && value !== "") return value;
  }
  return undefined;
}

/**
 * A tool call's subject: `tool` from `toolName`, and the command and path from the tool's arguments
 * `toolInput` (whichever are there). Not a tool call (no name) ⇒ `{ kind: "event" }`.
 *
 * @example
 * ```ts
 * toolSubject("run_shell_command", { command: "rm -rf /" }); // { kind: "tool", tool: "run_shell_command", command: "rm -rf /" }
 * ```
 */
export function toolSubject(toolName: unknown, toolInput: unknown): SubjectFacts {
  if (typeof toolName !== "string" || toolName === "") return { kind: "event" };
  const args = isObject(toolInput) ? toolInput : {};
  const path = firstString(args, PATH_KEYS);
  const named = firstString(args, COMMAND_KEYS);
  const command = path !== undefined && named !== undefined && EDITOR_OPERATIONS.has(named) ? undefined : named;
  return { kind: "tool", tool: toolName, ...(command !== undefined ? { command } : {}), ...(path !== undefined ? { path } : {}) };
}

/** A prompt's subject (digested by chain/decision.ts; the text is never kept); not a string ⇒ the event. */
export function promptSubject(prompt: unknown): SubjectFacts {
  return typeof prompt === "string" ? { kind: "prompt", prompt } : { kind: "event" };
}

/**
 * The first non-empty string among `paths` in `output` (a path is a top-level key or `a.b`): where a
 * profile's outputs put the text that explains their verdict.
 *
 * @example
 * ```ts
 * reasonAt({ hookSpecificOutput: { permissionDecisionReason: "no" } }, ["reason", "hookSpecificOutput.permissionDecisionReason"]); // "no"
 * ```
 */
export function reasonAt(output: NativeObject, paths: readonly string[]): string | undefined {
  for (const path of paths) {
    const dot = path.indexOf(".");
    const value = dot < 0 ? output[path] : (isObject(output[path.slice(0, dot)]) ? (output[path.slice(0, dot)] as NativeObject)[path.slice(dot + 1)] : undefined);
    if (typeof value === "string" && value !== "") return value;
  }
  return undefined;
}
