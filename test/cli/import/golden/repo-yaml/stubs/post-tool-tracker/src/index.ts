/*
 * Sandboxed port of an imported repo-yaml command hook (post-tool-tracker.yaml: handler.command).
 * Event PostAbilityCall.
 * Original command: ./scripts/hooks/post_tool_use_tracker.sh
 *
 * Move the script's logic here: the function receives exactly the JSON the script read on stdin and
 * returns exactly the JSON it would print. Until then it allows everything.
 */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type HookInput = { [key: string]: Json };
type HookOutput = { [key: string]: Json };

export function postToolTrackerHook(input: HookInput): HookOutput {
  void input;
  return {};
}
