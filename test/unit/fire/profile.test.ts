// Implicit sessions of profile events (PROFILES §8.3): created on first use, owned by the sender, ids
// per owner (another client's equal id is its own session: it can neither reach nor squat this one),
// expired after the profile's idle TTL, capped per client — and a cap never refuses an event (issue
// 24): past it the least recently used idle session is evicted, counted in
// vcp_implicit_sessions_evicted_total{scope="replica"}. Also: the plan cache stays bounded whatever
// event names clients send, and the guard every answer carries.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, test } from "vitest";
import { createMetrics, type Metrics } from "../../../src/observe/metrics.js";
import { registerProfile } from "../../../src/profiles/index.js";
import { createProfileFirer } from "../../../src/fire/profile.js";
import { resolveEnabledProfiles, type EnabledProfile } from "../../../src/profiles/enabled.js";
import { createRegistry } from "../../../src/registry/index.js";
import { resolveJsonBounds } from "../../../src/model/json-bounds.js";
import type { ProfileHookDefinition } from "../../../src/model/hook.js";
import echoProfile from "../../support/echo-profile.js";

registerProfile(echoProfile);

const DIGEST = `sha256:${"a".repeat(64)}`;

/** The registry as these tests drive it: a profile bundle's hooks set and removed, its plans and guard read. */
function profileStore() {
  const registry = createRegistry({ clock: { now: () => 0, wallNow: () => 0 }, emit: () => undefined });
  const runtime = { scope: "deployment", principal: { id: "runtime", role: "system" } } as const;
  return {
    registry,
    set: (bundle: string, profile: string, hooks: ProfileHookDefinition[], digest: string) =>
      void registry.swapBundle(bundle, { version: "1.0.0", digest, deployment: [], session: [], profile: { id: profile, hooks } }, runtime),
    delete: (bundle: string) => void registry.swapBundle(bundle, null, runtime),
    plan: (enabled: EnabledProfile, event: string) => registry.snapshot().profilePlan(enabled, event),
    guard: (profileId: string) => registry.snapshot().guard(profileId),
    get cachedPlans() {
      return registry.snapshot().cachedProfilePlans;
    },
  };
}
type ProfileStore = ReturnType<typeof profileStore>;

/** A deployment hook of the echo profile's `Check` event (the registry's own compile rules apply). */
function checkHook(name: string, extra: Partial<ProfileHookDefinition> = {}): ProfileHookDefinition {
  return {
    name, event: "Check", priority: 50, timeout_ms: 1000, action: { bundle: "held", export: name, digest: DIGEST },
    condition: null, enabled: true, metadata: {}, fail_closed: false, trust: "deployment", ...extra,
  } as ProfileHookDefinition;
}

function firer(options: { ttlS?: number; cap?: number; store?: ProfileStore } = {}) {
  let now = 0;
  const dispatched: unknown[] = [];
  // Chains wait here until the test releases them: an event in flight.
  const held: Array<() => void> = [];
  const metrics = createMetrics(() => ({}) as never);
  const f = createProfileFirer({
    enabled: resolveEnabledProfiles({ echo: { session_ttl_s: options.ttlS ?? 60 } }),
    registry: (options.store ?? profileStore()).registry,
    backend: {
      runChain: async (task: { request: { chainId: string } }) => {
        dispatched.push(task);
        await new Promise<void>((resolve) => held.push(resolve));
        return {
          result: {
            chain_id: task.request.chainId, status: "completed", reason: null, aborted_by: null, context: {}, constitution: {},
            cascade_failure: false, hook_results: [], duration_ms: 0, profile: { profile: "echo", event: "Check", mode: "sequential", native: {}, exit_code: 0 },
          },
        };
      },
    } as never,
    audit: () => undefined,
    metrics,
    clock: { now: () => now, wallNow: () => now },
    inputBounds: resolveJsonBounds({}),
    maxSessionsPerOwner: options.cap ?? 100,
    assertOpen: () => undefined,
    pin: () => undefined,
    unpin: () => undefined,
  });
  return { f, metrics, advance: (ms: number) => (now += ms), dispatched, release: () => held.splice(0).forEach((r) => r()) };
}

