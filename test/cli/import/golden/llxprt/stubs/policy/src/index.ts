/*
 * Sandboxed port of an imported llxprt command hook (hooks.BeforeTool[0].hooks[0]).
 * Event BeforeTool, matcher run_shell_command|write_file.
 * Original command: $LLXPRT_PROJECT_DIR/.llxprt/hooks/policy.sh
 *
 * Move the script's logic here: the function receives exactly the JSON the script read on stdin and
 * returns exactly the JSON it would print. Until then it allows everything.
 */
import type { HookOutput, NativeInput } from "vcp-hooks/profiles/llxprt";

export function policyHook(input: NativeInput): HookOutput {
  void input;
  return {};
}
