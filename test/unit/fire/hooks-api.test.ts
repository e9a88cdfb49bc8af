// runtime.hooks (fire/hooks-api.ts) over a real registry and a stand-in session check: every member
// that names a session asks the check first (SESSION_NOT_FOUND leaves the registry untouched), a
// session's own hook of the name is switched in that session, else the deployment hook there only.
import { describe, expect, test } from "vitest";
import { createHooksApi } from "../../../src/fire/hooks-api.js";
import { resolveEnabledProfiles } from "../../../src/profiles/enabled.js";
import { sessionNotFound } from "../../../src/pipeline/errors.js";
import { createHookSwitches, createLocalHookSwitchStore } from "../../../src/registry/index.js";
import { silentLogger } from "../../../src/observe/events.js";
import { DEPLOY, def, harness, inSession } from "../registry/fixtures.js";

function setup() {
  const { registry } = harness();
  registry.register(def({ name: "mark", action: { bundle: "pii", export: "mark" } }), DEPLOY);
  registry.register(def({ name: "strip-pii" }), inSession("s1"));
  const asked: string[] = [];
  const hooks = createHooksApi({
    registry,
    switches: createHookSwitches({ registry, store: createLocalHookSwitchStore(), logger: silentLogger }),
    enabledProfiles: resolveEnabledProfiles(undefined),
    visibleKey: async (id, access) => {
      asked.push(`${id}:${access.principal?.id ?? "-"}`);
      if (id !== "s1") throw sessionNotFound(id);
      return id;
    },
    admission: { admit: async () => undefined, shared: false },
  });
  return { registry, hooks, asked };
}

describe("runtime.hooks", () => {
  test("a session the check refuses is SESSION_NOT_FOUND for chain, list and setEnabled, and nothing changes", async () => {
    const { registry, hooks, asked } = setup();
    const revision = registry.snapshot().revision;
    const who = { principal: { id: "bob", role: "client" as const } };
    await expect(hooks.chain("pre_inject", "other", who)).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    await expect(hooks.list({ session: "other" }, who)).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    await expect(hooks.setEnabled("mark", false, { sessionId: "other", ...who })).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    expect(asked).toEqual(["other:bob", "other:bob", "other:bob"]);
    expect(registry.snapshot().revision).toBe(revision);
  });

  test("without a session nothing is asked; an unknown type is refused", async () => {
    const { hooks, asked } = setup();
    expect((await hooks.chain("pre_inject")).map((h) => h.name)).toEqual(["mark"]);
    await expect(hooks.chain("nope" as never)).rejects.toMatchObject({ code: "UNKNOWN_HOOK_TYPE" });
    expect(asked).toEqual([]);
  });

  test("setEnabled in a session: its own hook of the name, else the deployment hook in that session only", async () => {
    const { hooks } = setup();
    expect(await hooks.setEnabled("strip-pii", false, { sessionId: "s1" })).toMatchObject({ name: "strip-pii", scope: "session", enabled: false });
    expect(await hooks.setEnabled("mark", false, { sessionId: "s1" })).toMatchObject({ name: "mark", scope: "deployment", enabled: false });
    expect((await hooks.chain("pre_inject", "s1")).map((h) => [h.name, h.enabled])).toEqual([["mark", false], ["strip-pii", false]]);
    expect((await hooks.chain("pre_inject")).map((h) => [h.name, h.enabled])).toEqual([["mark", true]]);
  });
});
