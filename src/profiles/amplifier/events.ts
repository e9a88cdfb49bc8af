import type { EventSpec } from "../types.js";

/**
 * The 42 kernel events of amplifier-core (`crates/amplifier-core/src/events.rs`, `ALL_EVENTS`).
 * `pre` marks the events whose answer the kernel acts on before the operation (a deny stops it).
 */
const PRE = new Set([
  "session:start", "session:fork", "session:resume", "prompt:submit", "plan:start",
  "provider:request", "llm:request", "tool:pre", "context:pre_compact", "context:include",
  "execution:start", "artifact:write", "artifact:read", "approval:required", "cancel:requested",
]);

export const AMPLIFIER_EVENT_NAMES = [
  "session:start", "session:end", "session:fork", "session:resume",
  "prompt:submit", "prompt:complete",
  "plan:start", "plan:end",
  "provider:request", "provider:response", "provider:retry", "provider:error", "provider:throttle",
  "provider:tool_sequence_repaired", "provider:resolve",
  "llm:request", "llm:response",
  "content_block:start", "content_block:delta", "content_block:end",
  "thinking:delta", "thinking:final",
  "tool:pre", "tool:post", "tool:error",
  "context:pre_compact", "context:post_compact", "context:compaction", "context:include",
  "orchestrator:complete", "execution:start", "execution:end",
  "user:notification",
  "artifact:write", "artifact:read",
  "policy:violation",
  "approval:required", "approval:granted", "approval:denied",
  "cancel:requested", "cancel:completed",
  "module:on_session_ready_failed",
] as const;

/** Every handler of every event may deny, modify, inject or ask (the kernel does not restrict by event). */
function spec(name: string): EventSpec {
  return { pre: PRE.has(name), can_block: true, modifiable: ["action", "data", "approval_prompt", "approval_options"] };
}

export const AMPLIFIER_EVENTS: Readonly<Record<string, EventSpec>> = Object.freeze(
  Object.fromEntries(AMPLIFIER_EVENT_NAMES.map((name) => [name, spec(name)])),
);

/**
 * Custom events are `namespace:name`, optionally with a verbosity tier (`llm:request:debug`):
 * lower-case segments of letters, digits, `_` and `-`.
 */
const CUSTOM_EVENT = /^[a-z][a-z0-9_-]*(?::[a-z0-9][a-z0-9_-]*){1,2}$/;

/** True for one of the 42 kernel events or a well-formed custom `ns:name`. */
export function isAmplifierEvent(event: string): boolean {
  return Object.hasOwn(AMPLIFIER_EVENTS, event) || CUSTOM_EVENT.test(event);
}

/** The spec of a custom event: it may do anything a kernel event may. */
export function amplifierEventSpec(event: string): EventSpec | undefined {
  return AMPLIFIER_EVENTS[event] ?? (CUSTOM_EVENT.test(event) ? spec(event) : undefined);
}
