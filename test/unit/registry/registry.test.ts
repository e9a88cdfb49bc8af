import { describe, expect, test } from "vitest";
import { HOOK_TYPES } from "../../../src/model/hook-type.js";
import { CLIENT, DEPLOY, OPERATOR, SYSTEM, catchVcp, def, harness, inSession } from "./fixtures.js";

const names = (hooks: readonly { hook: { name: string } }[]) => hooks.map((p) => p.hook.name);

describe("authorization (spec §8.2.1)", () => {
  test("deployment scope needs an operator or the system", () => {
    const { registry, events } = harness();
    const err = catchVcp(() => registry.register(def(), { scope: "deployment", principal: CLIENT }));
    expect(err.code).toBe("UNAUTHORIZED_PRINCIPAL");
    expect(err.details).toEqual({ principal: "bob", role: "client", scope: "deployment" });
    expect(registry.snapshot().revision).toBe(0);
    expect(events).toEqual([]);
    registry.register(def({ name: "a" }), { scope: "deployment", principal: OPERATOR });
    registry.register(def({ name: "b" }), { scope: "deployment", principal: SYSTEM });
    expect(registry.snapshot().hooks()).toHaveLength(2);
  });

  test("a client can neither deregister, replace nor re-enable deployment hooks", () => {
    const { registry } = harness();
    registry.register(def(), DEPLOY);
    const client = { scope: "deployment" as const, principal: CLIENT };
    expect(catchVcp(() => registry.deregister("strip-pii", client)).code).toBe("UNAUTHORIZED_PRINCIPAL");
    expect(catchVcp(() => registry.replace(["strip-pii"], [], client)).code).toBe("UNAUTHORIZED_PRINCIPAL");
    expect(catchVcp(() => registry.setEnabled("strip-pii", false, client)).code).toBe("UNAUTHORIZED_PRINCIPAL");
    expect(registry.snapshot().find("strip-pii", "deployment")?.enabled).toBe(true);
  });

  test("session scope needs a session id; deployment scope refuses one", () => {
    const { registry } = harness();
    const missing = catchVcp(() => registry.register(def(), { scope: "session", principal: CLIENT }));
    expect(missing.code).toBe("INVALID_HOOK");
    expect(missing.details?.["field"]).toBe("session_id");
    expect(catchVcp(() => registry.register(def(), inSession(""))).details?.["field"]).toBe("session_id");
    const extra = catchVcp(() => registry.register(def(), { ...DEPLOY, sessionId: "s1" }));
    expect(extra.details?.["field"]).toBe("session_id");
  });

  test("an unknown scope is rejected", () => {
    const { registry } = harness();
    const err = catchVcp(() => registry.register(def(), { scope: "global" as never, principal: OPERATOR }));
    expect(err.code).toBe("INVALID_HOOK");
    expect(err.details?.["field"]).toBe("scope");
  });
});

describe("session hook allowlist (spec §8.2.1, DESIGN §3.4)", () => {
  test('only "bundle/hook" entries on the allowlist register in a session, for every role', () => {
    const { registry } = harness({ sessionHookAllowlist: ["pii/strip-pii"] });
    registry.register(def(), inSession("s1"));
    for (const principal of [CLIENT, OPERATOR, SYSTEM]) {
      const err = catchVcp(() => registry.register(def({ name: "log" }), inSession("s2", principal)));
      expect(err.code).toBe("SESSION_HOOK_NOT_ALLOWED");
      expect(err.details).toEqual({ hook: "log", bundle: "pii", entry: "pii/log", session_id: "s2" });
      expect(err.message).toContain('"pii/log"');
    }
  });

  test("the entry is bundle-qualified: the same hook name from another bundle is not allowed", () => {
    const { registry } = harness({ sessionHookAllowlist: ["pii/strip-pii"] });
    const err = catchVcp(() => registry.register(def({ action: { bundle: "evil", export: "strip" } }), inSession("s1")));
    expect(err.code).toBe("SESSION_HOOK_NOT_ALLOWED");
    expect(err.details?.["entry"]).toBe("evil/strip-pii");
  });

  test("no allowlist means no session hooks", () => {
    const { registry } = harness({ sessionHookAllowlist: undefined });
    expect(catchVcp(() => registry.register(def(), inSession("s1"))).code).toBe("SESSION_HOOK_NOT_ALLOWED");
  });

  test("the allowlist does not apply to deployment scope", () => {
    const { registry } = harness({ sessionHookAllowlist: [] });
    registry.register(def({ name: "anything" }), DEPLOY);
    expect(registry.snapshot().hooks()).toHaveLength(1);
  });

  test("a malformed allowlist entry is INVALID_CONFIG", () => {
    expect(catchVcp(() => harness({ sessionHookAllowlist: ["strip-pii"] })).code).toBe("INVALID_CONFIG");
    expect(catchVcp(() => harness({ sessionHookAllowlist: ["PII/Strip"] })).code).toBe("INVALID_CONFIG");
  });
});

