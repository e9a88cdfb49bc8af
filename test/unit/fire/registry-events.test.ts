// The registry's events leave with caller-facing session ids and owners (never the runtime's key),
// and registrations are audited; an audit write that fails is logged, the event still goes out.
import { expect, test } from "vitest";
import { registryEventSink } from "../../../src/fire/registry-events.js";
import { sessionKey } from "../../../src/pipeline/access.js";
import type { AuditTrail } from "../../../src/fire/audit-trail.js";
import type { LifecycleEvent, Logger } from "../../../src/observe/events.js";

test("a session hook's registration goes to the bus and the audit log as the caller names its session", async () => {
  const emitted: LifecycleEvent[] = [];
  const audited: LifecycleEvent[] = [];
  const errors: string[] = [];
  const audit = { recordRegistry: async (e: LifecycleEvent) => void audited.push(e) } as unknown as AuditTrail;
  const logger = { error: (_: unknown, msg: string) => void errors.push(msg) } as unknown as Logger;
  const emit = registryEventSink({ bus: { emit: (e) => void emitted.push(e) }, audit, logger });
  const key = sessionKey("app-a", "s1");
  emit({ event: "hook.registered", payload: { hook: "watch", profile: "vcp", event: "pre_inject", scope: "session", session_id: key, bundle: "b", priority: 50, principal: "app-a" } });
  await Promise.resolve();
  expect(emitted).toEqual([{ event: "hook.registered", payload: expect.objectContaining({ session_id: "s1", owner: "app-a" }) }]);
  expect(audited).toEqual(emitted);

  const failing = { recordRegistry: async () => Promise.reject(new Error("disk full")) } as unknown as AuditTrail;
  const emit2 = registryEventSink({ bus: { emit: (e) => void emitted.push(e) }, audit: failing, logger });
  emit2({ event: "hook.deregistered", payload: { hook: "watch", profile: "vcp", event: "pre_inject", scope: "deployment", bundle: "b", principal: "ops" } });
  await new Promise((r) => setTimeout(r, 0));
  expect(emitted).toHaveLength(2);
  expect(errors).toEqual(["audit: registry record failed"]);
});
