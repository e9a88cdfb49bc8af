/*
 * Sandboxed port of an imported repo-yaml command hook (session-stop-build.yaml: handler.command).
 * Event PreAbilityCall.
 * Original command: ./scripts/hooks/session_stop_build_check.sh && echo done
 *
 * Move the script's logic here: the function receives exactly the JSON the script read on stdin and
 * returns exactly the JSON it would print. Until then it allows everything.
 */
import type { HookOutput, NativeInput } from "vcp-hooks/profiles/repo-yaml";

export function sessionStopBuildHook(input: NativeInput): HookOutput {
  void input;
  return {};
}