describe("uniqueness (spec §6.2.1)", () => {
  test("a name is unique in deployment scope across bundles and types; the error names both bundles", () => {
    const { registry, events } = harness();
    registry.register(def(), DEPLOY);
    events.length = 0;
    const err = catchVcp(() =>
      registry.register(def({ type: "post_select", action: { bundle: "other", export: "f" } }), DEPLOY),
    );
    expect(err.code).toBe("DUPLICATE_HOOK");
    expect(err.details).toEqual({ hook: "strip-pii", scope: "deployment", existing_bundle: "pii", new_bundle: "other" });
    expect(err.message).toContain('"pii"');
    expect(err.message).toContain('"other"');
    expect(registry.snapshot().revision).toBe(1);
    expect(events).toEqual([]);
  });

  test("the same name may live in deployment scope and in a session, and in two sessions", () => {
    const { registry } = harness();
    registry.register(def(), DEPLOY);
    registry.register(def(), inSession("s1"));
    registry.register(def(), inSession("s2"));
    const snap = registry.snapshot();
    expect(snap.find("strip-pii", "deployment")?.scope).toBe("deployment");
    expect(snap.find("strip-pii", "session", "s1")?.session_id).toBe("s1");
    expect(snap.find("strip-pii", "session", "s2")?.session_id).toBe("s2");
    expect(snap.find("strip-pii", "session", "s3")).toBeUndefined();
    expect(snap.find("strip-pii", "session")).toBeUndefined();
  });

  test("a name is unique within one session", () => {
    const { registry } = harness();
    registry.register(def(), inSession("s1"));
    const err = catchVcp(() => registry.register(def(), inSession("s1")));
    expect(err.code).toBe("DUPLICATE_HOOK");
    expect(err.details).toEqual({ hook: "strip-pii", scope: "session", session_id: "s1", existing_bundle: "pii", new_bundle: "pii" });
  });

  test("duplicates inside one registerAll batch are errors", () => {
    const { registry } = harness();
    const err = catchVcp(() =>
      registry.registerAll([def({ name: "x" }), def({ name: "y" }), def({ name: "x", action: { bundle: "b2", export: "g" } })], DEPLOY),
    );
    expect(err.code).toBe("DUPLICATE_HOOK");
    expect(err.details).toMatchObject({ hook: "x", existing_bundle: "pii", new_bundle: "b2" });
    expect(registry.snapshot().hooks()).toEqual([]);
  });

  test("after deregistration the name is free again", () => {
    const { registry } = harness();
    registry.register(def(), DEPLOY);
    registry.deregister("strip-pii", DEPLOY);
    expect(registry.register(def(), DEPLOY).seq).toBe(2);
  });
});

