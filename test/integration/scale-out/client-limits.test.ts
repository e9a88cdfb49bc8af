// Per-client limits across replicas (issue 18): two real `vcp-hooks serve` processes on one real
// redis-server. approvals.max_pending_per_client, limits.sessions_per_client for implicit profile
// sessions (past it the least recently used is evicted, issue 24) and the registry limit on session
// hooks each hold for the deployment, not once per replica; an Amplifier "Allow always" answered on A holds on B for the same token and session.
// `npm run build` first (the replicas run dist/).
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startReplicas, waitFor, type Replica, type ReplicaSet } from "../../support/replicas.js";
import { bundleCode } from "../../support/bundles.js";
import { installedDigest } from "./fixtures.js";

const REGISTRATIONS_PER_MINUTE = 20;
// One more session hook than the registry limit's burst: replaying them all at once on another
// replica would overrun a per-replica count.
const HOOKS = Array.from({ length: REGISTRATIONS_PER_MINUTE + 1 }, (_, i) => `h${i + 1}`);

// An Amplifier hook that asks before anything but `ls`; `ls` answers continue (an implicit session, no approval).
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
    approval_timeout: 600,
    approval_default: "deny"
  })`,
});

const manyManifest = {
  bundle: "many",
  version: "1.0.0",
  trust: "deployment",
  hooks: HOOKS.map((name, i) => ({ name, type: "pre_inject", action: name, priority: 10 + i, timeout_ms: 2000, scope: "session" })),
};
const manyCode = bundleCode(Object.fromEntries(HOOKS.map((name) => [name, `(input) => ({ status: "continue" })`])));

const constitution = { id: "c1", version: "1", rules: [{ id: "r1", text: "Be kind." }] };
const TOKENS = { c3: "vcp_cl_third_client_token_0123456789", c4: "vcp_cl_fourth_client_token_012345678", appHuman: "vcp_ap_app_human_token_0123456789ab", c3Human: "vcp_ap_c3_human_token_0123456789abc" };

let set: ReplicaSet;
let A: Replica, B: Replica;

beforeAll(async () => {
  set = await startReplicas({
    count: 2,
    config: {
      approvals: { max_pending_per_client: 2 },
      limits: { sessions_per_client: 2, registrations_per_minute: REGISTRATIONS_PER_MINUTE },
      session_hook_allowlist: HOOKS.map((h) => `many/${h}`),
    },
    extraAuth: [
      { id: "c3", role: "client", token: TOKENS.c3 },
      { id: "c4", role: "client", token: TOKENS.c4 },
      // The humans who answer app's and c3's approvals (a client never answers its own).
      { id: "app-human", role: "approver", token: TOKENS.appHuman, approves: ["app"] },
      { id: "c3-human", role: "approver", token: TOKENS.c3Human, approves: ["c3"] },
    ],
  });
  [A, B] = set.replicas as [Replica, Replica];
  for (const artifact of [set.sign(askManifest, askCode), set.sign(manyManifest, manyCode)]) {
    const res = await A.request("PUT", `/v1/bundles/${artifact.manifest.bundle}`, { token: set.tokens.operator, body: artifact });
    expect(res.status, res.text).toBe(201);
    for (const r of set.replicas) await waitFor(`${r.name} to run ${artifact.manifest.bundle}`, async () => (await installedDigest(set, r, artifact.manifest.bundle)) === artifact.digest);
  }
}, 300_000);
afterAll(async () => {
  await set?.close();
}, 120_000);

const tool = (r: Replica, token: string, session: string, toolName: string) =>
  r.request("POST", `/v1/profiles/amplifier/events/tool:pre`, { token, body: { event: "tool:pre", data: { session_id: session, tool_name: toolName } } });

describe("per-client limits across two replicas on one Redis", () => {
  test("approvals.max_pending_per_client 2: a client that asked twice on A is refused on B; another client still asks; a decision frees a place", async () => {
    for (const toolName of ["rm", "mv"]) {
      const asked = await tool(A, set.tokens.client, "ap-1", toolName);
      expect(asked.status, asked.text).toBe(200);
      expect(asked.body.native).toMatchObject({ action: "ask_user", approval: { state: "pending" } });
    }
    const refused = await tool(B, set.tokens.client, "ap-1", "dd");
    expect(refused.status, refused.text).toBe(429);
    expect(refused.body.error).toMatchObject({ code: "APPROVAL_LIMIT", details: { owner: "app", limit: 2, scope: "client" } });
    expect(refused.body.error.message).toContain("approvals.max_pending_per_client 2");
    // Nothing was asked for the refused one.
    const listed = await B.request("GET", "/v1/approvals?session=ap-1&state=pending", { token: set.tokens.client });
    expect(listed.body.approvals.map((a: any) => a.prompt).sort()).toEqual(["Run mv?", "Run rm?"]);

    // Another client's ask on B is not blocked by the first client's pool.
    const other = await tool(B, set.tokens.client2, "ap-1", "rm");
    expect(other.status, other.text).toBe(200);
    expect(other.body.native).toMatchObject({ action: "ask_user", approval: { state: "pending" } });

    // Deciding one on B frees one place for the client, on A as well.
    const decided = await B.request("POST", `/v1/approvals/${listed.body.approvals[0].id}`, { token: TOKENS.appHuman, body: { decision: "Deny" } });
    expect(decided.status, decided.text).toBe(200);
    const again = await tool(A, set.tokens.client, "ap-1", "dd");
    expect(again.status, again.text).toBe(200);
    expect(again.body.native).toMatchObject({ action: "ask_user", approval: { state: "pending" } });
    expect((await tool(B, set.tokens.client, "ap-1", "cp")).status).toBe(429);
  }, 120_000);

  test("Allow always answered on A holds on B for the same token and session, not for another client's equal session id", async () => {
    const asked = await tool(A, TOKENS.c3, "aa-1", "rm");
    expect(asked.body.native).toMatchObject({ action: "ask_user", approval: { state: "pending" } });
    expect((await A.request("POST", `/v1/approvals/${asked.body.native.approval.id}`, { token: TOKENS.c3, body: { decision: "Allow always" } })).status).toBe(403);
    const decided = await A.request("POST", `/v1/approvals/${asked.body.native.approval.id}`, { token: TOKENS.c3Human, body: { decision: "Allow always" } });
    expect(decided.status, decided.text).toBe(200);
    const onB = await tool(B, TOKENS.c3, "aa-1", "rm");
    expect(onB.status, onB.text).toBe(200);
    expect(onB.body.native).toMatchObject({ action: "continue", approval: { state: "granted", decided_by: "allow_always" } });
    // The grant is kept in Redis no longer than the Amplifier implicit session's idle TTL (default 86 400 s).
    const prefix = (set.config.store as { prefix: string }).prefix;
    const grants = String(await set.redis.command("KEYS", `${prefix}:approvals-always:*`)).split(/\s+/).filter((k) => k !== "");
    expect(grants.length).toBeGreaterThan(0);
    for (const key of grants) {
      const ttl = Number(await set.redis.command("PTTL", key));
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(86_400_000);
    }
    // Another client sending the same session id has its own session: asked, not granted.
    const other = await tool(B, TOKENS.c4, "aa-1", "rm");
    expect(other.body.native).toMatchObject({ action: "ask_user", approval: { state: "pending" } });
  }, 120_000);

  test("limits.sessions_per_client 2 counts a client's implicit profile sessions on every replica: past it the least recently used is evicted, no event is refused", async () => {
    // c3 already has one implicit session (aa-1, previous test, on A and B); one more on A, then a third on B evicts aa-1.
    expect((await tool(A, TOKENS.c3, "im-1", "ls")).status).toBe(200);
    const third = await tool(B, TOKENS.c3, "im-2", "ls");
    expect(third.status, third.text).toBe(200);
    expect(third.body.native).toMatchObject({ action: "continue" });
    const prefix = (set.config.store as { prefix: string }).prefix;
    const members = String(await set.redis.command("ZRANGE", `${prefix}:implicit:c3`, "0", "-1"));
    expect(members).toContain("im-1");
    expect(members).toContain("im-2");
    expect(members).not.toContain("aa-1");
    const metrics = await B.request("GET", "/metrics", { token: set.tokens.operator });
    expect(metrics.text).toMatch(/^vcp_implicit_sessions_evicted_total\{scope="all_replicas"\} 1$/m);
    // Its sessions answer on either replica, including on B where im-1 was never seen; aa-1 comes back (evicting im-1).
    expect((await tool(B, TOKENS.c3, "im-1", "ls")).status).toBe(200);
    expect((await tool(A, TOKENS.c3, "im-2", "ls")).status).toBe(200);
    expect((await tool(A, TOKENS.c3, "aa-1", "ls")).status).toBe(200);
    // Another client (c4 has aa-1 from the previous test) opens its second one, evicting nothing of c3's.
    expect((await tool(A, TOKENS.c4, "im-1", "ls")).status).toBe(200);
  }, 120_000);

  test("session hooks registered on A within the deployment-wide limit all run on B (the replay is not counted again per replica)", async () => {
    const tok = { token: set.tokens.client };
    expect((await A.request("POST", "/v1/sessions", { ...tok, body: { session_id: "hooks-1", context: {}, constitution } })).status).toBe(201);
    const register = (hook: string) => A.request("POST", "/v1/sessions/hooks-1/hooks", { ...tok, body: { bundle: "many", hook } });
    for (const hook of HOOKS.slice(0, REGISTRATIONS_PER_MINUTE)) {
      const res = await register(hook);
      expect(res.status, res.text).toBe(201);
    }
    // The burst is spent deployment-wide: B refuses the client's next change too.
    const onB = await B.request("POST", "/v1/sessions/hooks-1/hooks", { ...tok, body: { bundle: "many", hook: HOOKS.at(-1) } });
    expect(onB.status, onB.text).toBe(429);
    expect(onB.body.error).toMatchObject({ code: "RATE_LIMITED", details: { scope: "all_replicas" } });
    // One unit comes back every 60/REGISTRATIONS_PER_MINUTE s.
    await waitFor("the shared limit to admit one more registration", async () => (await register(HOOKS.at(-1)!)).status === 201, 60_000, 250);

    // B registers all of them before the session's chain runs there: the chain runs every one.
    const fired = await B.request("POST", "/v1/sessions/hooks-1/chains/pre_inject", {
      ...tok,
      body: { event: { injection_target: "system", injection_format: "system_prompt", raw_constitution: "Be kind." } },
    });
    expect(fired.status, fired.text).toBe(200);
    expect(fired.body.hook_results.map((h: any) => h.hook).sort()).toEqual([...HOOKS].sort());
  }, 180_000);
});
