/*
 * Sandboxed port of an imported ai-memory command hook (hook[2]).
 * Event pre_recall.
 * Original command: scripts/pii-guard
 *
 * Move the script's logic here: the function receives exactly the JSON the script read on stdin and
 * returns exactly the JSON it would print. Until then it allows everything.
 */
import type { HookOutput, NativeInput } from "vcp-hooks/profiles/ai-memory";

export function preRecall3Hook(input: NativeInput): HookOutput {
  void input;
  return {"action":"allow"};
}
