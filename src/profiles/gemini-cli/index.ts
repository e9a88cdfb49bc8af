/**
 * The `gemini-cli` event profile (PROFILES §3.2): Gemini CLI's eleven hook events, native JSON in and
 * out, its planning, chaining and merge rules, pinned to the upstream commit they were read from.
 *
 * @example
 * ```ts
 * import { geminiCliProfile } from "./profiles/gemini-cli/index.js";
 * const ctx = { strict: false, settings: {} };
 * geminiCliProfile.reduce([{ decision: "allow" }, { decision: "block", reason: "no" }], "BeforeTool", ctx);
 * // { continue: true, suppressOutput: false, decision: "block", reason: "no" }
 * ```
 *
 * @module
 */
import type { CommandResult, ParsedCommand } from "../types.js";
import { createGeminiFamilyProfile } from "../gemini-family/profile.js";

export const geminiCliProfile = createGeminiFamilyProfile({
  id: "gemini-cli",
  version: "0.x",
  upstream: { repo: "google-gemini/gemini-cli", commit: "04fbf50725b94cef0a8f37be6436bd0a84dafc9b" },
});

/**
 * Read a finished Gemini CLI command hook by its exit code and output (PROFILES §3.2 table, gemini column).
 *
 * @example
 * ```ts
 * parseCommandResult({ exitCode: 2, stdout: '{"decision":"allow"}', stderr: "" }, "h", "BeforeTool");
 * // { output: { decision: "allow" } }: with Gemini CLI the JSON decides, whatever the exit code
 * ```
 */
export function parseCommandResult(result: CommandResult, hook: string, event: string): ParsedCommand {
  return geminiCliProfile.parseCommandResult(result, hook, event);
}

export type { CommandResult, ParsedCommand } from "../types.js";
export type * from "./types.js";
