// One registry for every hook (issue 25, item 2): a bundle revision is swapped in one commit —
// deployment hooks, event-profile hooks keyed by (profile, event), the session hooks it offers — and
// session hooks refer to (bundle, hook): bound to each new revision, deregistered with a reason
// naming the revision when it no longer offers them.
import { describe, expect, test } from "vitest";
import type { BundleRevision } from "../../../src/registry/index.js";
import { resolveEnabledProfiles } from "../../../src/profiles/enabled.js";
import type { ProfileHookDefinition } from "../../../src/model/hook.js";
import { catchVcp, def, DEPLOY, harness, inSession } from "./fixtures.js";

const digest = (c: string) => `sha256:${c.repeat(64)}`;

/** A VCP revision of bundle "pii": one deployment hook and the session hooks `offered`. */
function vcpRevision(version: string, d: string, offered: string[] = ["strip-pii", "log"]): BundleRevision {
  const action = (name: string) => ({ bundle: "pii", export: name.replace("-", "_"), digest: d });
  return {
    version,
    digest: d,
    deployment: [def({ name: "gate", action: action("gate") })],
    session: offered.map((name) => ({ name, type: name === "log" ? "periodic" : "pre_inject", priority: 50, timeout_ms: 100, action: action(name), trust: "session" }) as never),
  };
}

function profileHook(name: string, d: string, extra: Partial<ProfileHookDefinition> = {}): ProfileHookDefinition {
  return { name, event: "BeforeTool", priority: 50, timeout_ms: 1000, action: { bundle: "no-rm", export: name, digest: d }, condition: null, enabled: true, metadata: {}, fail_closed: false, trust: "deployment", ...extra } as ProfileHookDefinition;
}
const profileRevision = (d: string, hooks: ProfileHookDefinition[]): BundleRevision => ({ version: "1.0.0", digest: d, deployment: [], session: [], profile: { id: "gemini-cli", hooks } });
const gemini = resolveEnabledProfiles({ "gemini-cli": {} }).get("gemini-cli")!;

