/*
 * Sandboxed port of an imported llxprt command hook (hooks.AfterModel[0].hooks[0]).
 * Event AfterModel.
 * Original command: /bin/sh -c 'cat > /dev/null'
 *
 * Move the script's logic here: the function receives exactly the JSON the script read on stdin and
 * returns exactly the JSON it would print. Until then it allows everything.
 */
import type { HookOutput, NativeInput } from "vcp-hooks/profiles/llxprt";

export function aftermodelAllHook(input: NativeInput): HookOutput {
  void input;
  return {};
}