describe("atomicity", () => {
  test("a failing registerAll leaves revision, hooks and events unchanged", () => {
    const { registry, events } = harness();
    registry.register(def({ name: "keep" }), DEPLOY);
    const before = registry.snapshot();
    events.length = 0;
    let notified = 0;
    registry.onChange(() => notified++);
    const err = catchVcp(() =>
      registry.registerAll([def({ name: "a" }), def({ name: "b" }), def({ name: "c", timeout_ms: 30_001 })], DEPLOY),
    );
    expect(err.details?.["field"]).toBe("timeout_ms");
    const after = registry.snapshot();
    expect(after).toBe(before);
    expect(after.revision).toBe(1);
    expect(after.hooks().map((h) => h.name)).toEqual(["keep"]);
    expect(after.find("a", "deployment")).toBeUndefined();
    expect(events).toEqual([]);
    expect(notified).toBe(0);
  });

  test("a successful registerAll is one revision and emits one event per hook, in order", () => {
    const { registry, events } = harness();
    const added = registry.registerAll([def({ name: "a", priority: 10 }), def({ name: "b", type: "periodic" })], DEPLOY);
    expect(added.map((h) => h.name)).toEqual(["a", "b"]);
    expect(registry.snapshot().revision).toBe(1);
    expect(events).toEqual([
      { event: "hook.registered", payload: { hook: "a", profile: "vcp", event: "pre_inject", type: "pre_inject", scope: "deployment", bundle: "pii", priority: 10, principal: "alice" } },
      { event: "hook.registered", payload: { hook: "b", profile: "vcp", event: "periodic", type: "periodic", scope: "deployment", bundle: "pii", priority: 50, principal: "alice" } },
    ]);
  });

  test("registerAll of nothing changes nothing", () => {
    const { registry, events } = harness();
    expect(registry.registerAll([], DEPLOY)).toEqual([]);
    expect(registry.snapshot().revision).toBe(0);
    expect(events).toEqual([]);
  });

  test("replace swaps atomically: add is validated as if the removed hooks were gone", () => {
    const { registry, events } = harness();
    registry.registerAll([def({ name: "a" }), def({ name: "b" }), def({ name: "other", action: { bundle: "x", export: "f" } })], DEPLOY);
    events.length = 0;
    const added = registry.replace(["a", "b"], [def({ name: "a", priority: 90 }), def({ name: "c" })], DEPLOY);
    expect(added.map((h) => [h.name, h.seq])).toEqual([["a", 4], ["c", 5]]);
    const snap = registry.snapshot();
    expect(snap.revision).toBe(2);
    expect(snap.hooks().map((h) => h.name)).toEqual(["other", "a", "c"]);
    expect(snap.find("a", "deployment")?.priority).toBe(90);
    expect(events.map((e) => `${e.event}:${"hook" in e.payload ? e.payload.hook : ""}`)).toEqual([
      "hook.deregistered:a",
      "hook.deregistered:b",
      "hook.registered:a",
      "hook.registered:c",
    ]);
  });

  test("a failing replace changes nothing: not the removal, not the additions", () => {
    const { registry, events } = harness();
    registry.registerAll([def({ name: "a" }), def({ name: "b" }), def({ name: "other" })], DEPLOY);
    const before = registry.snapshot();
    events.length = 0;
    // "other" is not being removed, so adding it again is a duplicate.
    const dup = catchVcp(() => registry.replace(["a", "b"], [def({ name: "a" }), def({ name: "other" })], DEPLOY));
    expect(dup.code).toBe("DUPLICATE_HOOK");
    const unknown = catchVcp(() => registry.replace(["a", "missing"], [def({ name: "z" })], DEPLOY));
    expect(unknown.code).toBe("UNKNOWN_HOOK");
    expect(unknown.details).toEqual({ hook: "missing", scope: "deployment" });
    const invalid = catchVcp(() => registry.replace(["a"], [def({ name: "z", priority: -1 })], DEPLOY));
    expect(invalid.code).toBe("INVALID_HOOK");
    expect(registry.snapshot()).toBe(before);
    expect(registry.snapshot().hooks().map((h) => h.name)).toEqual(["a", "b", "other"]);
    expect(events).toEqual([]);
  });

  test("the next seq after a failed batch is the one it would have been", () => {
    const { registry } = harness();
    catchVcp(() => registry.registerAll([def({ name: "a" }), def({ name: "b" }), def({ name: "bad", type: "x" })], DEPLOY));
    expect(registry.register(def({ name: "a" }), DEPLOY).seq).toBe(1);
  });
});

