// Implicit sessions of profile events (PROFILES §8.3): created on first use, owned by the sender, ids
// per owner (another client's equal id is its own session: it can neither reach nor squat this one),
// expired after the profile's idle TTL, capped per client.
import { describe, expect, test } from "vitest";
import { createMetrics } from "../../../src/observe/metrics.js";
import { registerProfile } from "../../../src/profiles/index.js";
import { createProfileFirer } from "../../../src/runtime/fire-profile.js";
import { createProfileHookStore, resolveEnabledProfiles } from "../../../src/runtime/profile-hooks.js";
import { resolveJsonBounds } from "../../../src/model/json-bounds.js";
import echoProfile from "../../support/echo-profile.js";

registerProfile(echoProfile);

function firer(options: { ttlS?: number; cap?: number } = {}) {
  let now = 0;
  const dispatched: unknown[] = [];
  const f = createProfileFirer({
    enabled: resolveEnabledProfiles({ echo: { session_ttl_s: options.ttlS ?? 60 } }),
    store: createProfileHookStore(),
    backend: { runChain: async (task: unknown) => (dispatched.push(task), Promise.reject(new Error("no dispatch expected"))) } as never,
    audit: () => undefined,
    metrics: createMetrics(() => ({}) as never),
    clock: { now: () => now, wallNow: () => now },
    inputBounds: resolveJsonBounds({}),
    maxSessionsPerOwner: options.cap ?? 100,
    assertOpen: () => undefined,
    pin: () => undefined,
    unpin: () => undefined,
  });
  return { f, advance: (ms: number) => (now += ms), dispatched };
}

const alice = { id: "alice", role: "client" } as const;
const bob = { id: "bob", role: "client" } as const;
const fire = (f: ReturnType<typeof firer>["f"], principal: { id: string; role: "client" }, session: string) => f.fire("echo", "Notice", { input: { session_id: session }, principal });

describe("implicit profile sessions", () => {
  test("session ids are per owner: another client's equal id is its own session, so it can neither reach nor squat the first; an empty plan dispatches nothing", async () => {
    const { f, dispatched } = firer({ cap: 1 });
    await expect(fire(f, alice, "s1")).resolves.toMatchObject({ native: {}, exit_code: 0 });
    // Bob sending alice's id opens bob's own session (it counts against bob's cap, not alice's).
    await expect(fire(f, bob, "s1")).resolves.toMatchObject({ exit_code: 0 });
    await expect(fire(f, bob, "s2")).rejects.toMatchObject({ code: "SESSION_LIMIT" });
    await expect(fire(f, alice, "s1")).resolves.toMatchObject({ exit_code: 0 });
    // A squatter first: the rightful sender is still served.
    await expect(fire(f, bob, "s1")).resolves.toMatchObject({ exit_code: 0 });
    expect(dispatched).toHaveLength(0);
  });

  test("after session_ttl_s idle the session expires and stops counting against its owner's cap", async () => {
    const { f, advance } = firer({ ttlS: 10, cap: 1 });
    await fire(f, alice, "s1");
    advance(5_000);
    await fire(f, alice, "s1"); // use resets the idle clock
    advance(9_000);
    await expect(fire(f, alice, "s2")).rejects.toMatchObject({ code: "SESSION_LIMIT" });
    advance(11_000);
    await expect(fire(f, alice, "s2")).resolves.toMatchObject({ exit_code: 0 });
  });

  test("a client has at most maxSessionsPerOwner live sessions; expired ones stop counting", async () => {
    const { f, advance } = firer({ ttlS: 10, cap: 2 });
    await fire(f, alice, "a");
    await fire(f, alice, "b");
    await expect(fire(f, alice, "c")).rejects.toMatchObject({ code: "SESSION_LIMIT" });
    advance(11_000);
    await expect(fire(f, alice, "c")).resolves.toMatchObject({ exit_code: 0 });
  });

  test("vcp@1 events are refused here: they keep their own path", async () => {
    const { f } = firer();
    await expect(f.fire("vcp", "pre_inject", { input: {} })).rejects.toMatchObject({ code: "UNKNOWN_PROFILE" });
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
