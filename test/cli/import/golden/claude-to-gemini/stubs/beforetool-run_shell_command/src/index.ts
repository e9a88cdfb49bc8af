/*
 * Sandboxed port of an imported claude command hook (hooks.PreToolUse[0].hooks[0]).
 * Event BeforeTool, matcher ^(?:run_shell_command)$.
 * Original command: "$CLAUDE_PROJECT_DIR"/.claude/hooks/block-rm.sh
 *
 * Move the script's logic here: the function receives exactly the JSON the script read on stdin and
 * returns exactly the JSON it would print. Until then it allows everything.
 */
// Narrow HookInput to the event's own input type (e.g. PreToolUseInput) to read its fields.
import type { HookInput, HookOutput } from "vcp-hooks/profiles/gemini-cli";

export function beforetoolRunShellCommandHook(input: HookInput): HookOutput {
  void input;
  return {};
}
