/*
 * Sandboxed port of an imported codex command hook (hooks.UserPromptSubmit[0].hooks[0]).
 * Event UserPromptSubmit.
 * Original command: .codex/hooks/inject-context.sh
 *
 * Move the script's logic here: the function receives exactly the JSON the script read on stdin and
 * returns exactly the JSON it would print. Until then it allows everything.
 */
import type { HookOutput, NativeInput } from "vcp-hooks/profiles/codex";

export function userpromptsubmitAllHook(input: NativeInput): HookOutput {
  void input;
  return {};
}
