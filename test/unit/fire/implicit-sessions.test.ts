// A replica's implicit sessions (src/fire/implicit-sessions.ts) over the count port: which sessions
// count, sessions in use evicted last, and with a shared count (here an in-memory count standing in
// for Redis, so the replica's own rules are what is tested): what it evicts leaves this replica too,
// a session in use stays until its event ends, and a shared count that does not answer leaves this
// replica's count as the cap — the event is still answered.
import { describe, expect, test } from "vitest";
import { VcpError } from "../../../src/errors.js";
import { createImplicitSessions } from "../../../src/fire/implicit-sessions.js";
import { createLocalImplicitSessionStore } from "../../../src/pipeline/implicit-sessions-local.js";
import type { ImplicitAdmission, ImplicitSessionStore } from "../../../src/pipeline/implicit-sessions.js";

const alice = { id: "alice", role: "client" } as const;
const TTL = 60_000;

function harness(options: { limit?: number; shared?: "ok" | "down" | "unavailable" } = {}) {
  let now = 1_000;
  const clock = { now: () => now };
  const evictions: Record<string, number> = { replica: 0, all_replicas: 0 };
  const admitted: ImplicitAdmission[] = [];
  const deployment = createLocalImplicitSessionStore(clock);
  const shared: ImplicitSessionStore<false> = {
    scope: "all_replicas",
    available: () => options.shared !== "unavailable",
    async admit(input) {
      admitted.push({ ...input, inUse: new Set(input.inUse) });
      if (options.shared === "down") throw new VcpError("STORE_UNAVAILABLE", "redis is down", { operation: "counting" });
      return deployment.admit(input);
    },
    async release(owner, member) {
      deployment.release(owner, member);
    },
  };
  const implicit = createImplicitSessions({
    clock, limit: options.limit ?? 2,
    metrics: { recordImplicitEvictions: (scope, n) => void (evictions[scope]! += n) },
    ...(options.shared !== undefined ? { shared } : {}),
  });
  return { implicit, evictions, admitted, deployment, step: (ms: number) => void (now += ms) };
}

describe("implicit sessions on one replica", () => {
  test("a client's sessions are counted and keyed per owner; the embedding application's and operators' are not counted", async () => {
    const { implicit, evictions } = harness({ limit: 1 });
    const mine = await implicit.open("echo", TTL, "s1", alice);
    const bobs = await implicit.open("echo", TTL, "s1", { id: "bob", role: "client" });
    expect(mine.stateKey).not.toBe(bobs.stateKey);
    for (let i = 0; i < 5; i++) (await implicit.open("echo", TTL, `app-${i}`, undefined)).end();
    for (let i = 0; i < 5; i++) (await implicit.open("echo", TTL, `ops-${i}`, { id: "ops", role: "operator" })).end();
    expect(evictions).toEqual({ replica: 0, all_replicas: 0 });
    mine.end();
    (await implicit.open("echo", TTL, "s2", alice)).end();
    expect(evictions.replica).toBe(1);
  });

  test("the shared count is asked when a session is new here or due for its refresh, not at every event", async () => {
    const { implicit, admitted, step } = harness({ shared: "ok" });
    for (let i = 0; i < 10; i++) (await implicit.open("echo", TTL, "s1", alice)).end();
    expect(admitted).toHaveLength(1);
    step(5_000);
    (await implicit.open("echo", TTL, "s1", alice)).end();
    expect(admitted).toHaveLength(2);
  });

  test("every session in use: the least recently used is evicted from both counts anyway; its event finishes, and its next use is a new session", async () => {
    const { implicit, evictions, admitted, step } = harness({ limit: 2, shared: "ok" });
    const a = await implicit.open("echo", TTL, "a", alice);
    step(1);
    const b = await implicit.open("echo", TTL, "b", alice);
    step(1);
    const c = await implicit.open("echo", TTL, "c", alice);
    // The counts were told which sessions this replica is answering now.
    expect(admitted.at(-1)!.inUse).toEqual(new Set(['["echo","a"]', '["echo","b"]', '["echo","c"]']));
    expect(evictions).toEqual({ replica: 1, all_replicas: 1 });
    for (const session of [a, b, c]) session.end();
    step(1);
    const asked = admitted.length;
    (await implicit.open("echo", TTL, "a", alice)).end();
    // "a" is new again: the shared count is asked at once, and "b" makes room in both counts.
    expect(admitted).toHaveLength(asked + 1);
    expect(evictions).toEqual({ replica: 2, all_replicas: 2 });
  });

  test("a shared count that does not answer (or is disconnected) leaves this replica's count as the cap; the event is answered", async () => {
    for (const shared of ["down", "unavailable"] as const) {
      const { implicit, evictions } = harness({ limit: 2, shared });
      for (let i = 0; i < 5; i++) await expect(Promise.resolve(implicit.open("echo", TTL, `s${i}`, alice)).then((s) => s.end())).resolves.toBeUndefined();
      expect(evictions).toEqual({ replica: 3, all_replicas: 0 });
    }
  });
});