/** vcp_implicit_sessions_evicted_total{scope} as a scrape shows it. */
async function evictions(metrics: Metrics, scope: "replica" | "all_replicas" = "replica"): Promise<number> {
  const metric = await metrics.registry.getSingleMetric("vcp_implicit_sessions_evicted_total")!.get();
  return metric.values.find((v) => v.labels["scope"] === scope)?.value ?? 0;
}

const alice = { id: "alice", role: "client" } as const;
const bob = { id: "bob", role: "client" } as const;
const fire = (f: ReturnType<typeof firer>["f"], principal: { id: string; role: "client" }, session: string) => f.fire("echo", "Notice", { input: { session_id: session }, principal });

describe("implicit profile sessions", () => {
  test("session ids are per owner: another client's equal id is its own session, so it can neither reach nor squat the first; an empty plan dispatches nothing", async () => {
    const { f, metrics, dispatched } = firer({ cap: 1 });
    await expect(fire(f, alice, "s1")).resolves.toMatchObject({ native: {}, exit_code: 0 });
    // Bob sending alice's id opens bob's own session (it counts against bob's cap, not alice's).
    await expect(fire(f, bob, "s1")).resolves.toMatchObject({ exit_code: 0 });
    // Bob's second session evicts bob's first, never alice's.
    await expect(fire(f, bob, "s2")).resolves.toMatchObject({ exit_code: 0 });
    expect(await evictions(metrics)).toBe(1);
    await expect(fire(f, alice, "s1")).resolves.toMatchObject({ exit_code: 0 });
    expect(await evictions(metrics)).toBe(1);
    // A squatter first: the rightful sender is still served.
    await expect(fire(f, bob, "s1")).resolves.toMatchObject({ exit_code: 0 });
    expect(dispatched).toHaveLength(0);
  });

  test("a client past its cap is never refused: its least recently used session is evicted", async () => {
    const { f, metrics } = firer({ cap: 2 });
    await fire(f, alice, "a");
    await fire(f, alice, "b");
    await fire(f, alice, "a"); // a is now the most recently used
    await expect(fire(f, alice, "c")).resolves.toMatchObject({ exit_code: 0 });
    expect(await evictions(metrics)).toBe(1); // b went
    await fire(f, alice, "a");
    await fire(f, alice, "c");
    expect(await evictions(metrics)).toBe(1); // a and c were kept
    await expect(fire(f, alice, "b")).resolves.toMatchObject({ exit_code: 0 });
    expect(await evictions(metrics)).toBe(2);
    // Hundreds past the cap: every event answered, the table stays at the cap.
    for (let i = 0; i < 300; i++) await expect(fire(f, alice, `many-${i}`)).resolves.toMatchObject({ exit_code: 0 });
    expect(await evictions(metrics)).toBe(302);
  });

  test("after session_ttl_s idle the session expires: it stops counting, and making room for a new one is no eviction", async () => {
    const { f, metrics, advance } = firer({ ttlS: 10, cap: 1 });
    await fire(f, alice, "s1");
    advance(5_000);
    await fire(f, alice, "s1"); // use resets the idle clock
    advance(9_000);
    await fire(f, alice, "s2"); // s1 still live: evicted
    expect(await evictions(metrics)).toBe(1);
    advance(11_000);
    await fire(f, alice, "s1"); // s2 expired meanwhile: not an eviction
    expect(await evictions(metrics)).toBe(1);
  });

  test("a session answering an event is not idle: the next idle one is evicted in its place", async () => {
    const store = profileStore();
    store.set("held", "echo", [checkHook("hold")], DIGEST);
    const { f, metrics, release, dispatched } = firer({ cap: 2, store });
    const busy = f.fire("echo", "Check", { input: { session_id: "busy", tool: "ls" }, principal: alice });
    await expect.poll(() => dispatched.length).toBe(1);
    await fire(f, alice, "idle");
    // "busy" is the least recently used, but its event is in flight: "idle" is evicted.
    await fire(f, alice, "new");
    expect(await evictions(metrics)).toBe(1);
    release();
    await expect(busy).resolves.toMatchObject({ exit_code: 0 });
    await fire(f, alice, "busy"); // still there: nothing evicted
    expect(await evictions(metrics)).toBe(1);
  });

  test("vcp@1 events are refused here: they keep their own path", async () => {
    const { f } = firer();
    await expect(f.fire("vcp", "pre_inject", { input: {} })).rejects.toMatchObject({ code: "UNKNOWN_PROFILE" });
  });
});

