// Hook switches and session hooks across replicas (issue 25 item 4, "state behind ports"): with
// `store: redis`, two (or three) runtimes on one real redis-server must agree on which hooks run.
// - an operator's switch (deployment-wide) made on one replica holds on every replica, and on one
//   started later; re-enabled on another replica, it runs everywhere again;
// - a switch in one session (a session hook, or a deployment hook there only), and a cascade disable
//   (spec §7.3.4), hold on whichever replica serves the session's next chain, and go with the session;
// - a replica whose connection dropped reads the switches it missed when it reconnects;
// - a session hook a bundle revision dropped stays dropped: a later revision offering it again does
//   not bring it back on a replica that meets the session afterwards, even when no running replica
//   had served the session when the revision dropped it.
// Over HTTP: POST /v1/hooks/{name}/enable|disable (`?session=`, `&owner=`, `&scope=`).
// Waits are for a condition with a generous deadline (pub/sub), never a fixed sleep.
import { createHash, randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { describe, expect, test } from "vitest";
import { createRuntime, type ChainResult, type Runtime } from "../../../src/index.js";
import { testBundle } from "../../support/bundles.js";
import { constitution } from "../../support/fixtures.js";
import { createVmBackend } from "../../support/vm-backend.js";
import { useRedisServer, whileIncrIsRefused } from "../../support/redis-server.js";
import { waitFor } from "../../support/replicas.js";
import { createServer } from "../../../src/server/app.js";

const OPS = { principal: { id: "ops", role: "operator" as const } };
const APP = { principal: { id: "app", role: "client" as const } };
const CONTINUE = "function () { return { status: 'continue' }; }";
const event = { injection_target: "system", injection_format: "system_prompt", raw_constitution: "x" } as const;

/** Bundle `guard`: deployment hooks `mark` (pre_inject) and `boom` (post_select, always throws), session hook `watch`. */
function guard(version: string, options: { watch?: boolean } = {}) {
  const hooks = [
    { name: "mark", type: "pre_inject" as const },
    { name: "boom", type: "post_select" as const },
    ...(options.watch === false ? [] : [{ name: "watch", type: "pre_inject" as const, scope: "session" as const }]),
  ];
  return testBundle("guard", hooks, { mark: CONTINUE, boom: "function () { throw new Error('boom'); }", watch: CONTINUE }, { version });
}

const redis = useRedisServer<Runtime>();
const { runtimes } = redis;

async function replica(prefix: string): Promise<Runtime> {
  const rt = await createRuntime({
    backend: createVmBackend(), audit: false, registrationsPerMinute: 1000, sessionHookAllowlist: ["guard/watch"],
    cascade: { disableFailingHooks: true },
    store: { kind: "redis", url: redis.url, prefix, heartbeatMs: 200, reconcileMs: 60_000, commandTimeoutMs: 2000, connectTimeoutMs: 5000 },
  });
  runtimes.push(rt);
  return rt;
}

/** Two replicas of a fresh prefix running bundle `guard` 1.0.0 (installed on the first, shared with the second). */
async function pair(): Promise<{ prefix: string; a: Runtime; b: Runtime }> {
  const prefix = `switch-${randomUUID().slice(0, 8)}`;
  const a = await replica(prefix);
  const b = await replica(prefix);
  await a.bundles.install(guard("1.0.0"));
  await waitFor("the second replica to run guard", () => b.bundles.get("guard")?.version === "1.0.0");
  return { prefix, a, b };
}

function outcome(result: ChainResult, hook: string): string | undefined {
  return result.hook_results.find((h) => h.hook === hook)?.outcome;
}

async function preInject(rt: Runtime, session: string, access: typeof APP | typeof OPS = APP): Promise<ChainResult> {
  return rt.fire("pre_inject", { session, context: {}, constitution, event, ...access });
}

async function postSelect(rt: Runtime, session: string): Promise<ChainResult> {
  return rt.fire("post_select", { session, context: {}, constitution, event: { selected: constitution, candidates: [constitution], selection_rationale: "r", selection_algorithm: "a" }, ...APP } as never);
}

describe("hook switches with store redis", () => {
  test("an operator's switch on one replica holds on the others and on one started later; re-enabled on another, it runs everywhere", async () => {
    const { prefix, a, b } = await pair();
    await a.sessions.open({ session_id: "s1", context: {}, constitution }, APP);
    expect(outcome(await preInject(b, "s1"), "mark")).toBe("ok");

    await a.hooks.setEnabled("mark", false, OPS);
    await waitFor("replica B to skip the disabled hook", async () => outcome(await preInject(b, "s1"), "mark") === "skipped_disabled");
    expect((await b.hooks.list({ type: "pre_inject" })).find((h) => h.name === "mark")?.enabled).toBe(false);

    // A replica started after the switch reads it before it runs anything.
    const c = await replica(prefix);
    await waitFor("replica C to run guard", () => c.bundles.get("guard") !== undefined);
    expect(outcome(await preInject(c, "s1"), "mark")).toBe("skipped_disabled");

    // A new revision of the bundle keeps the switch (it holds until switched again), on every replica.
    await b.bundles.install(guard("1.1.0"));
    await waitFor("replica A to run guard 1.1.0", () => a.bundles.get("guard")?.version === "1.1.0");
    await waitFor("replica C to run guard 1.1.0", () => c.bundles.get("guard")?.version === "1.1.0");
    for (const rt of [a, b, c]) expect(outcome(await preInject(rt, "s1"), "mark")).toBe("skipped_disabled");

    await b.hooks.setEnabled("mark", true, OPS);
    for (const rt of [a, c]) await waitFor("the re-enabled hook to run on every replica", async () => outcome(await preInject(rt, "s1"), "mark") === "ok");
  }, 120_000);

  test("a replica whose connection dropped reads the switches it missed when it reconnects", async () => {
    const { prefix, a, b } = await pair();
    await a.sessions.open({ session_id: "r1", context: {}, constitution }, APP);
    const admin = new Redis(redis.url);
    try {
      // A switch whose notification nobody heard (sent while the replicas' subscriptions were down).
      await admin.hset(`${prefix}:switches`, "mark", "0");
      expect(outcome(await preInject(b, "r1"), "mark")).toBe("ok");
      // Every subscriber connection drops and reconnects (as after a Redis restart or a network cut).
      await admin.call("CLIENT", "KILL", "TYPE", "pubsub");
      for (const rt of [a, b]) await waitFor("each replica to read the missed switch", async () => outcome(await preInject(rt, "r1"), "mark") === "skipped_disabled");
    } finally {
      admin.disconnect();
    }
  }, 120_000);

  test("a switch in one session holds on the replica that serves the session's next chain, and in that session only", async () => {
    const { a, b } = await pair();
    await a.sessions.open({ session_id: "s1", context: {}, constitution }, APP);
    await a.sessions.open({ session_id: "s2", context: {}, constitution }, APP);
    await a.sessions.registerHook("s1", { bundle: "guard", hook: "watch" }, APP);
    expect(outcome(await preInject(b, "s1"), "watch")).toBe("ok");

    // The owner switches its session hook off on A; an operator switches the deployment hook off in s1 only.
    await a.hooks.setEnabled("watch", false, { sessionId: "s1", ...APP });
    await a.hooks.setEnabled("mark", false, { sessionId: "s1", owner: "app", ...OPS });
    // Read with the session: B's very next chain in s1 already sees both, no wait.
    const onB = await preInject(b, "s1");
    expect([outcome(onB, "watch"), outcome(onB, "mark")]).toEqual(["skipped_disabled", "skipped_disabled"]);
    expect(outcome(await preInject(b, "s2"), "mark")).toBe("ok");

    // Switched back on B: A's next chain runs both again.
    await b.hooks.setEnabled("watch", true, { sessionId: "s1", ...APP });
    await b.hooks.setEnabled("mark", true, { sessionId: "s1", owner: "app", ...OPS });
    const onA = await preInject(a, "s1");
    expect([outcome(onA, "watch"), outcome(onA, "mark")]).toEqual(["ok", "ok"]);
  }, 120_000);

  test("a cascade disable (spec §7.3.4) holds on every replica for that session; an operator's re-enable on another replica lifts it everywhere", async () => {
    const { a, b } = await pair();
    await a.sessions.open({ session_id: "c1", context: {}, constitution }, APP);
    await a.sessions.open({ session_id: "c2", context: {}, constitution }, APP);
    const first = await postSelect(a, "c1");
    expect(first.cascade_failure).toBe(true);
    expect(outcome(first, "boom")).not.toBe("skipped_disabled");
    // The failing hook is off in c1 on B too, and still runs in c2.
    expect(outcome(await postSelect(b, "c1"), "boom")).toBe("skipped_disabled");
    expect(outcome(await postSelect(b, "c2"), "boom")).not.toBe("skipped_disabled");

    await b.hooks.setEnabled("boom", true, { sessionId: "c1", owner: "app", ...OPS });
    expect(outcome(await postSelect(a, "c1"), "boom")).not.toBe("skipped_disabled");
  }, 120_000);

  test("a session's switches go with the session: nothing of it is left in Redis", async () => {
    const { prefix, a, b } = await pair();
    await a.sessions.open({ session_id: "gone", context: {}, constitution }, APP);
    await a.sessions.registerHook("gone", { bundle: "guard", hook: "watch" }, APP);
    await a.hooks.setEnabled("watch", false, { sessionId: "gone", ...APP });
    await postSelect(a, "gone");
    const admin = new Redis(redis.url);
    try {
      const keys = async () => (await admin.keys(`${prefix}:s:*`)).filter((k) => k.includes("gone"));
      expect(await keys()).toContainEqual(expect.stringMatching(/:switches$/));
      await b.sessions.close("gone", APP);
      expect(await keys()).toEqual([]);
      // Opened again, the id is a new session: every hook runs as the operator left it.
      await b.sessions.open({ session_id: "gone", context: {}, constitution }, APP);
      expect(outcome(await postSelect(a, "gone"), "boom")).not.toBe("skipped_disabled");
    } finally {
      admin.disconnect();
    }
  }, 120_000);
});

describe("session hooks a bundle revision dropped, with store redis", () => {
  test("stay dropped: a later revision offering the hook again does not bring it back on a replica that meets the session", async () => {
    const { a, b } = await pair();
    await a.sessions.open({ session_id: "d1", context: {}, constitution }, APP);
    await a.sessions.registerHook("d1", { bundle: "guard", hook: "watch" }, APP);
    const dropped: Array<{ hook: string; reason?: string }> = [];
    a.on("hook.deregistered", (e) => void dropped.push(e));

    await a.bundles.install(guard("2.0.0", { watch: false }));
    expect(dropped).toContainEqual(expect.objectContaining({ hook: "watch", reason: expect.stringContaining("offers no session hook \"watch\"") }));
    await a.bundles.install(guard("3.0.0"));
    await waitFor("replica B to run guard 3.0.0", () => b.bundles.get("guard")?.version === "3.0.0");

    // B never met d1 before: it reads the session's hooks from the store.
    expect(outcome(await preInject(b, "d1"), "watch")).toBeUndefined();
    expect(outcome(await preInject(a, "d1"), "watch")).toBeUndefined();
    expect((await b.hooks.list({ session: "d1", type: "pre_inject" }, APP)).map((h) => h.name)).toEqual(["mark"]);
    // Registered again by its owner, it runs on both.
    await b.sessions.registerHook("d1", { bundle: "guard", hook: "watch" }, APP);
    expect(outcome(await preInject(a, "d1"), "watch")).toBe("ok");
  }, 120_000);

  test("stay dropped in a session no running replica has served: the replica that publishes the revision forgets them in every session", async () => {
    const { prefix, a, b } = await pair();
    await a.sessions.open({ session_id: "d2", context: {}, constitution }, APP);
    await a.sessions.registerHook("d2", { bundle: "guard", hook: "watch" }, APP);
    // The only replica that knew d2 goes (a rolling restart); the session lives on in Redis.
    await a.close();
    await b.bundles.install(guard("2.0.0", { watch: false }));
    await b.bundles.install(guard("3.0.0"));
    expect(outcome(await preInject(b, "d2"), "watch")).toBeUndefined();
    const c = await replica(prefix);
    await waitFor("replica C to run guard 3.0.0", () => c.bundles.get("guard")?.version === "3.0.0");
    expect(outcome(await preInject(c, "d2"), "watch")).toBeUndefined();
  }, 120_000);
});

describe("an install undone after its swap, with store redis", () => {
  /** Run `work` while the shared store refuses to publish a bundle change (test/support/redis-server.ts). */
  const whilePublishingIsRefused = <T>(work: () => Promise<T>): Promise<T> => whileIncrIsRefused(redis.url, work);


  test("leaves the session hooks the failed revision dropped, and their switches, in Redis as they were: every replica runs them as before", async () => {
    const { prefix, a, b } = await pair();
    await a.sessions.open({ session_id: "u1", context: {}, constitution }, APP);
    await a.sessions.open({ session_id: "u2", context: {}, constitution }, APP);
    await a.sessions.registerHook("u1", { bundle: "guard", hook: "watch" }, APP);
    await a.sessions.registerHook("u2", { bundle: "guard", hook: "watch" }, APP);
    // The owner switched its hook off in u1; in u2 it runs.
    await a.hooks.setEnabled("watch", false, { sessionId: "u1", ...APP });
    expect(outcome(await preInject(b, "u1"), "watch")).toBe("skipped_disabled");
    const dropped: string[] = [];
    const registered: string[] = [];
    a.on("hook.deregistered", (e) => void (e.scope === "session" && dropped.push(`${e.session_id}/${e.hook}`)));
    a.on("hook.registered", (e) => void (e.scope === "session" && registered.push(`${e.session_id}/${e.hook}`)));

    // 2.0.0 no longer offers `watch`: its swap on A drops it from u1 and u2, then the shared store refuses it.
    const err = await whilePublishingIsRefused(() => a.bundles.install(guard("2.0.0", { watch: false })).then(() => undefined, (e: unknown) => e as { code?: string }));
    expect(err).toMatchObject({ code: "STORE_UNAVAILABLE" });
    expect(a.bundles.get("guard")?.version).toBe("1.0.0");
    expect(dropped.sort()).toEqual(["u1/watch", "u2/watch"]);
    expect(registered.sort()).toEqual(["u1/watch", "u2/watch"]);

    // Every replica — A, B, and C which meets the sessions only through Redis — runs `watch` as before:
    // off in u1, on in u2.
    const c = await replica(prefix);
    await waitFor("replica C to run guard 1.0.0", () => c.bundles.get("guard")?.version === "1.0.0");
    const watchIn = async (rt: Runtime) => [outcome(await preInject(rt, "u1"), "watch"), outcome(await preInject(rt, "u2"), "watch")];
    expect({ a: await watchIn(a), b: await watchIn(b), c: await watchIn(c) }).toEqual({ a: ["skipped_disabled", "ok"], b: ["skipped_disabled", "ok"], c: ["skipped_disabled", "ok"] });
    // Still its owner's hook, in its place: switched back on, on any replica, it runs everywhere.
    await c.hooks.setEnabled("watch", true, { sessionId: "u1", ...APP });
    for (const rt of [a, b]) expect(outcome(await preInject(rt, "u1"), "watch")).toBe("ok");
  }, 120_000);

  test("a removal the shared store refuses leaves the sessions' hooks and switches in Redis as they were", async () => {
    const { prefix, a } = await pair();
    await a.sessions.open({ session_id: "r1", context: {}, constitution }, APP);
    await a.sessions.registerHook("r1", { bundle: "guard", hook: "watch" }, APP);
    await a.hooks.setEnabled("watch", false, { sessionId: "r1", ...APP });

    await expect(whilePublishingIsRefused(() => a.bundles.remove("guard"))).rejects.toMatchObject({ code: "STORE_UNAVAILABLE" });
    expect(a.bundles.get("guard")?.version).toBe("1.0.0");
    // A replica that meets r1 only through Redis runs it as A does: `watch` there, off.
    const c = await replica(prefix);
    await waitFor("replica C to run guard 1.0.0", () => c.bundles.get("guard")?.version === "1.0.0");
    for (const rt of [a, c]) expect(outcome(await preInject(rt, "r1"), "watch")).toBe("skipped_disabled");
  }, 120_000);
});

describe("POST /v1/hooks/{name}/enable|disable", () => {
  test("an operator switches a hook on one replica, every replica runs with it; a client switches only its own session's hooks", async () => {
    const { a, b } = await pair();
    const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
    const tokens = { ops: "vcp_op_switch_http_ops_0123456789abcdef", app: "vcp_cl_switch_http_app_0123456789abcdef", other: "vcp_cl_switch_http_other_0123456789abcde" };
    const server = await createServer({
      runtime: a as never,
      settings: {
        auth: [{ id: "ops", role: "operator", token_sha256: sha256(tokens.ops) }, { id: "app", role: "client", token_sha256: sha256(tokens.app) }, { id: "other", role: "client", token_sha256: sha256(tokens.other) }],
        limits: { body_bytes: 64 * 1024, bundle_bytes: 256 * 1024 },
        sessionHookAllowlist: ["guard/watch"],
      },
    });
    const post = async (token: string, url: string) => {
      const res = await server.app.inject({ method: "POST", url, headers: { authorization: `Bearer ${token}` } });
      const body = JSON.parse(res.body) as { name?: string; enabled?: boolean; error?: { code: string } };
      return { status: res.statusCode, enabled: body.enabled, code: body.error?.code };
    };
    try {
      await a.sessions.open({ session_id: "h1", context: {}, constitution }, APP);
      await a.sessions.registerHook("h1", { bundle: "guard", hook: "watch" }, APP);

      expect(await post(tokens.ops, "/v1/hooks/mark/disable")).toMatchObject({ status: 200, enabled: false });
      await waitFor("replica B to skip the hook switched off over HTTP", async () => outcome(await preInject(b, "h1"), "mark") === "skipped_disabled");
      expect(await post(tokens.ops, "/v1/hooks/mark/enable")).toMatchObject({ status: 200, enabled: true });
      await waitFor("replica B to run it again", async () => outcome(await preInject(b, "h1"), "mark") === "ok");

      // A client: its own session's hook, yes; a deployment hook, or another client's session, no.
      expect(await post(tokens.app, "/v1/hooks/watch/disable?session=h1")).toMatchObject({ status: 200, enabled: false });
      expect(outcome(await preInject(b, "h1"), "watch")).toBe("skipped_disabled");
      expect(await post(tokens.app, "/v1/hooks/mark/disable")).toMatchObject({ status: 403, code: "UNAUTHORIZED_PRINCIPAL" });
      expect(await post(tokens.app, "/v1/hooks/mark/disable?session=h1&scope=deployment")).toMatchObject({ status: 403, code: "UNAUTHORIZED_PRINCIPAL" });
      expect(await post(tokens.other, "/v1/hooks/watch/enable?session=h1")).toMatchObject({ status: 404, code: "SESSION_NOT_FOUND" });
      expect(await post(tokens.ops, "/v1/hooks/nope/disable")).toMatchObject({ status: 404, code: "UNKNOWN_HOOK" });
      // An operator names the client's session with its owner.
      expect(await post(tokens.ops, "/v1/hooks/watch/enable?session=h1&owner=app")).toMatchObject({ status: 200, enabled: true });
      expect(outcome(await preInject(b, "h1"), "watch")).toBe("ok");
    } finally {
      await server.close();
    }
  }, 120_000);
});
