import { describe, expect, test } from "vitest";
import { createLocalRateLimitStore } from "../../../src/registry/rate-limit-local.js";
import { gcraSpacing } from "../../../src/registry/rate-limit.js";
import { createRegistry } from "../../../src/registry/index.js";
import { DEPLOY, OPERATOR, SYSTEM, catchVcp, def, fakeClock, harness, inSession } from "./fixtures.js";

// The port's cases (bursts, spacing, clock steps) run on both adapters in
// test/integration/scale-out/rate-limit-store.test.ts; this is what only the in-memory one does.
describe("createLocalRateLimitStore", () => {
  test("sweeping many distinct keys forgets only full buckets", () => {
    const clock = fakeClock();
    const store = createLocalRateLimitStore(clock);
    const one = gcraSpacing(1);
    for (let i = 0; i < 5_000; i++) store.take(`k${i}`, one);
    // The sweeps that ran while the map grew must not have dropped these still-empty buckets.
    for (let i = 0; i < 5_000; i += 500) expect(store.take(`k${i}`, one).ok).toBe(false);
    clock.advance(60_000);
    for (let i = 0; i < 5_000; i++) expect(store.take(`k${i}`, one).ok).toBe(true);
  });
});

describe("registry rate limiting (spec §8.2.5)", () => {
  test("each mutating call consumes one unit; over the limit → RATE_LIMITED; refilled after time passes", () => {
    const { registry, clock } = harness({ registrationsPerMinute: 4 });
    registry.register(def({ name: "a" }), DEPLOY);
    registry.registerAll([def({ name: "b" }), def({ name: "c" })], DEPLOY);
    registry.setEnabled("a", false, DEPLOY);
    registry.deregister("b", DEPLOY);
    const err = catchVcp(() => registry.replace(["c"], [def({ name: "d" })], DEPLOY));
    expect(err.code).toBe("RATE_LIMITED");
    expect(err.details).toEqual({ principal: "alice", limit: 4, retry_after_ms: 15_000 });
    expect(err.message).toContain("alice");
    expect(registry.snapshot().find("c", "deployment")).toBeDefined();

    clock.advance(15_000);
    registry.replace(["c"], [def({ name: "d" })], DEPLOY);
    expect(registry.snapshot().find("d", "deployment")).toBeDefined();
    expect(catchVcp(() => registry.deregister("d", DEPLOY)).code).toBe("RATE_LIMITED");
  });

  test("failed calls count too: invalid registrations cannot be used to hammer the registry", () => {
    const { registry } = harness({ registrationsPerMinute: 2 });
    catchVcp(() => registry.register(def({ priority: 101 }), DEPLOY));
    catchVcp(() => registry.deregister("nope", DEPLOY));
    expect(catchVcp(() => registry.register(def(), DEPLOY)).code).toBe("RATE_LIMITED");
  });

  test("the limit is per principal id", () => {
    const { registry } = harness({ registrationsPerMinute: 1 });
    registry.register(def({ name: "a" }), DEPLOY);
    expect(catchVcp(() => registry.register(def({ name: "b" }), DEPLOY)).code).toBe("RATE_LIMITED");
    registry.register(def({ name: "b" }), { scope: "deployment", principal: { id: "carol", role: "operator" } });
    registry.register(def({ name: "strip-pii" }), inSession("s1", { id: "dave", role: "client" }));
    expect(registry.snapshot().hooks().map((h) => h.name)).toEqual(["a", "b", "strip-pii"]);
  });

  test("role system is exempt; dropSession is not limited", () => {
    const { registry } = harness({ registrationsPerMinute: 1 });
    const sys = { scope: "deployment" as const, principal: SYSTEM };
    for (let i = 0; i < 10; i++) registry.register(def({ name: `h${i}` }), sys);
    for (let i = 0; i < 10; i++) registry.setEnabled(`h${i}`, false, sys);
    for (let i = 0; i < 10; i++) registry.dropSession(`s${i}`);
    expect(registry.snapshot().hooks()).toHaveLength(10);
  });

  test("a change admitted by the limit shared by every replica (rateAdmitted: shared) is not counted again; authority still is", () => {
    const { registry } = harness({ registrationsPerMinute: 1 });
    const bob = { id: "bob", role: "client" as const };
    registry.register(def({ name: "strip-pii" }), { ...inSession("s1", bob), rateAdmitted: "shared" });
    registry.register(def({ name: "strip-pii" }), { ...inSession("s2", bob), rateAdmitted: "shared" });
    // Not on the session hook allowlist: refused whatever admitted its rate.
    expect(catchVcp(() => registry.register(def({ name: "other" }), { ...inSession("s3", bob), rateAdmitted: "shared" })).code).toBe("SESSION_HOOK_NOT_ALLOWED");
    // bob's own per-replica unit is still whole: one change without the flag passes, the next is limited.
    registry.register(def({ name: "strip-pii" }), inSession("s4", bob));
    expect(catchVcp(() => registry.register(def({ name: "strip-pii" }), inSession("s5", bob))).code).toBe("RATE_LIMITED");
  });

  test("default is 30 per minute", () => {
    const registry = createRegistry({ clock: fakeClock(), emit: () => {} });
    for (let i = 0; i < 30; i++) registry.register(def({ name: `h${i}` }), { scope: "deployment", principal: OPERATOR });
    const err = catchVcp(() => registry.register(def({ name: "h30" }), { scope: "deployment", principal: OPERATOR }));
    expect(err.details).toMatchObject({ limit: 30, retry_after_ms: 2_000 });
  });

  test.each([0, -1, 1.5, Number.NaN])("registrationsPerMinute %s is INVALID_CONFIG", (n) => {
    expect(catchVcp(() => createRegistry({ clock: fakeClock(), emit: () => {}, registrationsPerMinute: n })).code).toBe("INVALID_CONFIG");
  });
});
