import type { HookOutputEntry, NativeObject } from "../types.js";
import { BLOCKED_BY_POLICY } from "./output.js";

const LISTS = ["logs", "messages_to_user", "suggested_abilities", "suggested_documents", "follow_up_actions"] as const;

/**
 * Merge the outputs in config (file-name) order (PROFILES §3.6, §8.8): lists concatenated in order,
 * the first `new_intent` wins, `usage_recorded` is true if any hook recorded usage. On PreAbilityCall,
 * `error: "blocked_by_policy"` from a `blocking` hook (or from a hook that failed under `blocking` /
 * `fail_closed`) blocks: the answer carries that error. Any other `error` is non-fatal and becomes a
 * `warn` log naming the hook. Empty lists are left out of the answer.
 */
export function foldRepoYaml(entries: readonly HookOutputEntry[], event: string): NativeObject {
  const lists: Record<(typeof LISTS)[number], unknown[]> = {
    logs: [], messages_to_user: [], suggested_abilities: [], suggested_documents: [], follow_up_actions: [],
  };
  let newIntent: unknown;
  let usage: boolean | undefined;
  let blocked = false;
  for (const { hook, output, blocking, failed } of entries) {
    for (const key of LISTS) {
      const v = output[key];
      if (Array.isArray(v)) lists[key].push(...v);
    }
    if (newIntent === undefined && output.new_intent !== undefined) newIntent = output.new_intent;
    if (output.usage_recorded === true) usage = true;
    else if (output.usage_recorded === false && usage === undefined) usage = false;
    if (typeof output.error === "string") {
      if (event === "PreAbilityCall" && output.error === BLOCKED_BY_POLICY && (blocking === true || failed === true)) {
        blocked = true;
      } else {
        lists.logs.push({ level: "warn", message: `${hook}: error: ${output.error}` });
      }
    }
  }
  const answer: NativeObject = {};
  for (const key of LISTS) if (lists[key].length > 0) answer[key] = lists[key];
  if (newIntent !== undefined) answer.new_intent = newIntent;
  if (usage !== undefined) answer.usage_recorded = usage;
  if (blocked) answer.error = BLOCKED_BY_POLICY;
  return answer;
}
