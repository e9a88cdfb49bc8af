// Sessions across replicas (issue 18, "Done when"): three real `vcp-hooks serve` processes on one real
// redis-server. A session opened on A is read, fired and adapted on B and C; concurrent operations
// on one session from two replicas never interleave (each appends to the session context, and the
// sequence of results is serial); SESSION_LIMIT is counted across replicas; a tenant never sees
// another's session on any replica; acknowledged state survives a Redis SIGKILL restart; with Redis
// stopped, session operations answer 503 STORE_UNAVAILABLE while a stateless fire still answers.
// `npm run build` first (the replicas run dist/).
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startReplicas, waitFor, type Replica, type ReplicaSet } from "../../support/replicas.js";
import { bundleCode } from "../../support/bundles.js";
import { installedDigest } from "./fixtures.js";
import { Redis } from "ioredis";
import { keyPart } from "../../../src/store/keys.js";
import { sessionKey } from "../../../src/pipeline/access.js";

const manifest = {
  bundle: "scale",
  version: "1.0.0",
  trust: "deployment",
  hooks: [
    // Appends the new state to context.log after a little work, so two interleaved transitions would
    // both read the same log and one append would be lost.
    { name: "append", type: "on_transition", action: "append", priority: 50, timeout_ms: 5000 },
    { name: "observe", type: "pre_inject", action: "observe", priority: 10, timeout_ms: 1000, scope: "session" },
  ],
};
const code = bundleCode({
  append: `(input) => {
    var ctx = JSON.parse(JSON.stringify(input.context));
    var x = 0; for (var i = 0; i < 3e6; i++) x += i & 1;
    ctx.log = (Array.isArray(ctx.log) ? ctx.log : []).concat([input.event.new_state]);
    ctx.work = x;
    return { status: "modify", modified_context: ctx };
  }`,
  observe: `(input) => ({ status: "continue", annotations: { observed_by_session_hook: true } })`,
});

const constitution = { id: "c1", version: "1", rules: [{ id: "r1", text: "Be kind." }] };

// An Amplifier hook that asks before anything but `ls` (approvals); `ls` is a stateless fire.
const askManifest = {
  bundle: "prod-guard",
  version: "1.0.0",
  trust: "deployment",
  profile: "amplifier",
  hooks: [{ name: "prod_guard", event: "tool:pre", action: "guard", priority: 10, timeout_ms: 2000 }],
};
const askCode = bundleCode({
  guard: `(input) => input.data.tool_name === "ls" ? { action: "continue" } : ({
    action: "ask_user",
    approval_prompt: "Run " + input.data.tool_name + "?",
    approval_options: ["Allow once", "Allow always", "Deny"],
    approval_timeout: input.data.timeout_s || 60,
    approval_default: "deny"
  })`,
});

/** The human who answers app's approvals (a client never answers its own). */
const APPROVER = "vcp_ap_app_human_token_sessions_0123";
let set: ReplicaSet;
let A: Replica, B: Replica, C: Replica;

async function installEverywhere(): Promise<void> {
  // Uploaded to A once: shared bundles (redis-core) bring them to B and C.
  for (const artifact of [set.sign(manifest, code), set.sign(askManifest, askCode)]) {
    const res = await A.request("PUT", `/v1/bundles/${artifact.manifest.bundle}`, { token: set.tokens.operator, body: artifact });
    expect(res.status, res.text).toBe(201);
    for (const r of set.replicas) await waitFor(`${r.name} to run ${artifact.manifest.bundle}`, async () => (await installedDigest(set, r, artifact.manifest.bundle)) === artifact.digest);
  }
}

beforeAll(async () => {
  set = await startReplicas({ count: 3, config: { limits: { sessions_per_client: 3 }, session_hook_allowlist: ["scale/observe"] }, extraAuth: [{ id: "app-human", role: "approver", token: APPROVER, approves: ["app"] }] });
  [A, B, C] = set.replicas as [Replica, Replica, Replica];
  await installEverywhere();
}, 300_000);
afterAll(async () => {
  await set?.close();
}, 120_000);

