/*
 * Sandboxed port of an imported claude command hook (hooks.PreToolUse[1].hooks[0]).
 * Event PreToolUse, matcher Edit|MultiEdit|Write.
 * Original command: python3 "$CLAUDE_PROJECT_DIR/.claude/hooks/protect_paths.py"
 *
 * Move the script's logic here: the function receives exactly the JSON the script read on stdin and
 * returns exactly the JSON it would print. Until then it allows everything.
 */
// Narrow HookInput to the event's own input type (e.g. PreToolUseInput) to read its fields.
import type { HookInput, HookOutput } from "vcp-hooks/profiles/claude-code";

export function pretooluseEditMultieditWriteHook(input: HookInput): HookOutput {
  void input;
  return {};
}
