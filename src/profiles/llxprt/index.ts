/**
 * The `llxprt` event profile (PROFILES §3.2): LLxprt Code's eleven hook events, native JSON in and
 * out, its planning, chaining and merge rules, pinned to the upstream commit they were read from.
 *
 * @example
 * ```ts
 * import { llxprtProfile } from "./profiles/llxprt/index.js";
 * const ctx = { strict: false, settings: {} };
 * llxprtProfile.reduce([{ decision: "allow" }, { decision: "block", reason: "no" }], "BeforeTool", ctx);
 * // { continue: true, suppressOutput: false, decision: "block", reason: "no" }
 * ```
 *
 * @module
 */
import type { CommandResult, ParsedCommand } from "../types.js";
import { createGeminiFamilyProfile } from "../gemini-family/profile.js";

export const llxprtProfile = createGeminiFamilyProfile({
  id: "llxprt",
  version: "0.x",
  upstream: { repo: "vybestack/llxprt-code", commit: "b813fc7d931091aa52adeb8bc00c5d2bd6f25a39" },
});

/**
 * Read a finished LLxprt Code command hook by its exit code and output (PROFILES §3.2 table, llxprt column).
 *
 * @example
 * ```ts
 * parseCommandResult({ exitCode: 2, stdout: '{"decision":"allow"}', stderr: "" }, "h", "BeforeTool");
 * // { output: { decision: "deny", reason: "Hook exited with code 2 without an error message" } }: stdout is ignored
 * ```
 */
export function parseCommandResult(result: CommandResult, hook: string, event: string): ParsedCommand {
  return llxprtProfile.parseCommandResult(result, hook, event);
}

export type { CommandResult, ParsedCommand } from "../types.js";
export type * from "./types.js";
