/*
 * Sandboxed port of an imported cursor command hook (hooks.preToolUse[0].hooks[0]).
 * Event preToolUse, matcher Shell|Write.
 * Original command: .cursor/hooks/block-rm.sh
 *
 * Move the script's logic here: the function receives exactly the JSON the script read on stdin and
 * returns exactly the JSON it would print. Until then it allows everything.
 */
// Narrow HookInput to the event's own input type (e.g. PreToolUseInput) to read its fields.
import type { HookInput, HookOutput } from "vcp-hooks/profiles/cursor";

export function pretooluseShellWriteHook(input: HookInput): HookOutput {
  void input;
  return {};
}
