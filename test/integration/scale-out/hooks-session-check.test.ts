// `runtime.hooks` names sessions like every session member, with either store (issue 25 item 5):
// `chain`, `list` and `setEnabled` with a session and a client principal answer SESSION_NOT_FOUND for
// a session the client may not see — another client's, or none — with `store: redis` exactly as with
// the local store, and act on the client's own session on both; with Redis a switch takes the
// deployment-wide registry-change limit like every other change. Over HTTP, `GET /v1/hooks?session=`
// reads the session once (the check is the runtime's). Redis: a real redis-server.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createRuntime, VcpError, type Runtime, type RuntimeOptions } from "../../../src/index.js";
import { testBundle } from "../../support/bundles.js";
import { constitution } from "../../support/fixtures.js";
import { createVmBackend } from "../../support/vm-backend.js";
import { startRedisServer, type RedisServerHandle } from "../../support/redis-server.js";
import { waitFor } from "../../support/replicas.js";
import { createHash } from "node:crypto";
import { Redis } from "ioredis";
import { createServer, type VcpServer } from "../../../src/server/app.js";
import { keyPart } from "../../../src/store/keys.js";
import { sessionKey } from "../../../src/pipeline/access.js";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

const A = { principal: { id: "app-a", role: "client" as const } };
const B = { principal: { id: "app-b", role: "client" as const } };

async function code(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
  } catch (err) {
    if (err instanceof VcpError) return err.code;
    throw err;
  }
  return "no error";
}

let redis: RedisServerHandle;
beforeAll(async () => {
  redis = await startRedisServer();
}, 60_000);
afterAll(async () => {
  await redis?.close();
}, 60_000);

describe.each([
  ["local", (): RuntimeOptions["store"] => ({ kind: "local" })],
  ["redis", (): RuntimeOptions["store"] => ({ kind: "redis", url: redis.url, prefix: `hooks-check-${process.pid}`, heartbeatMs: 200, commandTimeoutMs: 2000, connectTimeoutMs: 5000 })],
])("runtime.hooks with store %s", (_kind, store) => {
  let rt: Runtime;
  beforeAll(async () => {
    rt = await createRuntime({ backend: createVmBackend(), audit: false, store: store(), sessionHookAllowlist: ["owned/watch"], registrationsPerMinute: 1000 });
    await rt.bundles.install(
      testBundle("owned", [{ name: "mark", type: "pre_inject" }, { name: "watch", type: "pre_inject", scope: "session" }], {
        mark: "function () { return { status: 'continue' }; }",
        watch: "function () { return { status: 'continue' }; }",
      }),
    );
    await rt.sessions.open({ session_id: "a1", context: {}, constitution }, A);
    await rt.sessions.registerHook("a1", { bundle: "owned", hook: "watch" }, A);
  }, 60_000);
  afterAll(async () => {
    await rt?.close();
  }, 60_000);

  test("another client's session, or none, is SESSION_NOT_FOUND through every member", async () => {
    for (const [session, who] of [["a1", B], ["never-opened", A]] as const) {
      expect(await code(() => rt.hooks.chain("pre_inject", session, who))).toBe("SESSION_NOT_FOUND");
      expect(await code(() => rt.hooks.list({ session }, who))).toBe("SESSION_NOT_FOUND");
      expect(await code(() => rt.hooks.setEnabled("mark", false, { sessionId: session, ...who }))).toBe("SESSION_NOT_FOUND");
    }
    // Nothing was switched off by the refused calls.
    expect((await rt.hooks.chain("pre_inject", "a1", A)).map((h) => [h.name, h.enabled])).toEqual([["mark", true], ["watch", true]]);
  });

  test("the owner lists and switches hooks in its own session", async () => {
    expect((await rt.hooks.list({ session: "a1", type: "pre_inject" }, A)).map((h) => h.name)).toEqual(["mark", "watch"]);
    expect(await rt.hooks.setEnabled("watch", false, { sessionId: "a1", ...A })).toMatchObject({ name: "watch", scope: "session", session_id: "a1", enabled: false });
    expect((await rt.hooks.chain("pre_inject", "a1", A)).find((h) => h.name === "watch")?.enabled).toBe(false);
    await rt.hooks.setEnabled("watch", true, { sessionId: "a1", ...A });
  });
});