describe("swapBundle", () => {
  test("VCP and profile hooks live in one registry: one revision each, one event stream keyed by (profile, event)", () => {
    const { registry, events } = harness();
    registry.swapBundle("pii", vcpRevision("1.0.0", digest("a")), DEPLOY);
    registry.swapBundle("no-rm", profileRevision(digest("b"), [profileHook("block_rm", digest("b"), { matcher: "run_shell_command" })]), DEPLOY);
    const snap = registry.snapshot();
    expect(snap.revision).toBe(2);
    expect(snap.hooks().map((h) => `${h.profile ?? "vcp"}/${h.event ?? h.type}/${h.name}`)).toEqual(["vcp/pre_inject/gate", "gemini-cli/BeforeTool/block_rm"]);
    expect(snap.profilePlan(gemini, "BeforeTool").hooks.map((h) => h.name)).toEqual(["block_rm"]);
    expect(events.map((e) => e.payload)).toEqual([
      expect.objectContaining({ hook: "gate", profile: "vcp", event: "pre_inject", type: "pre_inject", bundle: "pii" }),
      { hook: "block_rm", profile: "gemini-cli", event: "BeforeTool", scope: "deployment", bundle: "no-rm", priority: 50, principal: "alice" },
    ]);
    // Removing the profile bundle deregisters its hooks on the same stream.
    registry.swapBundle("no-rm", null, DEPLOY);
    expect(events.at(-1)).toEqual({ event: "hook.deregistered", payload: { hook: "block_rm", profile: "gemini-cli", event: "BeforeTool", scope: "deployment", bundle: "no-rm", principal: "alice" } });
    expect(registry.snapshot().profilePlan(gemini, "BeforeTool").hooks).toEqual([]);
  });

  test("a profile plan keeps its identity across changes that do not touch the profile's hooks", () => {
    const { registry } = harness();
    registry.swapBundle("pii", vcpRevision("1.0.0", digest("a")), DEPLOY);
    registry.swapBundle("no-rm", profileRevision(digest("b"), [profileHook("block_rm", digest("b"))]), DEPLOY);
    const plan = registry.snapshot().profilePlan(gemini, "BeforeTool");
    registry.registerSessionHook({ bundle: "pii", hook: "strip-pii" }, inSession("s1"));
    registry.swapBundle("pii", vcpRevision("1.1.0", digest("c")), DEPLOY);
    expect(registry.snapshot().profilePlan(gemini, "BeforeTool")).toBe(plan);
    registry.swapBundle("no-rm", profileRevision(digest("d"), [profileHook("block_rm", digest("d"))]), DEPLOY);
    expect(registry.snapshot().profilePlan(gemini, "BeforeTool")).not.toBe(plan);
  });

  test("a session hook by reference is bound to each new revision: same place in the chain, its session switch kept", () => {
    const { registry, events } = harness();
    registry.swapBundle("pii", vcpRevision("1.0.0", digest("a")), DEPLOY);
    const first = registry.registerSessionHook({ bundle: "pii", hook: "strip-pii" }, inSession("s1"));
    registry.registerSessionHook({ bundle: "pii", hook: "log" }, inSession("s1"));
    registry.setEnabled("log", false, inSession("s1"));
    const before = registry.snapshot();
    events.length = 0;
    registry.swapBundle("pii", vcpRevision("2.0.0", digest("e")), DEPLOY);
    const after = registry.snapshot();
    const rebound = after.find("strip-pii", "session", "s1")!;
    expect(rebound).toMatchObject({ seq: first.seq, session_id: "s1", trust: "session", action: { bundle: "pii", export: "strip_pii", digest: digest("e") } });
    expect(after.find("log", "session", "s1")).toMatchObject({ enabled: false, action: { digest: digest("e") } });
    // The old snapshot still runs the old revision (spec §6.3); no session hook was announced as gone.
    expect(before.find("strip-pii", "session", "s1")!.action.digest).toBe(digest("a"));
    expect(events.filter((e) => "scope" in e.payload && e.payload.scope === "session")).toEqual([]);
    expect(after.chain("pre_inject", "s1").hooks.map((p) => `${p.hook.name}@${p.hook.action.digest}`)).toEqual([`gate@${digest("e")}`, `strip-pii@${digest("e")}`]);
  });

  test("a revision that no longer offers a session hook deregisters it with the revision's name; the session's other hooks stay", () => {
    const { registry, events } = harness();
    registry.swapBundle("pii", vcpRevision("1.0.0", digest("a")), DEPLOY);
    registry.registerSessionHook({ bundle: "pii", hook: "strip-pii" }, inSession("s1"));
    registry.registerSessionHook({ bundle: "pii", hook: "log" }, inSession("s1"));
    registry.registerSessionHook({ bundle: "pii", hook: "log" }, inSession("s2"));
    events.length = 0;
    registry.swapBundle("pii", vcpRevision("3.0.0", digest("f"), ["strip-pii"]), DEPLOY);
    const reason = `bundle "pii" revision 3.0.0 (${digest("f")}) offers no session hook "log"`;
    expect(events.filter((e) => e.event === "hook.deregistered" && e.payload.scope === "session").map((e) => e.payload)).toEqual([
      { hook: "log", profile: "vcp", event: "periodic", type: "periodic", scope: "session", session_id: "s1", bundle: "pii", principal: "system", reason },
      { hook: "log", profile: "vcp", event: "periodic", type: "periodic", scope: "session", session_id: "s2", bundle: "pii", principal: "system", reason },
    ]);
    const snap = registry.snapshot();
    expect(snap.find("strip-pii", "session", "s1")?.action.digest).toBe(digest("f"));
    expect(snap.find("log", "session", "s1")).toBeUndefined();
    expect(snap.chain("periodic", "s2").hooks).toEqual([]);
    // Registering it again names what the active revision offers.
    const err = catchVcp(() => registry.registerSessionHook({ bundle: "pii", hook: "log" }, inSession("s1")));
    expect(err).toMatchObject({ code: "UNKNOWN_HOOK", details: { bundle: "pii", hook: "log", version: "3.0.0" } });
  });

  test("swapping the previous revision back (a failed install undone) brings back the session hooks the swap dropped, as they were", () => {
    const { registry, events } = harness();
    registry.swapBundle("pii", vcpRevision("1.0.0", digest("a")), DEPLOY);
    const log = registry.registerSessionHook({ bundle: "pii", hook: "log" }, inSession("s1"));
    registry.registerSessionHook({ bundle: "pii", hook: "log" }, inSession("s2"));
    registry.swapBundle("pii", vcpRevision("3.0.0", digest("f"), ["strip-pii"]), DEPLOY);
    registry.dropSession("s2");
    events.length = 0;
    registry.swapBundle("pii", vcpRevision("1.0.0", digest("a")), DEPLOY);
    expect(registry.snapshot().find("log", "session", "s1")).toBe(log);
    // A session closed in between does not get its hook back.
    expect(registry.snapshot().find("log", "session", "s2")).toBeUndefined();
    expect(events.filter((e) => "scope" in e.payload && e.payload.scope === "session")).toEqual([
      { event: "hook.registered", payload: expect.objectContaining({ hook: "log", session_id: "s1", bundle: "pii", principal: "system" }) },
    ]);
    // Only the revision the hooks were bound to brings them back.
    registry.swapBundle("pii", vcpRevision("3.0.0", digest("f"), ["strip-pii"]), DEPLOY);
    registry.swapBundle("pii", vcpRevision("4.0.0", digest("9")), DEPLOY);
    expect(registry.snapshot().find("log", "session", "s1")).toBeUndefined();
  });

  test("once the change is settled, the hooks its swap dropped stay dropped: swapping that very revision back brings none back", () => {
    const { registry } = harness();
    registry.swapBundle("pii", vcpRevision("1.0.0", digest("a")), DEPLOY);
    registry.registerSessionHook({ bundle: "pii", hook: "log" }, inSession("s1"));
    registry.swapBundle("pii", vcpRevision("3.0.0", digest("f"), ["strip-pii"]), DEPLOY);
    registry.settleSwap("pii");
    // A rollback to 1.0.0 is a later revision offering the hook again, not an undo.
    registry.swapBundle("pii", vcpRevision("1.0.0", digest("a")), DEPLOY);
    expect(registry.snapshot().find("log", "session", "s1")).toBeUndefined();
  });

  test("the registry tells where sessions are shared what each swap withdrew, dropped here, and brought back", () => {
    const changes: unknown[] = [];
    const { registry } = harness({ onSessionHooksRebound: (change) => void changes.push(change) });
    registry.swapBundle("pii", vcpRevision("1.0.0", digest("a")), DEPLOY);
    registry.registerSessionHook({ bundle: "pii", hook: "log" }, inSession("s1"));
    registry.registerSessionHook({ bundle: "pii", hook: "strip-pii" }, inSession("s1"));
    changes.length = 0;
    // An update that keeps both withdraws nothing.
    registry.swapBundle("pii", vcpRevision("1.1.0", digest("b")), DEPLOY);
    registry.swapBundle("pii", vcpRevision("3.0.0", digest("f"), ["strip-pii"]), DEPLOY);
    registry.swapBundle("pii", vcpRevision("1.1.0", digest("b")), DEPLOY);
    registry.swapBundle("pii", null, DEPLOY);
    expect(changes).toEqual([
      { bundle: "pii", withdrawn: [], dropped: [], revived: [] },
      { bundle: "pii", withdrawn: ["log"], dropped: [{ session: "s1", bundle: "pii", hook: "log" }], revived: [] },
      { bundle: "pii", withdrawn: [], dropped: [], revived: [{ session: "s1", bundle: "pii", hook: "log" }] },
      {
        bundle: "pii", withdrawn: ["strip-pii", "log"], revived: [],
        dropped: [{ session: "s1", bundle: "pii", hook: "strip-pii" }, { session: "s1", bundle: "pii", hook: "log" }],
      },
    ]);
  });

  test("a deployment-wide switch holds for every revision that registers a hook of that name", () => {
    const switched = new Map([["gate", false]]);
    const { registry } = harness({ deploymentSwitch: (name) => switched.get(name) });
    registry.swapBundle("pii", vcpRevision("1.0.0", digest("a")), DEPLOY);
    expect(registry.snapshot().find("gate", "deployment")?.enabled).toBe(false);
    switched.set("gate", true);
    registry.swapBundle("pii", vcpRevision("2.0.0", digest("e")), DEPLOY);
    expect(registry.snapshot().find("gate", "deployment")).toMatchObject({ enabled: true, action: { digest: digest("e") } });
  });

  test("removing the bundle deregisters its session hooks, naming the removal", () => {
    const { registry, events } = harness();
    registry.swapBundle("pii", vcpRevision("1.0.0", digest("a")), DEPLOY);
    registry.registerSessionHook({ bundle: "pii", hook: "strip-pii" }, inSession("s1"));
    registry.swapBundle("pii", null, DEPLOY);
    expect(events.at(-1)!.payload).toMatchObject({ hook: "strip-pii", scope: "session", session_id: "s1", reason: 'bundle "pii" was removed' });
    expect(registry.snapshot().hooks()).toEqual([]);
    expect(catchVcp(() => registry.registerSessionHook({ bundle: "pii", hook: "strip-pii" }, inSession("s1"))).code).toBe("UNKNOWN_BUNDLE");
  });

  test("a refused swap changes nothing: deployment, profile and session hooks stay bound to the old revision", () => {
    const { registry, events } = harness();
    registry.swapBundle("pii", vcpRevision("1.0.0", digest("a")), DEPLOY);
    registry.registerSessionHook({ bundle: "pii", hook: "strip-pii" }, inSession("s1"));
    const before = registry.snapshot();
    const count = events.length;
    const bad = { ...vcpRevision("2.0.0", digest("g"), []), deployment: [def({ name: "gate", priority: "high" })] };
    expect(catchVcp(() => registry.swapBundle("pii", bad, DEPLOY)).code).toBe("INVALID_HOOK");
    const badProfile = profileRevision(digest("h"), [profileHook("x", digest("h"), { fail_closed: true, trust: "session" })]);
    expect(catchVcp(() => registry.swapBundle("no-rm", badProfile, DEPLOY)).code).toBe("INVALID_HOOK");
    expect(registry.snapshot()).toBe(before);
    expect(events.length).toBe(count);
  });

  test("only deployment scope swaps a bundle; a client may not", () => {
    const { registry } = harness();
    expect(catchVcp(() => registry.swapBundle("pii", vcpRevision("1.0.0", digest("a")), inSession("s1"))).code).toBe("INVALID_HOOK");
    expect(catchVcp(() => registry.swapBundle("pii", vcpRevision("1.0.0", digest("a")), { scope: "deployment", principal: { id: "bob", role: "client" } })).code).toBe("UNAUTHORIZED_PRINCIPAL");
  });
});
