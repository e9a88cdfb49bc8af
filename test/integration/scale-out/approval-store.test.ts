// The approval store port (src/pipeline/approvals.ts ApprovalStore) has two adapters: in memory
// (pipeline/approvals-local.ts) and Redis (store/approvals.ts). The coordinator's rules hold only if
// both answer each atomic step alike: the same cases run against each, the Redis one on a real
// redis-server.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, test } from "vitest";
import { allowAlwaysKey, resolveApprovalLimits, type Approval, type ApprovalEvent, type ApprovalStore } from "../../../src/pipeline/approvals.js";
import { createLocalApprovalStore } from "../../../src/pipeline/approvals-local.js";
import { createRedisApprovalStore, sessionRedisOf, storeKeys } from "../../../src/store/index.js";
import { useRedisStore } from "../../support/redis-store.js";

const redis = useRedisStore("approvalport");

const limits = resolveApprovalLimits({ maxPendingPerSession: 2, maxPendingPerClient: 3, maxPending: 4, retainDecided: 2 });

function approval(over: Partial<Approval> = {}): Approval {
  const now = Date.now();
  return {
    id: randomUUID(), session: "s1", owner: "alice", profile: "amplifier", event: "tool:pre", chain_id: null, hook: "guard",
    prompt: "Run rm?", prompt_sha256: "a".repeat(64), prompt_chars: 7, prompt_truncated: false, options: ["Allow", "Deny"], default: "deny",
    timeout_s: 60, created_at: new Date(now).toISOString(), expires_at: new Date(now + 60_000).toISOString(), state: "pending", ...over,
  };
}

function insert(store: ApprovalStore, view: Approval) {
  const granted: Approval = { ...view, state: "granted", decision: "allow always", decided_by: "allow_always", decided_at: view.created_at };
  return store.insert({ pending: view, granted, alwaysKey: allowAlwaysKey(view), fullPrompt: undefined, limits });
}

const settleOptions = { retainDecided: limits.retainDecided, maxAlways: 256 };

const adapters: Array<[string, () => ApprovalStore]> = [
  ["in memory", () => createLocalApprovalStore()],
  // A fresh key prefix per case: each starts from an empty store, as a fresh local one does.
  ["redis", () => createRedisApprovalStore({ ...sessionRedisOf(redis(), "r1", 2000), keys: storeKeys(`approvalport-${randomUUID()}`) }, { pollMs: 60_000 })],
];

describe.each(adapters)("approval store port: %s", (_name, make) => {
  let store: ApprovalStore;
  beforeAll(() => {
    store = make();
  });

  test("limits in order: per session, then per client, then overall; a refused insert keeps nothing", async () => {
    const mine = `own-${randomUUID()}`;
    expect(await insert(store, approval({ owner: mine, session: "a" }))).toEqual({ kind: "pending" });
    expect(await insert(store, approval({ owner: mine, session: "a" }))).toEqual({ kind: "pending" });
    const refused = approval({ owner: mine, session: "a" });
    expect(await insert(store, refused)).toEqual({ kind: "limit", scope: "session", count: 2 });
    expect(await store.load(refused.id)).toBeUndefined();
    expect(await insert(store, approval({ owner: mine, session: "b" }))).toEqual({ kind: "pending" });
    expect(await insert(store, approval({ owner: mine, session: "c" }))).toEqual({ kind: "limit", scope: "client", count: 3 });
    // The embedding application's asks (owner null) count toward the overall limit only.
    expect(await insert(store, approval({ owner: null, session: "d" }))).toEqual({ kind: "pending" });
    expect(await insert(store, approval({ owner: null, session: "e" }))).toEqual({ kind: "limit", scope: "runtime", count: 4 });
  });
});

describe.each(adapters)("approval store port, decisions: %s", (_name, make) => {
  test("one claim at a time; settle needs the claim's token; a settled approval is published, retained and frees its limits", async () => {
    const store = make();
    const events: ApprovalEvent[] = [];
    const stop = await store.subscribe((e) => events.push(e));
    const view = approval();
    await insert(store, view);
    expect(await store.claim(view.id, "t1", 30_000)).toBe("ok");
    expect(await store.claim(view.id, "t2", 30_000)).toBe("busy");
    const expired: Approval = { ...view, state: "expired", decision: "deny", decided_by: "timeout", decided_at: new Date().toISOString() };
    // An expiry (no token) loses to the decision being written.
    expect(await store.settle(expired, settleOptions)).toBe(false);
    const granted: Approval = { ...view, state: "granted", decision: "allow always", decided_by: "ops", decided_at: new Date().toISOString() };
    expect(await store.settle(granted, { ...settleOptions, token: "t2" })).toBe(false);
    expect(await store.settle(granted, { ...settleOptions, token: "t1", always: allowAlwaysKey(view) })).toBe(true);
    expect(await store.claim(view.id, "t3", 30_000)).toBe("settled");
    expect(await store.load(view.id)).toMatchObject({ state: "granted", decided_by: "ops" });
    // "allow always" was remembered for the session: the same ask is granted at once.
    expect(await insert(store, approval({ prompt_sha256: view.prompt_sha256 }))).toEqual({ kind: "cached" });
    // Another owner's equal session id is another session.
    expect(await insert(store, approval({ owner: "bob", prompt_sha256: view.prompt_sha256 }))).toEqual({ kind: "pending" });
    const deadline = Date.now() + 5000;
    while (!events.some((e) => e.type === "decided" && e.approval.id === view.id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(events.find((e) => e.approval.id === view.id)).toMatchObject({ type: "decided", approval: { state: "granted" } });
    await stop();
  });

  test("the tool input an approval shows is kept and read back exactly, pending and settled", async () => {
    const store = make();
    const input = JSON.stringify({ tool_name: "bash", tool_input: { command: "rm -rf ./build \"quoted\" ünïcödé 🚀" } });
    const view = approval({ session: "in", input, input_truncated: false });
    await insert(store, view);
    expect(await store.load(view.id)).toEqual(view);
    expect((await store.list()).find((a) => a.id === view.id)).toEqual(view);
    const cut = approval({ session: "in", input: input.slice(0, 20), input_truncated: true });
    await insert(store, cut);
    expect(await store.load(cut.id)).toEqual(cut);
    const denied: Approval = { ...view, state: "denied", decision: "deny", decided_by: "ops", decided_at: new Date().toISOString() };
    expect(await store.claim(view.id, "t1", 30_000)).toBe("ok");
    expect(await store.settle(denied, { ...settleOptions, token: "t1" })).toBe(true);
    expect(await store.load(view.id)).toEqual(denied);
  });

  test("a withdrawn approval is gone and counts toward no limit", async () => {
    const store = make();
    const first = approval({ session: "w" });
    await insert(store, first);
    await insert(store, approval({ session: "w" }));
    await store.withdraw(first);
    expect(await store.load(first.id)).toBeUndefined();
    expect(await insert(store, approval({ session: "w" }))).toEqual({ kind: "pending" });
  });
});
