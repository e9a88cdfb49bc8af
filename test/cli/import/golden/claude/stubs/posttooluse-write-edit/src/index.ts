/*
 * Sandboxed port of an imported claude command hook (hooks.PostToolUse[0].hooks[0]).
 * Event PostToolUse, matcher Write|Edit.
 * Original command: jq -r '.tool_input.file_path' | xargs npx prettier --write
 *
 * Move the script's logic here: the function receives exactly the JSON the script read on stdin and
 * returns exactly the JSON it would print. Until then it allows everything.
 */
import type { HookOutput, NativeInput } from "vcp-hooks/profiles/claude-code";

export function posttooluseWriteEditHook(input: NativeInput): HookOutput {
  void input;
  return {};
}
