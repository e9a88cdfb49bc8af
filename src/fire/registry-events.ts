/*
 * Where the registry's lifecycle events go (registry/ emits them with session keys): out with
 * caller-facing session ids (caller-view.ts) to the event bus, and registrations and deregistrations
 * into the audit log too.
 */
import type { EventBus } from "../observe/event-bus.js";
import type { LifecycleEvent, Logger } from "../observe/events.js";
import type { AuditTrail } from "./audit-trail.js";
import { withCallerSessionId } from "./caller-view.js";

/**
 * The registry's `emit`. An audit write that fails is logged: the registry change has happened.
 *
 * @example
 * ```ts
 * const registry = createRegistry({ clock, emit: registryEventSink({ bus, audit, logger }), … });
 * ```
 */
export function registryEventSink(deps: { bus: Pick<EventBus, "emit">; audit: AuditTrail | undefined; logger: Logger }): (event: LifecycleEvent) => void {
  const { bus, audit, logger } = deps;
  return (raw) => {
    const event = withCallerSessionId(raw);
    if (audit !== undefined && (event.event === "hook.registered" || event.event === "hook.deregistered")) {
      audit.recordRegistry(event).catch((err: unknown) => logger.error({ err, event: event.event }, "audit: registry record failed"));
    }
    bus.emit(event);
  };
}
