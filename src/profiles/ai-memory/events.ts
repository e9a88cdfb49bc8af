import type { EventSpec } from "../types.js";

/** Deadline classes and their whole-chain deadlines (upstream `src/hooks/timeouts.rs`). */
export const CLASS_DEADLINES_MS = Object.freeze({ write: 5_000, read: 2_000, index: 1_000, transcript: 5_000, hot_path: 50 });
export type EventClass = keyof typeof CLASS_DEADLINES_MS;

/**
 * The 25 ai-memory v0.7 events (upstream `HookEvent`) with their class. `pre_*` events are the only
 * ones whose answer can change (`modify`) the operation; `on_compaction_rollback` and
 * `on_index_eviction` are notifications.
 */
const TABLE: ReadonlyArray<readonly [string, EventClass]> = [
  ["pre_store", "write"], ["post_store", "write"],
  ["pre_recall", "read"], ["post_recall", "read"],
  ["pre_search", "read"], ["post_search", "read"],
  ["pre_delete", "write"], ["post_delete", "write"],
  ["pre_promote", "write"], ["post_promote", "write"],
  ["pre_link", "write"], ["post_link", "write"],
  ["pre_consolidate", "write"], ["post_consolidate", "write"],
  ["pre_governance_decision", "write"], ["post_governance_decision", "write"],
  ["pre_transcript_store", "transcript"], ["post_transcript_store", "transcript"],
  ["pre_reflect", "write"], ["post_reflect", "write"],
  ["on_index_eviction", "index"],
  ["pre_archive", "write"],
  ["pre_recall_expand", "hot_path"],
  ["pre_compaction", "write"],
  ["on_compaction_rollback", "write"],
];

/** upstream `is_pre_event`: Modify is honoured only on these. */
export function isPreEvent(event: string): boolean {
  return event.startsWith("pre_");
}

export const AI_MEMORY_EVENTS: Readonly<Record<string, EventSpec>> = Object.freeze(
  Object.fromEntries(
    TABLE.map(([name, cls]) => [
      name,
      {
        matcher: "namespace",
        pre: isPreEvent(name),
        can_block: isPreEvent(name),
        modifiable: isPreEvent(name) ? ["action", "delta", "reason", "code", "prompt", "options", "default"] : ["action", "reason", "code", "prompt", "options", "default"],
        class: cls,
        chain_deadline_ms: CLASS_DEADLINES_MS[cls],
      } satisfies EventSpec,
    ]),
  ),
);
