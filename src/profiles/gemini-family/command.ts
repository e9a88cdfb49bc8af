/**
 * How Gemini CLI and LLxprt Code read a finished command hook (PROFILES §3.2 table). Used by the
 * exec lane (§6) and the drop-in adapter (§5); pure.
 *
 * | case                     | gemini-cli                                   | llxprt                                              |
 * |--------------------------|----------------------------------------------|-----------------------------------------------------|
 * | text parsed              | stdout.trim() || stderr.trim(), any exit     | stdout JSON only on exit 0                          |
 * | exit 0 + JSON            | used                                         | used                                                |
 * | exit 0 + non-JSON text   | allow + systemMessage: text                  | same                                                |
 * | exit 0, empty            | allow, nothing else                          | same                                                |
 * | exit 1 + text            | allow + systemMessage "Warning: " + text     | stderr ⇒ same; no stderr ⇒ nothing                  |
 * | exit 2 + text            | deny, reason = text                          | stderr ⇒ deny with it; none ⇒ deny (fixed text)     |
 * | exit 2 + JSON            | the JSON decides                             | deny (stdout ignored)                               |
 * | exit ≥ 3 + text          | deny                                         | allow + "Warning: …"                                |
 * | signal / timeout         | failure (fail-open)                          | same                                                |
 *
 * @module
 */
import { exitFailure, readCommandResult, unfinishedRun } from "../common/command-result.js";
import { parseJsonObject } from "../common/native.js";
import type { CommandResult, ParsedCommand } from "../types.js";
import type { NativeObject } from "../types.js";
import type { GeminiVariant } from "./reduce.js";

export const LLXPRT_EXIT2_FALLBACK = "Hook exited with code 2 without an error message";

function plainText(text: string, exitCode: number, variant: GeminiVariant): NativeObject {
  if (exitCode === 0) return { decision: "allow", systemMessage: text };
  if (exitCode === 2 || (variant === "gemini-cli" && exitCode >= 3)) return { decision: "deny", reason: text };
  return { decision: "allow", systemMessage: `Warning: ${text}` };
}

/**
 * The native output a Gemini-family agent takes from one command hook run.
 *
 * @example
 * ```ts
 * parseGeminiCommand({ exitCode: 2, stdout: "", stderr: "no rm" }, "h", "BeforeTool", "gemini-cli",
 *   (why) => ({ decision: "allow", systemMessage: `Warning: h: ${why}` }));
 * // { output: { decision: "deny", reason: "no rm" } }
 * ```
 */
export function parseGeminiCommand(
  result: CommandResult,
  variant: GeminiVariant,
  failed: (why: string) => NativeObject,
): ParsedCommand {
  if (variant === "llxprt") {
    return readCommandResult(result, {
      failed,
      plainStdout: (text) => ({ output: plainText(text, 0, variant) }),
      exitCode(code, stderr) {
        if (code === 2) return { output: { decision: "deny", reason: stderr || LLXPRT_EXIT2_FALLBACK } };
        // Any other code: a non-blocking error; only stderr is read (none: nothing is said).
        return { output: stderr === "" ? {} : plainText(stderr, code, variant), failure: exitFailure(code, stderr) };
      },
    });
  }
  // Gemini CLI reads `stdout.trim() || stderr.trim()` whatever the exit code: not the shared rule.
  const unfinished = unfinishedRun(result);
  if (unfinished !== undefined) return { output: failed(unfinished), failure: unfinished };
  const exitCode = result.exitCode as number;
  const text = result.stdout.trim() || result.stderr.trim();
  const output = text === "" ? {} : (parseJsonObject(text) ?? plainText(text, exitCode, variant));
  return exitCode === 0 || exitCode === 2 ? { output } : { output, failure: exitFailure(exitCode, text) };
}
