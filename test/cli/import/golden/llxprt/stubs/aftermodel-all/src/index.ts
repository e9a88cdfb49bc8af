/*
 * Sandboxed port of an imported llxprt command hook (hooks.AfterModel[0].hooks[0]).
 * Event AfterModel.
 * Original command: /bin/sh -c 'cat > /dev/null'
 *
 * Move the script's logic here: the function receives exactly the JSON the script read on stdin and
 * returns exactly the JSON it would print. Until then it allows everything.
 */
// Narrow HookInput to the event's own input type (e.g. PreToolUseInput) to read its fields.
import type { HookInput, HookOutput } from "vcp-hooks/profiles/llxprt";

export function aftermodelAllHook(input: HookInput): HookOutput {
  void input;
  return {};
}
