// Periodic hooks across replicas (issue 18, "Done when"): with three real replicas on one real
// redis-server, a session's periodic hook fires once per interval in the whole deployment (each tick
// number once, never on two replicas), and keeps firing after the replica holding its lease is
// `kill -9`ed. Each tick appends its tick_count to the session context, so a double fire would show
// as a repeated number and a stalled schedule as a list that stops growing.
// `npm run build` first (the replicas run dist/).
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { keyPart } from "../../../src/store/keys.js";
import { startReplicas, waitFor, type Replica, type ReplicaSet } from "../../support/replicas.js";
import { bundleCode } from "../../support/bundles.js";
import { installedDigest } from "./fixtures.js";

const INTERVAL_MS = 1000;
const manifest = {
  bundle: "ticker",
  version: "1.0.0",
  trust: "deployment",
  hooks: [{ name: "tick", type: "periodic", action: "tick", priority: 50, timeout_ms: 2000, metadata: { interval_ms: INTERVAL_MS } }],
};
const code = bundleCode({
  tick: `(input) => {
    var ctx = JSON.parse(JSON.stringify(input.context));
    ctx.ticks = (Array.isArray(ctx.ticks) ? ctx.ticks : []).concat([input.event.tick_count]);
    return { status: "modify", modified_context: ctx };
  }`,
});
const constitution = { id: "c1", version: "1", rules: [{ id: "r1", text: "Be kind." }] };

let set: ReplicaSet;

beforeAll(async () => {
  set = await startReplicas({ count: 3 });
  // Uploaded to A once: shared bundles bring it to B and C.
  const artifact = set.sign(manifest, code);
  const res = await set.replicas[0]!.request("PUT", "/v1/bundles/ticker", { token: set.tokens.operator, body: artifact });
  expect(res.status, res.text).toBe(201);
  for (const r of set.replicas) await waitFor(`${r.name} to run the ticker`, async () => (await installedDigest(set, r, "ticker")) === artifact.digest);
}, 300_000);
afterAll(async () => {
  await set?.close();
}, 120_000);

/** The session key of a client's session (src/pipeline/access.ts sessionKey), as keys.ts names its parts. */
const leaseKey = (owner: string, id: string) => `${(set.config.store as { prefix: string }).prefix}:s:{${keyPart(`\u0000${JSON.stringify([owner, id])}`)}}:${keyPart("periodic-lease deployment/tick")}`;

async function ticksOf(r: Replica, id: string): Promise<number[]> {
  const res = await r.request("GET", `/v1/sessions/${id}`, { token: set.tokens.client });
  expect(res.status, res.text).toBe(200);
  return (res.body.context.ticks ?? []) as number[];
}

function expectEachTickOnce(ticks: number[]): void {
  // Strictly increasing: no tick number fired twice (on one replica or two), none out of order.
  for (let i = 1; i < ticks.length; i++) expect(ticks[i], `ticks ${JSON.stringify(ticks)}`).toBeGreaterThan(ticks[i - 1]!);
}

describe("periodic hooks across three replicas", () => {
  test("a periodic hook fires once per interval across the replicas, and keeps firing after its owner is kill -9ed", async () => {
    const [A, B, C] = set.replicas as [Replica, Replica, Replica];
    const opened = await A.request("POST", "/v1/sessions", { token: set.tokens.client, body: { session_id: "p", context: { ticks: [] }, constitution } });
    expect(opened.status).toBe(201);
    const started = Date.now();
    const firstFour = await waitFor("four ticks", async () => {
      const t = await ticksOf(B, "p");
      return t.length >= 4 ? t : undefined;
    });
    const elapsed = Date.now() - started;
    expectEachTickOnce(firstFour);
    // Once per interval in the whole deployment: three replicas must not make it three times as often.
    const ticksNow = (await ticksOf(C, "p")).length;
    expect(ticksNow).toBeLessThanOrEqual(Math.floor((Date.now() - started) / INTERVAL_MS) + 1);
    expect(elapsed).toBeGreaterThanOrEqual(3 * INTERVAL_MS);

    // Who owns the lease now: kill it.
    const owner = String(await set.redis.command("GET", leaseKey("app", "p")));
    expect(["A", "B", "C"]).toContain(owner);
    const victim = set.byName(owner);
    const survivor = set.replicas.find((r) => r !== victim)!;
    const before = await ticksOf(survivor, "p");
    await victim.kill9();
    const after = await waitFor("three more ticks after the owner died", async () => {
      const t = await ticksOf(survivor, "p");
      return t.length >= before.length + 3 ? t : undefined;
    });
    expectEachTickOnce(after);
    const newOwner = String(await set.redis.command("GET", leaseKey("app", "p")));
    expect(newOwner).not.toBe(owner);
    // The view reports the shared schedule: tick_count is the last tick number claimed.
    const view = await survivor.request("GET", "/v1/sessions/p", { token: set.tokens.client });
    expect(view.body.periodic).toEqual([expect.objectContaining({ hook: "tick", scope: "deployment", interval_ms: INTERVAL_MS })]);
    expect(view.body.periodic[0].tick_count).toBeGreaterThanOrEqual(after[after.length - 1]!);
    // Ticks skipped around the takeover (a takeover within one interval skips none), for the report.
    console.log(`periodic: owner ${owner} killed; ticks ${JSON.stringify(after)}; skipped ${view.body.periodic[0].skipped}`);
    await victim.start();
    await survivor.request("DELETE", "/v1/sessions/p", { token: set.tokens.client });
  }, 240_000);
});
