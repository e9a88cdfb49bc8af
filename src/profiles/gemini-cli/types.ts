/**
 * Author types of the `gemini-cli` profile: `import type { BeforeToolInput, HookOutput } from
 * "vcp-hooks/profiles/gemini-cli"`. An action receives exactly what a Gemini CLI command hook reads on
 * stdin and returns exactly what it would print.
 *
 * @example
 * ```ts
 * import type { BeforeToolInput, BeforeToolOutput } from "vcp-hooks/profiles/gemini-cli";
 * export const guard = (input: BeforeToolInput): BeforeToolOutput =>
 *   input.tool_name === "run_shell_command" ? { decision: "block", reason: "no shell" } : {};
 * ```
 */
export type * from "../gemini-family/types.js";