describe("runtime.hooks.setEnabled and the registry-change limit with store redis", () => {
  const runtimes: Runtime[] = [];
  afterAll(async () => {
    for (const rt of runtimes) await rt.close().catch(() => undefined);
  }, 60_000);

  test("switches by one operator count once across replicas, like installs: the third on either replica is RATE_LIMITED", async () => {
    const prefix = `hooks-rate-${process.pid}`;
    for (let i = 0; i < 2; i++) {
      runtimes.push(await createRuntime({
        backend: createVmBackend(), audit: false, registrationsPerMinute: 2,
        store: { kind: "redis", url: redis.url, prefix, heartbeatMs: 200, commandTimeoutMs: 2000, connectTimeoutMs: 5000 },
      }));
    }
    const [one, two] = runtimes as [Runtime, Runtime];
    // Installed by the embedding application (no principal: not counted), shared with the second replica.
    await one.bundles.install(testBundle("owned", [{ name: "mark", type: "pre_inject" }], { mark: "function () { return { status: 'continue' }; }" }));
    await waitFor("the second replica to run the bundle", () => two.bundles.get("owned") !== undefined);
    const ops = { principal: { id: "ops", role: "operator" as const } };
    await one.hooks.setEnabled("mark", false, ops);
    await two.hooks.setEnabled("mark", false, ops);
    expect(await code(() => two.hooks.setEnabled("mark", true, ops))).toBe("RATE_LIMITED");
    expect(await code(() => one.hooks.setEnabled("mark", true, ops))).toBe("RATE_LIMITED");
  }, 60_000);
});

describe("GET /v1/hooks?session= over HTTP with store redis", () => {
  let rt: Runtime;
  let server: VcpServer;
  const tokens = { a: "vcp_cl_hooks_check_app_a_0123456789abcdef", b: "vcp_cl_hooks_check_app_b_0123456789abcdef" };
  const prefix = `hooks-http-${process.pid}`;
  beforeAll(async () => {
    rt = await createRuntime({ backend: createVmBackend(), audit: false, registrationsPerMinute: 1000, store: { kind: "redis", url: redis.url, prefix, heartbeatMs: 200, commandTimeoutMs: 2000, connectTimeoutMs: 5000 } });
    server = await createServer({
      runtime: rt as never,
      settings: {
        auth: [{ id: "app-a", role: "client", token_sha256: sha256(tokens.a) }, { id: "app-b", role: "client", token_sha256: sha256(tokens.b) }],
        limits: { body_bytes: 64 * 1024, bundle_bytes: 256 * 1024 },
        sessionHookAllowlist: [],
      },
    });
    await rt.sessions.open({ session_id: "h1", context: {}, constitution }, A);
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await rt?.close();
  }, 60_000);

  const get = async (token: string, url: string) => {
    const res = await server.app.inject({ method: "GET", url, headers: { authorization: `Bearer ${token}` } });
    return { status: res.statusCode, body: JSON.parse(res.body) as { hooks?: unknown[]; error?: { code: string } } };
  };

  test("reads the session once, and another client's session (or none) is still 404 SESSION_NOT_FOUND", async () => {
    const admin = new Redis(redis.url);
    const monitor = await admin.monitor();
    const record = `${prefix}:s:{${keyPart(sessionKey("app-a", "h1"))}}:record`;
    const reads: string[][] = [];
    // Round trips only: what a script runs inside Redis is monitored too (source "lua").
    monitor.on("monitor", (_time: string, args: string[], source: string) => {
      if (source !== "lua" && args.includes(record)) reads.push(args);
    });
    try {
      // Warm the scripts (an EVALSHA miss would count twice).
      expect((await get(tokens.a, "/v1/hooks?session=h1")).status).toBe(200);
      await waitFor("the monitor to see the warm-up", () => reads.length > 0);
      await new Promise((resolve) => setTimeout(resolve, 200));
      reads.length = 0;
      expect((await get(tokens.a, "/v1/hooks?session=h1")).status).toBe(200);
      await waitFor("the monitor to see the read", () => reads.length > 0);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(reads.map((a) => a[0]!.toLowerCase())).toEqual(["evalsha"]);
    } finally {
      monitor.disconnect();
      admin.disconnect();
    }
    for (const [token, session] of [[tokens.b, "h1"], [tokens.a, "never-opened"]] as const) {
      const res = await get(token, `/v1/hooks?session=${session}`);
      expect([res.status, res.body.error?.code]).toEqual([404, "SESSION_NOT_FOUND"]);
    }
  }, 60_000);
});
