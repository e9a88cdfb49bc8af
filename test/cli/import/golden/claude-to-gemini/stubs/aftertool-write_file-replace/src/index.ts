/*
 * Sandboxed port of an imported claude command hook (hooks.PostToolUse[0].hooks[0]).
 * Event AfterTool, matcher ^(?:write_file|replace)$.
 * Original command: jq -r '.tool_input.file_path' | xargs npx prettier --write
 *
 * Move the script's logic here: the function receives exactly the JSON the script read on stdin and
 * returns exactly the JSON it would print. Until then it allows everything.
 */
// Narrow HookInput to the event's own input type (e.g. PreToolUseInput) to read its fields.
import type { HookInput, HookOutput } from "vcp-hooks/profiles/gemini-cli";

export function aftertoolWriteFileReplaceHook(input: HookInput): HookOutput {
  void input;
  return {};
}
