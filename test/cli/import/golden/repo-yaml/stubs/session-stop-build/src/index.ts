/*
 * Sandboxed port of an imported repo-yaml command hook (session-stop-build.yaml: handler.command).
 * Event PreAbilityCall.
 * Original command: ./scripts/hooks/session_stop_build_check.sh && echo done
 *
 * Move the script's logic here: the function receives exactly the JSON the script read on stdin and
 * returns exactly the JSON it would print. Until then it allows everything.
 */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type HookInput = { [key: string]: Json };
type HookOutput = { [key: string]: Json };

export function sessionStopBuildHook(input: HookInput): HookOutput {
  void input;
  return {};
}
