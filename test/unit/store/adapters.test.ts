// The adapters picked from store.kind (store/adapters.ts), local side: the registry-change limit
// is the registry's own (nothing counted here), session hooks need no sync across replicas, and the
// open-session gauge is exact. The Redis side runs against a real redis-server in
// test/integration/scale-out (runtime-store, sessions, rate-limit, hooks-session-check).
import { expect, test } from "vitest";
import { implicitSessionsFor, registryAdmission, sessionStoreFor } from "../../../src/store/adapters.js";
import { harness } from "../registry/fixtures.js";
import { createHookSwitches, createLocalHookSwitchStore } from "../../../src/registry/index.js";
import { silentLogger } from "../../../src/observe/events.js";
import type { PipelineDeps } from "../../../src/pipeline/index.js";
import { constitution } from "../../support/fixtures.js";

test("the local store: no shared limit, no hook sync, an exact open-session count", async () => {
  const admission = registryAdmission(undefined, 1);
  expect(admission.shared).toBe(false);
  for (let i = 0; i < 5; i++) await admission.admit({ id: "bob", role: "client" });
  expect(implicitSessionsFor(undefined)).toEqual({});

  const { registry } = harness();
  const pipeline: PipelineDeps = {
    fire: async () => { throw new Error("no chain expected"); },
    periodicHooks: () => [],
    onRegistryChange: () => () => undefined,
    conflictStrategy: "most_restrictive",
    clock: { now: () => 0, wallNow: () => 0 },
    logger: silentLogger,
  };
  const switches = createHookSwitches({ registry, store: createLocalHookSwitchStore(), logger: silentLogger });
  const store = sessionStoreFor(undefined, { pipeline, registry, switches, logger: silentLogger, tuning: {} });
  expect(store.sessions.kind).toBe("local");
  expect(store.openSessions()).toBe(0);
  await store.sessions.open({ session_id: "s1", context: {}, constitution });
  expect(store.openSessions()).toBe(1);
  expect(await store.hooks.remember("s1", { bundle: "b", hook: "h", principal: "p" })).toBe(false);
  store.startPeriodic();
  await store.sessions.closeAll();
});
