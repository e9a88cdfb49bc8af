/*
 * Sandboxed port of an imported llxprt command hook (hooks.BeforeTool[0].hooks[0]).
 * Event BeforeTool, matcher run_shell_command|write_file.
 * Original command: $LLXPRT_PROJECT_DIR/.llxprt/hooks/policy.sh
 *
 * Move the script's logic here: the function receives exactly the JSON the script read on stdin and
 * returns exactly the JSON it would print. Until then it allows everything.
 */
// Narrow HookInput to the event's own input type (e.g. PreToolUseInput) to read its fields.
import type { HookInput, HookOutput } from "vcp-hooks/profiles/llxprt";

export function policyHook(input: HookInput): HookOutput {
  void input;
  return {};
}