describe("the plan cache and the guard", () => {
  test("40,000 custom Amplifier event names leave the plan cache at its bound: no entry, no memory per name", () => {
    // A forced collection around the loop: what stays is what the store keeps (+16–40 MB before the fix).
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const store = profileStore();
    const amplifier = resolveEnabledProfiles({ amplifier: {} }).get("amplifier")!;
    for (const event of ["tool:pre", "session:start"]) store.plan(amplifier, event);
    const bound = store.cachedPlans;
    gc();
    const before = process.memoryUsage().heapUsed;
    let planned = 0;
    for (let i = 0; i < 40_000; i++) planned += store.plan(amplifier, `custom:event-${i}`).hooks.length;
    gc();
    const kept = process.memoryUsage().heapUsed - before;
    expect(planned).toBe(0);
    expect(kept).toBeLessThan(4 * 1024 * 1024);
    expect(store.cachedPlans).toBe(bound);
    expect(bound).toBe(2);
  });

  test("the guard names the events an enabled fail_closed hook guards, bound to the bundles' revisions, with one identity per change", () => {
    const store = profileStore();
    expect(store.guard("echo").guard.fail_closed_events).toEqual([]);
    store.set("held", "echo", [checkHook("open"), checkHook("off", { fail_closed: true, enabled: false })], DIGEST);
    expect(store.guard("echo").guard.fail_closed_events).toEqual([]);
    store.set("guard", "echo", [checkHook("closed", { fail_closed: true })], `sha256:${"b".repeat(64)}`);
    const { guard, eventsHeader, hooksByEvent } = store.guard("echo");
    expect(guard.fail_closed_events).toEqual(["Check"]);
    expect(eventsHeader).toBe("Check");
    expect(hooksByEvent.get("Check")!.map((h) => h.name)).toEqual(["closed"]);
    expect(guard.revisions).toMatch(/^[0-9a-f]{64}$/);
    expect(store.guard("echo").guard).toBe(guard); // computed once per change, not per answer
    store.delete("guard");
    expect(store.guard("echo").guard.fail_closed_events).toEqual([]);
    expect(store.guard("echo").guard.revisions).not.toBe(guard.revisions);
  });
});

