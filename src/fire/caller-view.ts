/*
 * The runtime addresses sessions by key (pipeline/access.ts `sessionKey`: ids are per owner); what
 * leaves the runtime names them as the caller does: the bare `session_id`, and the `owner` apart.
 */
import type { LifecycleEvent } from "../observe/events.js";
import { keyParts } from "../pipeline/access.js";

/** A session hook as a caller sees it: its `session_id` is the caller-facing id, not the runtime's key. */
export function callerHook<T extends object>(hook: T): T {
  const sessionId = (hook as { session_id?: string }).session_id;
  if (sessionId === undefined) return hook;
  const { id } = keyParts(sessionId);
  return id === sessionId ? hook : Object.freeze({ ...hook, session_id: id });
}

/**
 * The registry knows sessions by key (pipeline/access.ts): its events leave the runtime with the
 * caller-facing `session_id` and the session's `owner`, like every other view.
 */
export function withCallerSessionId(event: LifecycleEvent): LifecycleEvent {
  if (event.event !== "hook.registered" && event.event !== "hook.deregistered") return event;
  if (event.payload.session_id === undefined) return event;
  const { id, owner } = keyParts(event.payload.session_id);
  return { event: event.event, payload: { ...event.payload, session_id: id, ...(owner !== null ? { owner } : {}) } } as LifecycleEvent;
}
