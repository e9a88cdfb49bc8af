/*
 * Sandboxed port of an imported ai-memory command hook (hook[2]).
 * Event pre_recall.
 * Original command: scripts/pii-guard
 *
 * Move the script's logic here: the function receives exactly the JSON the script read on stdin and
 * returns exactly the JSON it would print. Until then it allows everything.
 */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type HookInput = { [key: string]: Json };
type HookOutput = { [key: string]: Json };

export function preRecall3Hook(input: HookInput): HookOutput {
  void input;
  return {"action":"allow"};
}