describe("events newer than the profile (claude-code: an event Claude Code added after 2.1.332)", () => {
  function claudeFirer() {
    const store = profileStore();
    const metrics = createMetrics(() => ({}) as never);
    const records: Array<Record<string, unknown>> = [];
    const warned: Array<Record<string, unknown>> = [];
    let dispatched = 0;
    const f = createProfileFirer({
      enabled: resolveEnabledProfiles({ "claude-code": {} }),
      registry: store.registry,
      backend: { runChain: async () => { dispatched++; throw new Error("no chain runs for an unknown event"); } } as never,
      audit: () => ({
        inputHash: () => "h".repeat(64),
        recordProfileUnknownEvent: async (r: Record<string, unknown>) => { records.push(r); },
      }) as never,
      metrics,
      logger: { isLevelEnabled: () => true, debug: () => {}, info: () => {}, warn: (o: object) => { warned.push(o as Record<string, unknown>); }, error: () => {} },
      clock: { now: () => 0, wallNow: () => 0 },
      inputBounds: resolveJsonBounds({}),
      maxSessionsPerOwner: 100,
      assertOpen: () => undefined,
      pin: () => undefined,
      unpin: () => undefined,
    });
    return { f, store, metrics, records, warned, dispatched: () => dispatched };
  }
  test("answered {} with exit code 0, no hook run, audited as unknown_event and counted", async () => {
    const { f, metrics, records, dispatched } = claudeFirer();
    const out = await f.fire("claude-code", "PostToolBatchSummary", { input: { session_id: "s1", hook_event_name: "PostToolBatchSummary", whatever: [1] }, principal: alice });
    expect(out).toMatchObject({ native: {}, exit_code: 0, unknown_event: true, result: { profile: "claude-code", event: "PostToolBatchSummary", status: "completed", hook_results: [] } });
    expect(dispatched()).toBe(0);
    // Its one decision record, on the answer and the audit record: an allow no hook made, and why.
    expect(out.decision).toMatchObject({ chain_id: out.result.chain_id, outcome: "allow", decided_by: null, reason: "unknown event, observe-only", subject: { kind: "event" }, hooks: [] });
    expect(records).toEqual([{ chainId: out.result.chain_id, profile: "claude-code", event: "PostToolBatchSummary", owner: "alice", session: "s1", inputHash: "h".repeat(64), exitCode: 0, decision: out.decision }]);
    const counted = await metrics.registry.getSingleMetric("vcp_profile_unknown_events_total")!.get();
    expect(counted.values).toEqual([{ labels: { profile: "claude-code" }, value: 1 }]);
  });

  test("cheap whatever names clients send: no plan cached, no session opened, one warning per name up to a bound", async () => {
    const { f, store, warned } = claudeFirer();
    for (let i = 0; i < 200; i++) await f.fire("claude-code", `FutureEvent${i % 100}`, { input: { session_id: `s${i}` }, principal: alice });
    expect(store.cachedPlans).toBe(0);
    expect(warned.length).toBe(64);
    expect(new Set(warned.map((w) => w["event"])).size).toBe(64);
  });

  test("the input is still bounded and checked; a name that is no Claude Code event name stays UNKNOWN_EVENT", async () => {
    const { f, records } = claudeFirer();
    await expect(f.fire("claude-code", "FutureEvent", { input: ["not", "an", "object"] })).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await expect(f.fire("claude-code", "FutureEvent", { input: { hook_event_name: "PreToolUse" } })).rejects.toMatchObject({ code: "INVALID_INPUT", details: { field: "hook_event_name" } });
    await expect(f.fire("claude-code", "FutureEvent", { input: { d: JSON.parse(`${'{"d":'.repeat(70)}{}${"}".repeat(70)}`) } })).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await expect(f.fire("claude-code", "before_tool", { input: {} })).rejects.toMatchObject({ code: "UNKNOWN_EVENT" });
    expect(records).toEqual([]);
  });

  test("profiles without a pattern keep UNKNOWN_EVENT", async () => {
    const { f } = firer();
    await expect(f.fire("echo", "FutureEvent", { input: {} })).rejects.toMatchObject({ code: "UNKNOWN_EVENT" });
  });
});

describe("fireProfile on the in-process test backend", () => {
  test("the vm backend runs profile chains as the sandbox worker does", async () => {
    const { createRuntime } = await import("../../../src/index.js");
    const { createVmBackend } = await import("../../support/vm-backend.js");
    const { profileBundle } = await import("../../support/bundles.js");
    const runtime = await createRuntime({ backend: createVmBackend() });
    try {
      await runtime.bundles.install(profileBundle("vmb", "echo", [{ name: "guard", matcher: "^rm$" }, { name: "quiet" }], { guard: "() => ({ decision: 'block', reason: 'no' })", quiet: "() => undefined" }, {}, "Check"));
      const out = await runtime.fireProfile("echo", "Check", { input: { tool: "rm" } });
      expect(out).toMatchObject({ exit_code: 2, native: { decision: "block", reason: "no" } });
      expect(out.result.hook_results.map((h) => h.outcome)).toEqual(["ok", "ok"]);
    } finally {
      await runtime.close();
    }
  });
});
