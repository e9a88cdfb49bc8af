/*
 * Sandboxed port of an imported repo-yaml command hook (skill-activation.yaml: handler.command).
 * Event UserPromptSubmit.
 * Original command: ./scripts/hooks/skill_activation_prompt.sh
 *
 * Move the script's logic here: the function receives exactly the JSON the script read on stdin and
 * returns exactly the JSON it would print. Until then it allows everything.
 */
import type { HookOutput, NativeInput } from "vcp-hooks/profiles/repo-yaml";

export function skillActivationHook(input: NativeInput): HookOutput {
  void input;
  return {};
}
