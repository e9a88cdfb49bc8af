import type { HookInput, HookResult, TransitionEvent } from "vcp-hooks";

/**
 * Spec §9.3 notify_mode_change. Instead of enqueueing the notification (the sandbox has no queue), it
 * returns it as the annotation `notification`; the embedding application delivers it.
 * The condition `previous_state neq null` skips the first state of a session.
 */
export function notifyModeChange(input: HookInput<TransitionEvent>): HookResult {
  const event = input.event;
  if (event.previous_state === event.new_state) {
    // Not a mode change (a re-entry of the same state): nothing to tell the user.
    return { status: "continue", annotations: { notification: null, note: `already in ${event.new_state} mode` } };
  }
  return {
    status: "continue",
    annotations: {
      notification: {
        type: "mode_change",
        session_id: input.session.id,
        from: event.previous_state,
        to: event.new_state,
        reason: event.trigger,
        message: `Switching from ${event.previous_state} to ${event.new_state} mode`,
      },
    },
  };
}