describe("deregistration (spec §6.3)", () => {
  test("removes the hook, bumps the revision and emits hook.deregistered with the principal", () => {
    const { registry, events } = harness();
    registry.register(def(), DEPLOY);
    events.length = 0;
    const removed = registry.deregister("strip-pii", DEPLOY);
    expect(removed.name).toBe("strip-pii");
    expect(registry.snapshot().revision).toBe(2);
    expect(registry.snapshot().hooks()).toEqual([]);
    expect(events).toEqual([
      { event: "hook.deregistered", payload: { hook: "strip-pii", profile: "vcp", event: "pre_inject", type: "pre_inject", scope: "deployment", bundle: "pii", principal: "alice" } },
    ]);
  });

  test("an unknown name is UNKNOWN_HOOK, also for a name that lives in another scope", () => {
    const { registry } = harness();
    registry.register(def(), inSession("s1"));
    expect(catchVcp(() => registry.deregister("strip-pii", DEPLOY)).code).toBe("UNKNOWN_HOOK");
    const err = catchVcp(() => registry.deregister("strip-pii", inSession("s2")));
    expect(err.details).toEqual({ hook: "strip-pii", scope: "session", session_id: "s2" });
    expect(registry.snapshot().revision).toBe(1);
  });

  test("a snapshot taken before deregistration still yields the old chain", () => {
    const { registry } = harness();
    registry.registerAll([def({ name: "a", priority: 90 }), def({ name: "b" })], DEPLOY);
    const inFlight = registry.snapshot();
    const plan = inFlight.chain("pre_inject");
    registry.deregister("a", DEPLOY);

    expect(names(plan.hooks)).toEqual(["a", "b"]);
    expect(names(inFlight.chain("pre_inject").hooks)).toEqual(["a", "b"]);
    expect(inFlight.find("a", "deployment")).toBeDefined();
    expect(inFlight.hooks()).toHaveLength(2);
    expect(inFlight.isEmpty("pre_inject")).toBe(false);

    const now = registry.snapshot();
    expect(names(now.chain("pre_inject").hooks)).toEqual(["b"]);
    expect(now.revision).toBe(inFlight.revision + 1);
    expect(Object.isFrozen(inFlight)).toBe(true);
  });

  test("session deregistration leaves other sessions and the deployment alone", () => {
    const { registry } = harness();
    registry.register(def({ name: "d" }), DEPLOY);
    registry.register(def(), inSession("s1"));
    registry.register(def(), inSession("s2"));
    registry.deregister("strip-pii", inSession("s1"));
    const snap = registry.snapshot();
    expect(names(snap.chain("pre_inject", "s1").hooks)).toEqual(["d"]);
    expect(names(snap.chain("pre_inject", "s2").hooks)).toEqual(["d", "strip-pii"]);
  });

  test("dropSession removes all of a session's hooks in one revision, emitting one event each", () => {
    const { registry, events } = harness();
    registry.register(def({ name: "d" }), DEPLOY);
    registry.registerAll([def(), def({ name: "log", type: "periodic" })], inSession("s1"));
    registry.register(def(), inSession("s2"));
    events.length = 0;
    registry.dropSession("s1");
    const snap = registry.snapshot();
    expect(snap.revision).toBe(4);
    expect(snap.hooks().map((h) => `${h.scope}:${h.session_id ?? ""}:${h.name}`)).toEqual(["deployment::d", "session:s2:strip-pii"]);
    expect(events).toEqual([
      { event: "hook.deregistered", payload: { hook: "strip-pii", profile: "vcp", event: "pre_inject", type: "pre_inject", scope: "session", session_id: "s1", bundle: "pii", principal: "system" } },
      { event: "hook.deregistered", payload: { hook: "log", profile: "vcp", event: "periodic", type: "periodic", scope: "session", session_id: "s1", bundle: "pii", principal: "system" } },
    ]);
    registry.dropSession("s1");
    registry.dropSession("never");
    expect(registry.snapshot().revision).toBe(4);
  });
});

