// The hook switch port (src/registry/switches.ts HookSwitchStore) has two adapters: in memory
// (registry/switches-local.ts) and Redis (store/switches.ts). The switch rule (createHookSwitches)
// means the same with either only if both keep and read switches alike: the same cases run against
// each — what is kept, what a later switch replaces, the rule over the store (applied, recorded,
// undone when the store refuses, carried to a new revision of the hook) — the Redis one on a real
// redis-server. Then what only a shared store does: a switch is announced to every listener, and a
// session's switch is kept only while the session is open in the store.
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, test } from "vitest";
import { VcpError } from "../../../src/errors.js";
import { silentLogger } from "../../../src/observe/events.js";
import { createHookSwitches, createLocalHookSwitchStore, type HookSwitchStore } from "../../../src/registry/index.js";
import { createRedisHookSwitchStore, parseSessionSwitches } from "../../../src/store/switches.js";
import { connectStore, type StoreConnection } from "../../../src/store/index.js";
import { DEPLOY, OPERATOR, def, harness, inSession } from "../../unit/registry/fixtures.js";
import { useRedisStore } from "../../support/redis-store.js";
import { waitFor } from "../../support/replicas.js";

const redis = useRedisStore("switchport");

const opened: StoreConnection[] = [];
afterAll(async () => {
  for (const c of opened) await c.close();
});

// A fresh prefix per Redis store (its own connection, as a replica has): each starts empty, as a fresh local one does.
async function freshRedisStore(): Promise<HookSwitchStore> {
  const connection = await connectStore({ url: redis.url(), prefix: `sw-${randomUUID().slice(0, 8)}`, connectTimeoutMs: 5000, commandTimeoutMs: 2000, maxBackoffMs: 1000, logger: silentLogger });
  opened.push(connection);
  return createRedisHookSwitchStore(connection);
}

const adapters: Array<[string, () => Promise<HookSwitchStore>]> = [
  ["in memory", async () => createLocalHookSwitchStore()],
  ["redis", freshRedisStore],
];

/** The store, failing every write once `down` is set (a Redis that stopped answering). */
function failing(store: HookSwitchStore) {
  const state = { down: false };
  const fail = () => {
    throw new VcpError("STORE_UNAVAILABLE", "the shared store (Redis) did not answer", { operation: "recording a hook switch" });
  };
  const wrapped: HookSwitchStore = {
    ...store,
    put: async (hook, enabled) => (state.down ? fail() : store.put(hook, enabled)),
    putInSession: async (key, change) => (state.down ? fail() : store.putInSession(key, change)),
  };
  return { store: wrapped, state };
}

describe.each(adapters)("hook switch port: %s", (_name, make) => {
  test("a deployment-wide switch is kept by hook name; a later one replaces it", async () => {
    const store = await make();
    expect(await store.read()).toEqual(new Map());
    await store.put("a", false);
    await store.put("b", true);
    await store.put("a", true);
    await store.put("c", false);
    expect(await store.read()).toEqual(new Map([["a", true], ["b", true], ["c", false]]));
  });

  test("the rule over the store: applied here and recorded; a new revision of the hook keeps it; a refused record undoes it", async () => {
    const { store, state } = failing(await make());
    // As the runtime wires them: the registry asks the switches, created just after it.
    const { registry } = harness({ deploymentSwitch: (name) => switches.deploymentSwitch(name) });
    const switches = createHookSwitches({ registry, store, logger: silentLogger });
    await switches.start();
    registry.register(def({ name: "a" }), DEPLOY);
    registry.register(def({ name: "b" }), DEPLOY);

    expect(await switches.set("a", false, DEPLOY)).toMatchObject({ name: "a", enabled: false });
    expect((await store.read()).get("a")).toBe(false);
    // A hook of that name registered again (a new bundle revision) starts switched off.
    registry.replace(["a"], [def({ name: "a", priority: 10 })], DEPLOY);
    expect(registry.snapshot().find("a", "deployment")).toMatchObject({ priority: 10, enabled: false });

    // In one session only: the deployment hook there.
    registry.register(def({ name: "log" }), inSession("s1"));
    await switches.set("b", false, { scope: "deployment", sessionId: "s1", principal: OPERATOR });
    expect(registry.snapshot().chain("pre_inject", "s1").hooks.find((p) => p.hook.name === "b")?.hook.enabled).toBe(false);
    expect(registry.snapshot().find("b", "deployment")?.enabled).toBe(true);

    // The store refuses: nothing is switched, here or there, and the caller hears why.
    state.down = true;
    await expect(switches.set("a", true, DEPLOY)).rejects.toMatchObject({ code: "STORE_UNAVAILABLE" });
    await expect(switches.set("log", false, inSession("s1"))).rejects.toMatchObject({ code: "STORE_UNAVAILABLE" });
    state.down = false;
    expect(registry.snapshot().find("a", "deployment")?.enabled).toBe(false);
    expect(registry.snapshot().find("log", "session", "s1")?.enabled).toBe(true);
    expect((await store.read()).get("a")).toBe(false);
    // An unknown hook is refused before anything is recorded.
    await expect(switches.set("nope", false, DEPLOY)).rejects.toMatchObject({ code: "UNKNOWN_HOOK" });
    expect((await store.read()).has("nope")).toBe(false);
    await switches.close();
  });
});

describe("hook switch port: what only the shared store does", () => {
  test("every replica's listener hears a switch, and a replica's rule applies it to its registry", async () => {
    const store = await freshRedisStore();
    const { registry } = harness();
    registry.register(def({ name: "a" }), DEPLOY);
    const switches = createHookSwitches({ registry, store, logger: silentLogger });
    await switches.start();
    let heard = 0;
    const stop = await store.onChange(() => void heard++);
    await store.put("a", false);
    await waitFor("the switch to be announced", () => heard > 0);
    await waitFor("the registry to apply it", () => registry.snapshot().find("a", "deployment")?.enabled === false);
    expect(switches.deploymentSwitch("a")).toBe(false);
    await stop();
    await switches.close();
  });

  test("a session's switch is kept only while the session is open in the store, in the session's own hash", async () => {
    const connection = redis();
    const store = createRedisHookSwitchStore(connection);
    const key = `app/${randomUUID()}`;
    expect(await store.putInSession(key, { hook: "watch", scope: "session", enabled: false })).toBe(false);
    expect(await connection.run("test", (r) => r.exists(connection.keys.session(key, "switches")))).toBe(0);
    await connection.run("test", (r) => r.hset(connection.keys.session(key, "record"), "rec", "{}"));
    expect(await store.putInSession(key, { hook: "watch", scope: "session", enabled: false })).toBe(true);
    expect(await store.putInSession(key, { hook: "mark", scope: "deployment", enabled: false })).toBe(true);
    expect(await store.putInSession(key, { hook: "watch", scope: "session", enabled: true })).toBe(true);
    const flat = await connection.run("test", (r) => r.hgetall(connection.keys.session(key, "switches")));
    expect(parseSessionSwitches(Object.entries(flat).flat()).sort((x, y) => x.hook.localeCompare(y.hook))).toEqual([
      { hook: "mark", scope: "deployment", enabled: false },
      { hook: "watch", scope: "session", enabled: true },
    ]);
    // The local store keeps no session's switches: the one registry is their only copy.
    expect(await createLocalHookSwitchStore().putInSession(key, { hook: "watch", scope: "session", enabled: false })).toBe(false);
  });
});
