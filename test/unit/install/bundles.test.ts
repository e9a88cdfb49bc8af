// The bundle manager's decisions without a sandbox (DESIGN §3.4 hot swap, spec §6.3): in-flight
// revisions stay loaded until their chains finish, a failed install changes nothing and is recorded
// on the installed revision, a same-digest install is a no-op. Bundles run on the node:vm backend.
import { describe, expect, test } from "vitest";
import { createBundleManager, createRevisionPins } from "../../../src/install/bundles.js";
import { resolveEnabledProfiles } from "../../../src/profiles/enabled.js";
import { createRegistry } from "../../../src/registry/index.js";
import { silentLogger } from "../../../src/observe/events.js";
import type { ChainBackend } from "../../../src/pool/backend.js";
import { createVmBackend } from "../../support/vm-backend.js";
import { testBundle } from "../../support/bundles.js";
import type { BundleStore } from "../../../src/bundle/store.js";

function fakeUnloader() {
  const unloaded: string[] = [];
  return { unloaded, backend: { unloadBundle: async (digest: string) => void unloaded.push(digest) } };
}

describe("revision pins", () => {
  test("a retired revision is unloaded only after the last chain on it finishes", async () => {
    const { unloaded, backend } = fakeUnloader();
    const pins = createRevisionPins({ backend, logger: silentLogger });
    pins.pin(["sha256:a"]);
    pins.pin(["sha256:a", "sha256:b"]);
    await pins.retire("sha256:a");
    expect(unloaded).toEqual([]);
    expect(pins.inFlight("sha256:a")).toBe(2);
    pins.unpin(["sha256:a", "sha256:b"]);
    await Promise.resolve();
    expect(unloaded).toEqual([]);
    pins.unpin(["sha256:a"]);
    await Promise.resolve();
    expect(unloaded).toEqual(["sha256:a"]);
    expect(pins.inFlight("sha256:a")).toBe(0);
  });

  test("an idle revision is unloaded when retired; a revision never retired is never unloaded", async () => {
    const { unloaded, backend } = fakeUnloader();
    const pins = createRevisionPins({ backend, logger: silentLogger });
    pins.pin(["sha256:b"]);
    pins.unpin(["sha256:b"]);
    await pins.retire("sha256:c");
    await Promise.resolve();
    expect(unloaded).toEqual(["sha256:c"]);
  });

  test("a failing unload is logged, not thrown", async () => {
    const warned: unknown[] = [];
    const pins = createRevisionPins({
      backend: { unloadBundle: () => Promise.reject(new Error("gone")) },
      logger: { ...silentLogger, warn: (obj: object) => void warned.push(obj) },
    });
    await expect(pins.retire("sha256:d")).resolves.toBeUndefined();
    expect(warned).toHaveLength(1);
  });
});

const allow = () => ({ outcome: "allow" });

function manager(options: { requireSignatures?: boolean; store?: BundleStore } = {}) {
  const vm = createVmBackend();
  const unloaded: string[] = [];
  const backend: ChainBackend = { ...vm, stats: () => vm.stats(), unloadBundle: async (digest) => (unloaded.push(digest), vm.unloadBundle(digest)) };
  let clockMs = Date.parse("2026-01-01T00:00:00Z");
  const clock = { now: () => clockMs, wallNow: () => clockMs };
  const changes: string[] = [];
  /** What the shared session store would hear, in order: each swap's session hook changes, then the change settled. */
  const sessionHooks: string[] = [];
  const pins = createRevisionPins({ backend, logger: silentLogger });
  const registry = createRegistry({
    clock, emit: () => undefined, resolveAction: (ref) => bundles.resolveAction(ref), sessionHookAllowlist: ["s/mine"],
    onSessionHooksRebound: (c) => void sessionHooks.push(`${c.bundle}: dropped [${c.dropped.map((h) => `${h.session}/${h.hook}`).join(" ")}] revived [${c.revived.map((h) => `${h.session}/${h.hook}`).join(" ")}]`),
  });
  const bundles = createBundleManager({
    backend,
    registry,
    pins,
    enabledProfile: (ref) => {
      const found = resolveEnabledProfiles(undefined).get(ref.split("@")[0]!);
      if (found === undefined) throw new Error(`profile ${ref} not enabled`);
      return found;
    },
    store: options.store,
    keyring: undefined,
    requireSignatures: options.requireSignatures ?? false,
    maxBundleBytes: 1 << 20,
    metrics: { recordBundleChange: (kind) => void changes.push(kind) },
    clock,
    logger: silentLogger,
    assertOpen: () => undefined,
    onSettled: (bundle) => void sessionHooks.push(`${bundle}: settled`),
  });
  return { bundles, registry, pins, unloaded, changes, sessionHooks, tick: () => (clockMs += 1000) };
}

