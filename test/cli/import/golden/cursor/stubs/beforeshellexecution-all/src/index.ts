/*
 * Sandboxed port of an imported cursor command hook (hooks.beforeShellExecution[0].hooks[0]).
 * Event beforeShellExecution.
 * Original command: .cursor/hooks/block-rm.sh
 *
 * Move the script's logic here: the function receives exactly the JSON the script read on stdin and
 * returns exactly the JSON it would print. Until then it allows everything.
 */
import type { HookOutput, NativeInput } from "vcp-hooks/profiles/cursor";

export function beforeshellexecutionAllHook(input: NativeInput): HookOutput {
  void input;
  return {};
}
