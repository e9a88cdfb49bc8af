/*
 * Sandboxed port of an imported gemini command hook (hooks.BeforeTool[1].hooks[0]).
 * Event BeforeTool, matcher write_file|replace.
 * Original command: node .gemini/hooks/secret-scan.js
 *
 * Move the script's logic here: the function receives exactly the JSON the script read on stdin and
 * returns exactly the JSON it would print. Until then it allows everything.
 */
// Narrow HookInput to the event's own input type (e.g. PreToolUseInput) to read its fields.
import type { HookInput, HookOutput } from "vcp-hooks/profiles/gemini-cli";

export function secretScanHook(input: HookInput): HookOutput {
  void input;
  return {};
}