const v = (version: string, hooks = [{ name: "gate", type: "pre_inject" as const }]) => testBundle("b", hooks, { gate: allow }, { version });

describe("bundle manager", () => {
  test("install, same digest again is a no-op, a new revision swaps and retires the old one", async () => {
    const { bundles, unloaded, changes } = manager();
    const first = await bundles.install(v("1.0.0"), {});
    expect(first).toMatchObject({ bundle: "b", version: "1.0.0", hooks: ["gate"], session_hooks: [], signed_by: null, errors: [] });
    expect(await bundles.install(v("1.0.0"), {})).toBe(first);
    const second = await bundles.install(v("1.1.0"), {});
    expect(second.digest).not.toBe(first.digest);
    expect(unloaded).toEqual([first.digest]);
    expect(bundles.get("b")).toBe(second);
    expect(bundles.resolveAction({ bundle: "b", export: "gate", digest: first.digest })).toMatch(/not the installed one/);
    expect(bundles.resolveAction({ bundle: "b", export: "gate", digest: second.digest })).toBe(true);
    expect(changes).toEqual(["installed", "installed", "installed"]);
  });

  test("a hot swap keeps the old revision loaded while a chain on it is in flight", async () => {
    const { bundles, pins, unloaded } = manager();
    const first = await bundles.install(v("1.0.0"), {});
    pins.pin([first.digest]);
    await bundles.install(v("1.1.0"), {});
    expect(unloaded).toEqual([]);
    pins.unpin([first.digest]);
    await Promise.resolve();
    expect(unloaded).toEqual([first.digest]);
  });

  test("a lower version is VERSION_DOWNGRADE, recorded on the installed revision; allowDowngrade rolls back", async () => {
    const { bundles, changes } = manager();
    await bundles.install(v("2.0.0"), {});
    await expect(bundles.install(v("1.0.0"), {})).rejects.toMatchObject({ code: "VERSION_DOWNGRADE" });
    expect(bundles.get("b")).toMatchObject({ version: "2.0.0", errors: [{ code: "VERSION_DOWNGRADE" }] });
    await expect(bundles.install(v("1.0.0"), { allowDowngrade: true })).resolves.toMatchObject({ version: "1.0.0", errors: [] });
    expect(changes).toEqual(["installed", "failed", "installed"]);
  });

  test("at most the last 5 failed attempts are kept", async () => {
    const { bundles, tick } = manager();
    await bundles.install(v("2.0.0"), {});
    for (let i = 0; i < 7; i++) {
      tick();
      await bundles.install(v(`1.0.${i}`), {}).catch(() => undefined);
    }
    const errors = bundles.get("b")!.errors;
    expect(errors).toHaveLength(5);
    expect(errors[4]!.message).toContain("1.0.6");
  });

  test("a hook naming no export is ACTION_NOT_CALLABLE: the new revision is unloaded, the installed one stays", async () => {
    const { bundles, unloaded } = manager();
    const installed = await bundles.install(v("1.0.0"), {});
    const broken = testBundle("b", [{ name: "gate", type: "pre_inject", action: "missing" }], { gate: allow }, { version: "1.1.0" });
    await expect(bundles.install(broken, {})).rejects.toMatchObject({ code: "ACTION_NOT_CALLABLE" });
    expect(unloaded).toHaveLength(1);
    expect(unloaded[0]).not.toBe(installed.digest);
    expect(bundles.get("b")?.digest).toBe(installed.digest);
  });

  test("a source when signatures are required is UNSIGNED_BUNDLE; nothing is installed", async () => {
    const { bundles } = manager({ requireSignatures: true });
    await expect(bundles.install(v("1.0.0"), {})).rejects.toMatchObject({ code: "UNSIGNED_BUNDLE", details: { bundle: "b" } });
    expect(bundles.list()).toEqual([]);
  });

  test("remove retires the revision; removing again is UNKNOWN_BUNDLE", async () => {
    const { bundles, unloaded, changes } = manager();
    const info = await bundles.install(v("1.0.0"), {});
    await expect(bundles.remove("b", undefined)).resolves.toBe(info);
    expect(unloaded).toEqual([info.digest]);
    await expect(bundles.remove("b", undefined)).rejects.toMatchObject({ code: "UNKNOWN_BUNDLE" });
    expect(bundles.resolveAction({ bundle: "b", export: "gate" })).toMatch(/not installed/);
    expect(changes).toEqual(["installed", "removed"]);
  });

  test("an installed bundle offers only its session-scope hooks to sessions", async () => {
    const { bundles, registry } = manager();
    await bundles.install(testBundle("s", [{ name: "gate", type: "pre_inject" }, { name: "mine", type: "pre_inject", scope: "session" }], { gate: allow, mine: allow }), {});
    expect(bundles.get("s")).toMatchObject({ hooks: ["gate"], session_hooks: ["mine"] });
    const snap = registry.snapshot();
    expect(snap.sessionOffer("s", "mine")).toMatchObject({ name: "mine", trust: "session" });
    expect(() => snap.sessionOffer("s", "gate")).toThrow(expect.objectContaining({ code: "UNKNOWN_HOOK" }));
    expect(() => snap.sessionOffer("nope", "mine")).toThrow(expect.objectContaining({ code: "UNKNOWN_BUNDLE" }));
  });

  test("an install undone (it could not be persisted) loses no session's hooks: a hook the new revision dropped is back on the old one", async () => {
    let failPersist = false;
    const store = { dir: "(memory)", activate: async () => { if (failPersist) throw new Error("disk full"); }, remove: async () => undefined, loadInstalled: async () => [] } as unknown as BundleStore;
    const { bundles, registry, sessionHooks } = manager({ store });
    const hooks = (withMine: boolean) => [{ name: "gate", type: "pre_inject" as const }, ...(withMine ? [{ name: "mine", type: "pre_inject" as const, scope: "session" as const }] : [])];
    const v1 = await bundles.install(testBundle("s", hooks(true), { gate: allow, mine: allow }, { version: "1.0.0" }), {});
    registry.registerSessionHook({ bundle: "s", hook: "mine" }, { scope: "session", sessionId: "s1", principal: { id: "runtime", role: "system" } });
    failPersist = true;
    sessionHooks.length = 0;
    await expect(bundles.install(testBundle("s", hooks(false), { gate: allow }, { version: "2.0.0" }), {})).rejects.toMatchObject({ code: "STORE_CORRUPT" });
    expect(bundles.get("s")?.version).toBe("1.0.0");
    expect(registry.snapshot().chain("pre_inject", "s1").hooks.map((p) => `${p.hook.name}@${p.hook.action.digest}`)).toEqual([`gate@${v1.digest}`, `mine@${v1.digest}`]);
    // Settled only after the undo: a shared store that writes drops when settled never sees this one.
    expect(sessionHooks).toEqual(["s: dropped [s1/mine] revived []", "s: dropped [] revived [s1/mine]", "s: settled"]);
    // A removal undone the same way; one kept is settled after it is persisted.
    const removeStore = store as { remove: (bundle: string) => Promise<void> };
    removeStore.remove = async () => { throw new Error("disk full"); };
    sessionHooks.length = 0;
    await expect(bundles.remove("s", undefined)).rejects.toMatchObject({ code: "STORE_CORRUPT" });
    expect(sessionHooks).toEqual(["s: dropped [s1/mine] revived []", "s: dropped [] revived [s1/mine]", "s: settled"]);
    removeStore.remove = async () => undefined;
    sessionHooks.length = 0;
    await bundles.remove("s", undefined);
    expect(sessionHooks).toEqual(["s: dropped [s1/mine] revived []", "s: settled"]);
  });

  test("a session hook a kept install dropped stays dropped: rolling back to the very revision it was bound to does not bring it back", async () => {
    const { bundles, registry, sessionHooks } = manager();
    const hooks = (withMine: boolean) => [{ name: "gate", type: "pre_inject" as const }, ...(withMine ? [{ name: "mine", type: "pre_inject" as const, scope: "session" as const }] : [])];
    const v1 = testBundle("s", hooks(true), { gate: allow, mine: allow }, { version: "1.0.0" });
    await bundles.install(v1, {});
    registry.registerSessionHook({ bundle: "s", hook: "mine" }, { scope: "session", sessionId: "s1", principal: { id: "runtime", role: "system" } });
    await bundles.install(testBundle("s", hooks(false), { gate: allow }, { version: "2.0.0" }), {});
    sessionHooks.length = 0;
    await bundles.install(v1, { allowDowngrade: true });
    expect(registry.snapshot().chain("pre_inject", "s1").hooks.map((p) => p.hook.name)).toEqual(["gate"]);
    expect(sessionHooks).toEqual(["s: dropped [] revived []", "s: settled"]);
  });

  test("list is by name; infos is in install order", async () => {
    const { bundles } = manager();
    await bundles.install(testBundle("zeta", [{ name: "z", type: "pre_inject" }], { z: allow }), {});
    await bundles.install(testBundle("alpha", [{ name: "a", type: "pre_inject" }], { a: allow }), {});
    expect(bundles.list().map((b) => b.bundle)).toEqual(["alpha", "zeta"]);
    expect(bundles.infos().map((b) => b.bundle)).toEqual(["zeta", "alpha"]);
  });
});