describe("setEnabled (spec §7.3.4)", () => {
  test("toggles enabled, keeps seq and chain position, one revision per change, no-op when unchanged", () => {
    const { registry, events } = harness();
    registry.registerAll([def({ name: "a" }), def({ name: "b" })], DEPLOY);
    events.length = 0;
    const disabled = registry.setEnabled("a", false, { scope: "deployment", principal: SYSTEM });
    expect(disabled).toMatchObject({ name: "a", enabled: false, seq: 1 });
    expect(Object.isFrozen(disabled)).toBe(true);
    expect(registry.snapshot().revision).toBe(2);
    expect(registry.setEnabled("a", false, DEPLOY)).toBe(disabled);
    expect(registry.snapshot().revision).toBe(2);

    const enabled = registry.setEnabled("a", true, DEPLOY);
    expect(enabled).toMatchObject({ enabled: true, seq: 1 });
    expect(names(registry.snapshot().chain("pre_inject").hooks)).toEqual(["a", "b"]);
    expect(events).toEqual([]);
  });

  test("unknown hook → UNKNOWN_HOOK; non-boolean → INVALID_HOOK", () => {
    const { registry } = harness();
    registry.register(def(), DEPLOY);
    expect(catchVcp(() => registry.setEnabled("nope", true, DEPLOY)).code).toBe("UNKNOWN_HOOK");
    expect(catchVcp(() => registry.setEnabled("strip-pii", "no" as never, DEPLOY)).details?.["field"]).toBe("enabled");
  });
});

describe("setEnabled in one session (spec §7.3.4 cascade, issue 10)", () => {
  const inS = (sessionId: string, principal = SYSTEM) => ({ scope: "deployment" as const, sessionId, principal });
  const enabledIn = (registry: ReturnType<typeof harness>["registry"], sessionId?: string) =>
    registry.snapshot().chain("pre_inject", sessionId).hooks.map((p) => `${p.hook.name}:${String(p.hook.enabled)}`);

  test("a deployment hook disabled in one session is off there only; the shared plan and other sessions keep it", () => {
    const { registry, events } = harness({ sessionHookAllowlist: ["pii/own"] });
    registry.registerAll([def({ name: "a", priority: 90 }), def({ name: "b", priority: 10 })], DEPLOY);
    registry.register(def({ name: "own", priority: 50 }), inSession("s2"));
    const deploymentPlan = registry.snapshot().chain("pre_inject");
    events.length = 0;
    const off = registry.setEnabled("a", false, inS("s1"));
    expect(off).toMatchObject({ name: "a", enabled: false, seq: 1, scope: "deployment" });
    expect(enabledIn(registry, "s1")).toEqual(["a:false", "b:true"]);
    expect(enabledIn(registry)).toEqual(["a:true", "b:true"]);
    expect(enabledIn(registry, "s2")).toEqual(["a:true", "own:true", "b:true"]);
    expect(enabledIn(registry, "s3")).toEqual(["a:true", "b:true"]);
    expect(registry.snapshot().find("a", "deployment")?.enabled).toBe(true);
    // The plan a chain already holds is untouched; an unaffected session gets the shared plan.
    expect(deploymentPlan.hooks.every((p) => p.hook.enabled)).toBe(true);
    expect(registry.snapshot().chain("pre_inject", "s3")).toBe(registry.snapshot().chain("pre_inject"));
    expect(events).toEqual([]);
  });

  test("no-op when unchanged; re-enabling in the session brings it back there; one revision per change", () => {
    const { registry } = harness();
    registry.registerAll([def({ name: "a" }), def({ name: "b" })], DEPLOY);
    registry.setEnabled("a", false, inS("s1"));
    const revision = registry.snapshot().revision;
    registry.setEnabled("a", false, inS("s1"));
    registry.setEnabled("b", true, inS("s1"));
    expect(registry.snapshot().revision).toBe(revision);
    expect(registry.setEnabled("a", true, inS("s1", OPERATOR))).toMatchObject({ name: "a", enabled: true });
    expect(registry.snapshot().revision).toBe(revision + 1);
    expect(enabledIn(registry, "s1")).toEqual(["a:true", "b:true"]);
  });

  test("isEmpty of a session whose only hook of the type is off there is true; other sessions are not empty", () => {
    const { registry } = harness();
    registry.register(def({ name: "a" }), DEPLOY);
    registry.setEnabled("a", false, inS("s1"));
    expect(registry.snapshot().isEmpty("pre_inject", "s1")).toBe(true);
    expect(registry.snapshot().isEmpty("pre_inject", "s2")).toBe(false);
    expect(registry.snapshot().isEmpty("pre_inject")).toBe(false);
  });

  test("dropSession forgets the session's disables (with or without session hooks), in one commit", () => {
    const { registry } = harness({ sessionHookAllowlist: ["pii/own"] });
    registry.register(def({ name: "a" }), DEPLOY);
    registry.register(def({ name: "own" }), inSession("s2"));
    registry.setEnabled("a", false, inS("s1"));
    registry.setEnabled("a", false, inS("s2"));
    const revision = registry.snapshot().revision;
    registry.dropSession("s1");
    registry.dropSession("s2");
    expect(registry.snapshot().revision).toBe(revision + 2);
    expect(enabledIn(registry, "s1")).toEqual(["a:true"]);
    expect(enabledIn(registry, "s2")).toEqual(["a:true"]);
    registry.dropSession("s1");
    expect(registry.snapshot().revision).toBe(revision + 2);
  });

  test("a client may not switch a deployment hook in its session; bad input is named", () => {
    const { registry } = harness();
    registry.register(def({ name: "a" }), DEPLOY);
    expect(catchVcp(() => registry.setEnabled("a", false, inS("s1", CLIENT))).code).toBe("UNAUTHORIZED_PRINCIPAL");
    expect(catchVcp(() => registry.setEnabled("a", true, inS("s1", CLIENT))).code).toBe("UNAUTHORIZED_PRINCIPAL");
    expect(catchVcp(() => registry.setEnabled("a", false, inS(""))).details?.["field"]).toBe("session_id");
    expect(catchVcp(() => registry.setEnabled("a", "no" as never, inS("s1"))).details?.["field"]).toBe("enabled");
    expect(catchVcp(() => registry.setEnabled("nope", false, inS("s1"))).code).toBe("UNKNOWN_HOOK");
    expect(enabledIn(registry, "s1")).toEqual(["a:true"]);
  });

  test("register/deregister of deployment hooks keeps the session's disables", () => {
    const { registry } = harness();
    registry.register(def({ name: "a" }), DEPLOY);
    registry.setEnabled("a", false, inS("s1"));
    registry.register(def({ name: "c" }), DEPLOY);
    expect(enabledIn(registry, "s1")).toEqual(["a:false", "c:true"]);
  });
});

