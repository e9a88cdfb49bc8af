/*
 * Sandboxed port of an imported claude command hook (hooks.UserPromptSubmit[0].hooks[0]).
 * Event UserPromptSubmit.
 * Original command: $CLAUDE_PROJECT_DIR/.claude/hooks/inject-context.sh
 *
 * Move the script's logic here: the function receives exactly the JSON the script read on stdin and
 * returns exactly the JSON it would print. Until then it allows everything.
 */
// Narrow HookInput to the event's own input type (e.g. PreToolUseInput) to read its fields.
import type { HookInput, HookOutput } from "vcp-hooks/profiles/claude-code";

export function userpromptsubmitAllHook(input: HookInput): HookOutput {
  void input;
  return {};
}
