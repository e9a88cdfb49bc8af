/*
 * Sandboxed port of an imported repo-yaml command hook (skill-activation.yaml: handler.command).
 * Event UserPromptSubmit.
 * Original command: ./scripts/hooks/skill_activation_prompt.sh
 *
 * Move the script's logic here: the function receives exactly the JSON the script read on stdin and
 * returns exactly the JSON it would print. Until then it allows everything.
 */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type HookInput = { [key: string]: Json };
type HookOutput = { [key: string]: Json };

export function skillActivationHook(input: HookInput): HookOutput {
  void input;
  return {};
}