describe("snapshots and chains", () => {
  test("chain order: priority, deployment before session at equal priority, then registration order", () => {
    const { registry } = harness({ sessionHookAllowlist: ["pii/s50", "pii/s90", "pii/s50b"] });
    registry.register(def({ name: "s50", priority: 50 }), inSession("s1"));
    registry.register(def({ name: "d50", priority: 50 }), DEPLOY);
    registry.register(def({ name: "s90", priority: 90 }), inSession("s1"));
    registry.register(def({ name: "d10", priority: 10 }), DEPLOY);
    registry.register(def({ name: "d50b", priority: 50 }), DEPLOY);
    registry.register(def({ name: "s50b", priority: 50 }), inSession("s1"));
    registry.register(def({ name: "other-type", type: "on_conflict", priority: 100 }), DEPLOY);
    const snap = registry.snapshot();
    const plan = snap.chain("pre_inject", "s1");
    expect(plan.profile).toMatchObject({ id: "vcp", event: "pre_inject" });
    expect(plan.revision).toBe(snap.revision);
    expect(names(plan.hooks)).toEqual(["s90", "d50", "d50b", "s50", "s50b", "d10"]);
    expect(names(snap.chain("pre_inject").hooks)).toEqual(["d50", "d50b", "d10"]);
    expect(names(snap.chain("on_conflict", "s1").hooks)).toEqual(["other-type"]);
  });

  test("plans are memoized per (type, session); a session without own hooks shares the deployment plan", () => {
    const { registry } = harness();
    registry.register(def({ name: "d" }), DEPLOY);
    registry.register(def({ type: "periodic" }), inSession("s1"));
    const snap = registry.snapshot();
    const deployment = snap.chain("pre_inject");
    expect(snap.chain("pre_inject")).toBe(deployment);
    expect(snap.chain("pre_inject", "no-hooks")).toBe(deployment);
    // s1 has hooks, but none of this type.
    expect(snap.chain("pre_inject", "s1")).toBe(deployment);
    const s1 = snap.chain("periodic", "s1");
    expect(s1).not.toBe(snap.chain("periodic"));
    expect(snap.chain("periodic", "s1")).toBe(s1);
    expect(registry.snapshot()).toBe(snap);
  });

  test("every mutation builds a new snapshot; old snapshots are never changed", () => {
    const { registry } = harness();
    const s0 = registry.snapshot();
    registry.register(def(), DEPLOY);
    const s1 = registry.snapshot();
    expect(s1).not.toBe(s0);
    expect(s0.revision).toBe(0);
    expect(s0.hooks()).toEqual([]);
    expect(s0.isEmpty("pre_inject")).toBe(true);
    expect(s0.chain("pre_inject").hooks).toEqual([]);
    expect(s1.revision).toBe(1);
    expect(Object.isFrozen(s1.hooks())).toBe(true);
  });

  test("hooks() lists deployment first, then sessions", () => {
    const { registry } = harness();
    registry.register(def(), inSession("s1"));
    registry.register(def({ name: "d" }), DEPLOY);
    expect(registry.snapshot().hooks().map((h) => h.scope)).toEqual(["deployment", "session"]);
  });

  test("isEmpty is true only when no enabled hook of the type applies to the session", () => {
    const { registry } = harness();
    const snap0 = registry.snapshot();
    for (const type of HOOK_TYPES) expect(snap0.isEmpty(type, "s1")).toBe(true);
    registry.register(def({ type: "periodic" }), inSession("s1"));
    registry.register(def({ name: "d", type: "on_violation", enabled: false }), DEPLOY);
    const snap = registry.snapshot();
    expect(snap.isEmpty("periodic", "s1")).toBe(false);
    expect(snap.isEmpty("periodic", "s2")).toBe(true);
    expect(snap.isEmpty("periodic")).toBe(true);
    expect(snap.isEmpty("on_violation", "s1")).toBe(true);
    registry.setEnabled("d", true, DEPLOY);
    expect(registry.snapshot().isEmpty("on_violation", "s2")).toBe(false);
    expect(registry.snapshot().isEmpty("on_violation")).toBe(false);
  });

  test("an unknown hook type is UNKNOWN_HOOK_TYPE", () => {
    const { registry } = harness();
    expect(catchVcp(() => registry.snapshot().chain("pre_select" as never)).code).toBe("UNKNOWN_HOOK_TYPE");
    expect(catchVcp(() => registry.snapshot().isEmpty("pre_select" as never)).code).toBe("UNKNOWN_HOOK_TYPE");
  });
});

