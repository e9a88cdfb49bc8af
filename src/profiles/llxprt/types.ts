/**
 * Author types of the `llxprt` profile: `import type { BeforeToolInput, HookOutput } from
 * "vcp-hooks/profiles/llxprt"`. An action receives exactly what a LLxprt Code command hook reads on
 * stdin and returns exactly what it would print.
 *
 * @example
 * ```ts
 * import type { BeforeToolInput, BeforeToolOutput } from "vcp-hooks/profiles/llxprt";
 * export const guard = (input: BeforeToolInput): BeforeToolOutput =>
 *   input.tool_name === "run_shell_command" ? { decision: "block", reason: "no shell" } : {};
 * ```
 */
export type * from "../gemini-family/types.js";