const tool = (r: Replica, session: string, toolName: string, query = "", data: Record<string, unknown> = {}) =>
  r.request("POST", `/v1/profiles/amplifier/events/tool:pre${query}`, { token: set.tokens.client, body: { event: "tool:pre", data: { session_id: session, tool_name: toolName, ...data } } });

const open = (r: Replica, id: string, token = set.tokens.client, context: Record<string, unknown> = { log: [] }) =>
  r.request("POST", "/v1/sessions", { token, body: { session_id: id, context, constitution } });

describe("sessions across three replicas on one Redis", () => {
  test("a session opened on A is read on B, transitioned on C, fired on B and adapted on C; each sees the others' changes", async () => {
    const opened = await open(A, "s-any");
    expect(opened.status).toBe(201);
    const onB = await B.request("GET", "/v1/sessions/s-any", { token: set.tokens.client });
    expect(onB.status).toBe(200);
    expect(onB.body).toMatchObject({ session_id: "s-any", owner: "app", state: null, context: { log: [] } });

    const moved = await C.request("POST", "/v1/sessions/s-any/transition", { token: set.tokens.client, body: { to: "drafting", trigger: "user" } });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ outcome: "transitioned", state: "drafting", context: { log: ["drafting"] } });

    const fired = await B.request("POST", "/v1/sessions/s-any/chains/on_transition", { token: set.tokens.client, body: { event: { previous_state: "drafting", new_state: "review", trigger: "t", transition_metadata: {} } } });
    expect(fired.status).toBe(200);
    // The fire defaults to the session's own context, written on C: the chain appended to it.
    expect(fired.body.context.log).toEqual(["drafting", "review"]);

    const adapted = await C.request("POST", "/v1/sessions/s-any/adapt", { token: set.tokens.client, body: { selected: constitution, candidates: [constitution], selection_rationale: "r", selection_algorithm: "a" } });
    expect(adapted.status).toBe(200);
    expect(adapted.body.outcome).toBe("inject");

    const onA = await A.request("GET", "/v1/sessions/s-any", { token: set.tokens.client });
    expect(onA.body).toMatchObject({ state: "drafting", context: { log: ["drafting"] } });
    // Closed on B: gone everywhere.
    expect((await B.request("DELETE", "/v1/sessions/s-any", { token: set.tokens.client })).status).toBe(204);
    for (const r of [A, B, C]) expect((await r.request("GET", "/v1/sessions/s-any", { token: set.tokens.client })).status).toBe(404);
  }, 120_000);

  test("concurrent transitions of one session from A and B never interleave: every append survives and the results are one serial sequence", async () => {
    expect((await open(A, "s-serial")).status).toBe(201);
    const n = 12;
    const replies = await Promise.all(
      Array.from({ length: n }, (_, i) => (i % 2 === 0 ? A : B).request("POST", "/v1/sessions/s-serial/transition", { token: set.tokens.client, body: { to: `t${i}`, trigger: "race" } })),
    );
    for (const r of replies) expect(r.status, JSON.stringify(r.body)).toBe(200);
    const logs = replies.map((r) => r.body.context.log as string[]);
    // Serial: the results, ordered by length, are 1, 2, …, n entries, each extending the previous one.
    const sorted = [...logs].sort((a, b) => a.length - b.length);
    expect(sorted.map((l) => l.length)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    for (let i = 1; i < n; i++) expect(sorted[i]!.slice(0, i)).toEqual(sorted[i - 1]);
    // And nothing was lost: the stored log holds every transition once.
    const final = await C.request("GET", "/v1/sessions/s-serial", { token: set.tokens.client });
    expect([...final.body.context.log].sort()).toEqual(Array.from({ length: n }, (_, i) => `t${i}`).sort());
    await A.request("DELETE", "/v1/sessions/s-serial", { token: set.tokens.client });
  }, 180_000);

  test("a tenant never sees another's session on any replica, and may reuse its id; SESSION_LIMIT counts the owner's sessions on every replica", async () => {
    expect((await open(A, "mine")).status).toBe(201);
    for (const r of [A, B, C]) {
      expect((await r.request("GET", "/v1/sessions/mine", { token: set.tokens.client2 })).status).toBe(404);
      expect((await r.request("POST", "/v1/sessions/mine/transition", { token: set.tokens.client2, body: { to: "x", trigger: "t" } })).status).toBe(404);
      const listed = await r.request("GET", "/v1/sessions", { token: set.tokens.client2 });
      if (listed.status === 200) expect(JSON.stringify(listed.body)).not.toContain("\"mine\"");
    }
    // The same id is app2's own session: no clash, no leak.
    expect((await open(B, "mine", set.tokens.client2, { who: "app2" })).status).toBe(201);
    expect((await C.request("GET", "/v1/sessions/mine", { token: set.tokens.client })).body.context).toEqual({ log: [] });
    expect((await C.request("GET", "/v1/sessions/mine", { token: set.tokens.client2 })).body.context).toEqual({ who: "app2" });
    // An operator names the owner when two owners use the id.
    expect((await A.request("GET", "/v1/sessions/mine", { token: set.tokens.operator })).body.error.code).toBe("SESSION_AMBIGUOUS");
    expect((await A.request("GET", "/v1/sessions/mine?owner=app2", { token: set.tokens.operator })).body.context).toEqual({ who: "app2" });

    // limits.sessions_per_client 3: one on A ("mine"), two more on B and C, the fourth refused on any replica.
    expect((await open(B, "lim-2")).status).toBe(201);
    expect((await open(C, "lim-3")).status).toBe(201);
    const refused = await open(A, "lim-4");
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("SESSION_LIMIT");
    expect((await B.request("DELETE", "/v1/sessions/lim-2", { token: set.tokens.client })).status).toBe(204);
    expect((await open(C, "lim-4")).status).toBe(201);
    for (const id of ["mine", "lim-3", "lim-4"]) await A.request("DELETE", `/v1/sessions/${id}`, { token: set.tokens.client });
    await A.request("DELETE", "/v1/sessions/mine", { token: set.tokens.client2 });
  }, 120_000);

  test("a session hook registered on A runs in the session's chains on C; closing and re-opening the id drops it everywhere", async () => {
    expect((await open(A, "s-hooks")).status).toBe(201);
    expect((await A.request("POST", "/v1/sessions/s-hooks/hooks", { token: set.tokens.client, body: { bundle: "scale", hook: "observe" } })).status).toBe(201);
    const adapt = { selected: constitution, candidates: [constitution], selection_rationale: "r", selection_algorithm: "a" };
    const onC = await C.request("POST", "/v1/sessions/s-hooks/adapt", { token: set.tokens.client, body: adapt });
    expect(onC.status).toBe(200);
    expect(onC.body.trace[1].hook_results.map((h: any) => h.hook)).toContain("observe");
    expect((await C.request("DELETE", "/v1/sessions/s-hooks", { token: set.tokens.client })).status).toBe(204);
    expect((await B.request("POST", "/v1/sessions", { token: set.tokens.client, body: { session_id: "s-hooks", context: {}, constitution } })).status).toBe(201);
    const again = await C.request("POST", "/v1/sessions/s-hooks/adapt", { token: set.tokens.client, body: adapt });
    expect(again.body.trace[1].hook_results.map((h: any) => h.hook)).not.toContain("observe");
    await C.request("DELETE", "/v1/sessions/s-hooks", { token: set.tokens.client });
  }, 120_000);

  test("Redis SIGKILLed and restarted mid-run loses no acknowledged session state", async () => {
    expect((await open(A, "s-durable")).status).toBe(201);
    for (const to of ["one", "two", "three"]) {
      expect((await B.request("POST", "/v1/sessions/s-durable/transition", { token: set.tokens.client, body: { to, trigger: "t" } })).status).toBe(200);
    }
    await set.redis.restart({ kill: true });
    const back = await waitFor("the session readable after the Redis restart", async () => {
      const r = await C.request("GET", "/v1/sessions/s-durable", { token: set.tokens.client });
      return r.status === 200 ? r.body : undefined;
    });
    expect(back).toMatchObject({ state: "three", context: { log: ["one", "two", "three"] } });
    // And it keeps working on every replica.
    const after = await waitFor("a transition after the restart", async () => {
      const r = await A.request("POST", "/v1/sessions/s-durable/transition", { token: set.tokens.client, body: { to: "four", trigger: "t" } });
      return r.status === 200 ? r.body : undefined;
    });
    expect(after.context.log).toEqual(["one", "two", "three", "four"]);
    await A.request("DELETE", "/v1/sessions/s-durable", { token: set.tokens.client });
  }, 180_000);

  test("Redis stopped: session operations answer 503 STORE_UNAVAILABLE, a stateless fire still answers, and sessions work again when it is back", async () => {
    expect((await open(A, "s-outage")).status).toBe(201);
    await set.redis.stop();
    try {
      for (const r of [A, B]) {
        const get = await r.request("GET", "/v1/sessions/s-outage", { token: set.tokens.client });
        expect(get.status).toBe(503);
        expect(get.body.error.code).toBe("STORE_UNAVAILABLE");
        const moved = await r.request("POST", "/v1/sessions/s-outage/transition", { token: set.tokens.client, body: { to: "lost", trigger: "t" } });
        expect(moved.status).toBe(503);
        expect(moved.body.error.code).toBe("STORE_UNAVAILABLE");
        const opened = await open(r, `s-outage-${r.name}`);
        expect(opened.status).toBe(503);
        expect(opened.body.error.code).toBe("STORE_UNAVAILABLE");
      }
      // A stateless chain needs nothing from Redis.
      const stateless = await tool(C, "p-outage", "ls");
      expect(stateless.status, stateless.text).toBe(200);
      expect(stateless.body.native.action).toBe("continue");
    } finally {
      await set.redis.start();
    }
    // Every replica reconnects by itself (backoff); wait for all three before going on.
    let back: any;
    for (const r of [A, B, C]) {
      back = await waitFor(`sessions served again on ${r.name}`, async () => {
        const res = await r.request("GET", "/v1/sessions/s-outage", { token: set.tokens.client });
        return res.status === 200 ? res.body : undefined;
      });
    }
    // Nothing half-written: the refused transition left no trace.
    expect(back).toMatchObject({ state: null, context: { log: [] } });
    await B.request("DELETE", "/v1/sessions/s-outage", { token: set.tokens.client });
  }, 180_000);

  test("Redis slow (all clients paused): session reads and operations answer 503 STORE_UNAVAILABLE before Redis answers, and the session is unchanged afterwards", async () => {
    // 409: an earlier attempt got through after all.
    await waitFor("A to open a session (its store connection is up)", async () => [201, 409].includes((await open(A, "s-slow")).status));
    const pauseMs = 8000;
    const pausedAt = Date.now();
    expect(await set.redis.command("CLIENT", "PAUSE", String(pauseMs), "ALL")).toBe("OK");
    const [get, moved] = await Promise.all([
      A.request("GET", "/v1/sessions/s-slow", { token: set.tokens.client }),
      B.request("POST", "/v1/sessions/s-slow/transition", { token: set.tokens.client, body: { to: "late", trigger: "t" } }),
    ]);
    const answeredAfter = Date.now() - pausedAt;
    for (const r of [get, moved]) {
      expect(r.status, r.text).toBe(503);
      expect(r.body.error.code).toBe("STORE_UNAVAILABLE");
    }
    // Within the store's command deadline (2 s in these replicas), not when Redis came back.
    console.log(`slow Redis: both answered 503 after ${answeredAfter} ms (pause ${pauseMs} ms, command timeout 2000 ms)`);
    expect(answeredAfter).toBeLessThan(pauseMs);
    const back = await waitFor("the session readable after the pause", async () => {
      const r = await C.request("GET", "/v1/sessions/s-slow", { token: set.tokens.client });
      return r.status === 200 ? r.body : undefined;
    });
    expect(back).toMatchObject({ state: null, context: { log: [] } });
    // The next operation gets the session (a lock taken by the late acquire expires or was released).
    const next = await A.request("POST", "/v1/sessions/s-slow/transition", { token: set.tokens.client, body: { to: "on-time", trigger: "t" } });
    expect(next.status, next.text).toBe(200);
    expect(next.body.context.log).toEqual(["on-time"]);
    await A.request("DELETE", "/v1/sessions/s-slow", { token: set.tokens.client });
  }, 120_000);

  test("a lock acquire that reaches Redis after the replica gave up (503) takes nothing: the session is not held by nobody afterwards", async () => {
    await waitFor("A to open a session", async () => [201, 409].includes((await open(A, "s-late-lock")).status));
    const prefix = (set.config.store as { prefix: string }).prefix;
    const lockKey = `${prefix}:s:{${keyPart(sessionKey("app", "s-late-lock"))}}:lock`;
    // Another holder has the session: B's transition reads it, then waits for the lock (polling).
    expect(await set.redis.command("SET", lockKey, "another-holder", "PX", "60000")).toBe("OK");
    const startedAt = Date.now();
    const moving = B.request("POST", "/v1/sessions/s-late-lock/transition", { token: set.tokens.client, body: { to: "late", trigger: "t" } });
    await new Promise((r) => setTimeout(r, 3000));
    // The holder's lock ends 1 s into a 4 s stall of Redis, longer than the replicas' command timeout
    // (2 s): B's next acquire waits in Redis, B answers 503, then Redis runs the acquire with the lock
    // free. Before, it took the lock for its whole ttl (5 s) on behalf of a request already answered.
    const pauseMs = 4000;
    expect(await set.redis.command("SET", lockKey, "another-holder", "PX", "1000")).toBe("OK");
    expect(await set.redis.command("CLIENT", "PAUSE", String(pauseMs), "WRITE")).toBe("OK");
    const pausedAt = Date.now();
    const moved = await moving;
    expect(moved.status, moved.text).toBe(503);
    expect(moved.body.error).toMatchObject({ code: "STORE_UNAVAILABLE", message: expect.stringContaining("taking the session lock") });
    const answeredAfter = Date.now() - startedAt;
    // Redis has run the late acquire (the pause is over); a lock it took would have seconds of ttl left.
    await new Promise((r) => setTimeout(r, Math.max(0, pausedAt + pauseMs + 1000 - Date.now())));
    expect(await set.redis.command("EXISTS", lockKey)).toBe("0");
    const nextAt = Date.now();
    const next = await C.request("POST", "/v1/sessions/s-late-lock/transition", { token: set.tokens.client, body: { to: "on-time", trigger: "t" } });
    expect(next.status, next.text).toBe(200);
    expect(next.body.context.log).toEqual(["on-time"]);
    console.log(`late lock acquire: B answered 503 after ${answeredAfter} ms; the next transition on C took ${Date.now() - nextAt} ms`);
    await A.request("DELETE", "/v1/sessions/s-late-lock", { token: set.tokens.client });
  }, 120_000);

  test("an approval raised on A is seen and answered on C; the request waiting on A wakes with the decision; 'Allow always' holds on B", async () => {
    // An approval stream on B hears what happens on A and C.
    const controller = new AbortController();
    const stream = await fetch(`${B.url}/v1/approvals/stream?session=p-1`, { headers: { authorization: `Bearer ${set.tokens.client}` }, signal: controller.signal });
    expect(stream.status).toBe(200);
    let streamed = "";
    const reading = (async () => {
      const reader = stream.body!.getReader();
      const decoder = new TextDecoder();
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          streamed += decoder.decode(value, { stream: true });
        }
      } catch {
        // aborted
      }
    })();
    await waitFor("the stream's hello", () => streamed.includes("event: hello"));
    const waiting = tool(A, "p-1", "rm", "?wait_approval=1");
    const pending = await waitFor("the approval listed on C", async () => {
      const r = await C.request("GET", "/v1/approvals?session=p-1&state=pending", { token: set.tokens.client });
      return r.status === 200 && r.body.approvals.length > 0 ? r.body.approvals[0] : undefined;
    });
    expect(pending).toMatchObject({ hook: "prod_guard", prompt: "Run rm?", state: "pending", owner: "app" });
    // Another tenant sees nothing of it on any replica.
    expect((await B.request("GET", `/v1/approvals/${pending.id}`, { token: set.tokens.client2 })).status).toBe(404);
    expect((await C.request("POST", `/v1/approvals/${pending.id}`, { token: set.tokens.client, body: { decision: "Allow always" } })).status).toBe(403);
    const decided = await C.request("POST", `/v1/approvals/${pending.id}`, { token: APPROVER, body: { decision: "Allow always" } });
    expect(decided.status, decided.text).toBe(200);
    expect(decided.body).toMatchObject({ state: "granted", decided_by: "app-human" });
    const answered = await waiting;
    expect(answered.status).toBe(200);
    expect(answered.body.native).toMatchObject({ action: "continue", approval: { id: pending.id, state: "granted" } });
    await waitFor("B's stream to carry the new and the decided approval", () => streamed.includes("event: new") && streamed.includes("event: decided"));
    controller.abort();
    await reading;
    // The first decision stands, on every replica.
    expect((await B.request("POST", `/v1/approvals/${pending.id}`, { token: APPROVER, body: { decision: "Deny" } })).body.error.code).toBe("APPROVAL_DECIDED");
    // "Allow always" is the session's, whichever replica the next ask reaches.
    const again = await tool(B, "p-1", "rm");
    expect(again.body.native).toMatchObject({ action: "continue", approval: { state: "granted", decided_by: "allow_always" } });
  }, 120_000);

  test("an approval nobody answers expires once into its default, on whichever replica sweeps first", async () => {
    const waiting = tool(B, "p-2", "rm", "?wait_approval=1", { timeout_s: 1 });
    const answered = await waiting;
    expect(answered.status).toBe(200);
    expect(answered.body.native).toMatchObject({ action: "deny", approval: { state: "expired", decided_by: "timeout" } });
    const listed = await A.request("GET", "/v1/approvals?session=p-2", { token: set.tokens.operator });
    expect(listed.body.approvals).toHaveLength(1);
  }, 120_000);

  test("Redis round trips per session operation, counted with MONITOR on the serving replica's connection (printed for the README)", async () => {
    const prefix = (set.config.store as { prefix: string }).prefix;
    const admin = new Redis(set.redis.url);
    const monitor = await admin.monitor();
    try {
      // Which connection is replica B's command client (named `vcp-hooks:B` by the store).
      const lister = new Redis(set.redis.url);
      const clients = String(await lister.client("LIST"));
      lister.disconnect();
      const addrOfB = clients.split("\n").filter((l) => /name=vcp-hooks:B\b/.test(l)).map((l) => /addr=(\S+)/.exec(l)?.[1]);
      expect(addrOfB.length, clients).toBeGreaterThan(0);
      const seen: string[][] = [];
      monitor.on("monitor", (_time: string, args: string[], source: string) => {
        if (addrOfB.includes(source)) seen.push(args);
      });
      // Background work of a replica (heartbeat, bundle reconcile, periodic scan, approval sweep) is not an operation's.
      const background = (args: string[]) => {
        const [cmd, ...rest] = [args[0]!.toLowerCase(), ...args.slice(1)];
        if (["ping", "time", "info", "client"].includes(cmd)) return true;
        if (rest.some((a) => a.startsWith(`${prefix}:replicas`) || a.startsWith(`${prefix}:bundle`) || a.startsWith("vcp-hooks:"))) return true;
        // The periodic scan (one-key script on the due set) and the approval sweep (one-key script and count on the pending set).
        if ((cmd === "evalsha" || cmd === "eval") && rest[1] === "1" && rest[2] === `${prefix}:periodic:due`) return true;
        if (cmd === "zcard" && rest[0] === `${prefix}:approvals-pending`) return true;
        if ((cmd === "evalsha" || cmd === "eval") && rest[1] === "1" && rest[2] === `${prefix}:approvals-pending`) return true;
        return false;
      };
      const count = async (what: string, op: () => Promise<unknown>): Promise<number> => {
        await new Promise((r) => setTimeout(r, 150));
        seen.length = 0;
        await op();
        await new Promise((r) => setTimeout(r, 150));
        const ours = seen.filter((a) => !background(a));
        counts[what] = ours.length;
        detail[what] = ours.map((a) => (a[0]!.toLowerCase().startsWith("eval") ? `${a[0]} ${a[3] ?? ""}` : `${a[0]} ${a[1] ?? ""}`).slice(0, 90));
        return ours.length;
      };
      const counts: Record<string, number> = {};
      const detail: Record<string, string[]> = {};
      const tok = { token: set.tokens.client };
      const adapt = { selected: constitution, candidates: [constitution], selection_rationale: "r", selection_algorithm: "a" };
      // Warm every script once (EVALSHA falls back to EVAL after the restart above).
      await open(B, "rt-warm");
      await B.request("POST", "/v1/sessions/rt-warm/transition", { ...tok, body: { to: "x", trigger: "t" } });
      await B.request("POST", "/v1/sessions/rt-warm/violation", { ...tok, body: { output: "o", violated_rules: [], severity: "minor", violation_evidence: "e" } });
      await B.request("GET", "/v1/sessions/rt-warm", tok);
      await B.request("POST", "/v1/sessions/rt-warm/hooks", { ...tok, body: { bundle: "scale", hook: "observe" } });
      await B.request("DELETE", "/v1/sessions/rt-warm", tok);

      expect(await count("POST /v1/sessions (open)", () => open(B, "rt"))).toBeGreaterThan(0);
      await count("GET /v1/sessions/:id", () => B.request("GET", "/v1/sessions/rt", tok));
      await count("POST …/transition (state changed)", () => B.request("POST", "/v1/sessions/rt/transition", { ...tok, body: { to: "y", trigger: "t" } }));
      await count("POST …/adapt (inject)", () => B.request("POST", "/v1/sessions/rt/adapt", { ...tok, body: adapt }));
      await count("POST …/violation (no state change)", () => B.request("POST", "/v1/sessions/rt/violation", { ...tok, body: { output: "o", violated_rules: [], severity: "minor", violation_evidence: "e" } }));
      await count("POST …/chains/:type (fire in a session)", () => B.request("POST", "/v1/sessions/rt/chains/pre_inject", { ...tok, body: { event: { injection_target: "system", injection_format: "system_prompt", raw_constitution: "x" } } }));
      await count("POST …/hooks (register a session hook)", () => B.request("POST", "/v1/sessions/rt/hooks", { ...tok, body: { bundle: "scale", hook: "observe" } }));
      await count("DELETE /v1/sessions/:id (close)", () => B.request("DELETE", "/v1/sessions/rt", tok));
      // A profile event naming a session: the client's implicit sessions are counted across replicas
      // (limits.sessions_per_client), one script when this replica first sees the session (and once
      // per min(ttl/4, 5 s) while it is used); every other fire in it adds nothing. (The script is
      // warmed by another client, whose sessions are counted apart.)
      await B.request("POST", "/v1/profiles/amplifier/events/tool:pre", { token: set.tokens.client2, body: { event: "tool:pre", data: { session_id: "rt-p-warm", tool_name: "ls" } } });
      await count("POST /v1/profiles/…/events (implicit session, first on this replica)", async () => expect((await tool(B, "rt-p", "ls")).status).toBe(200));
      await count("POST /v1/profiles/…/events (stateless fire)", async () => expect((await tool(B, "rt-p", "ls")).status).toBe(200));
      console.log(`round trips per operation (replica B's command connection): ${JSON.stringify(counts, null, 2)}\n${JSON.stringify(detail, null, 1)}`);
      expect(counts["POST /v1/profiles/…/events (implicit session, first on this replica)"]).toBe(1);
      expect(counts["POST /v1/profiles/…/events (stateless fire)"]).toBe(0);
      expect(counts["POST …/transition (state changed)"]).toBeLessThanOrEqual(3);
    } finally {
      monitor.disconnect();
      admin.disconnect();
    }
  }, 120_000);
});