describe("events and listeners", () => {
  test("hook.registered carries session_id for session hooks and the principal id", () => {
    const { registry, events } = harness();
    registry.register(def({ priority: 7 }), inSession("s9"));
    expect(events).toEqual([
      {
        event: "hook.registered",
        payload: { hook: "strip-pii", profile: "vcp", event: "pre_inject", type: "pre_inject", scope: "session", session_id: "s9", bundle: "pii", priority: 7, principal: "bob" },
      },
    ]);
  });

  test("onChange gets each new snapshot after the events; unsubscribe stops it", () => {
    const order: string[] = [];
    const { registry } = harness({ emit: (e) => order.push(e.event) });
    const seen: number[] = [];
    const off = registry.onChange((snap) => {
      seen.push(snap.revision);
      order.push("change");
      expect(registry.snapshot()).toBe(snap);
    });
    registry.register(def(), DEPLOY);
    registry.deregister("strip-pii", DEPLOY);
    off();
    registry.register(def(), DEPLOY);
    expect(seen).toEqual([1, 2]);
    expect(order).toEqual(["hook.registered", "change", "hook.deregistered", "change", "hook.registered"]);
  });

  test("a throwing listener or sink does not undo the commit or starve other listeners", () => {
    const logged: string[] = [];
    const { registry } = harness({
      emit: () => {
        throw new Error("sink down");
      },
      logger: { isLevelEnabled: () => true, debug() {}, info() {}, warn() {}, error: (_o, msg) => logged.push(String(msg)) },
    });
    let second = 0;
    registry.onChange(() => {
      throw new Error("listener bug");
    });
    registry.onChange(() => second++);
    const hook = registry.register(def(), DEPLOY);
    expect(registry.snapshot().find("strip-pii", "deployment")).toBe(hook);
    expect(second).toBe(1);
    expect(logged).toEqual(["registry: event sink threw", "registry: change listener threw"]);
  });
});
