// Issue 28 item 3: the revisions a server keeps of a bundle, a revision's manifest, and a roll back,
// over HTTP on a real runtime and server (operator only; the kept artifact is verified again).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { call, constitution, events, signed, startHarness, TOKENS, type Harness } from "./helpers.js";

const code = (tag: string) => `var __vcp_bundle = { tag: function () { return { status: "continue", annotations: { revision: ${JSON.stringify(tag)} } }; } };`;
const manifest = (version: string, timeout = 1000) => ({ bundle: "revs", version, trust: "deployment", hooks: [{ name: "tag", type: "pre_inject", action: "tag", priority: 10, timeout_ms: timeout }] });
const op = (h: Harness, method: string, path: string, body?: unknown) => call(h.url, method, path, { token: TOKENS.operator, ...(body !== undefined ? { body } : {}) });

describe("bundle revisions", () => {
  let h: Harness;
  const digests: string[] = [];
  beforeAll(async () => {
    h = await startHarness();
    for (const [version, timeout] of [["1.0.0", 1000], ["1.1.0", 1500], ["1.2.0", 2000]] as const) {
      const r = await op(h, "PUT", "/v1/bundles/revs", signed(manifest(version, timeout), code(version)));
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      digests.push(r.body.digest);
    }
    expect((await call(h.url, "POST", "/v1/sessions", { token: TOKENS.client, body: { session_id: "rev-1", context: { note: "n" }, constitution } })).status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  const firedRevision = async () => {
    const r = await call(h.url, "POST", "/v1/sessions/rev-1/chains/pre_inject", { token: TOKENS.client, body: { event: events.pre_inject } });
    expect(r.status).toBe(200);
    return r.body.hook_results.find((x: { hook: string }) => x.hook === "tag").annotations.revision;
  };

  it("lists the kept revisions newest first, who signed them and when, the active one marked", async () => {
    const r = await op(h, "GET", "/v1/bundles/revs/revisions");
    expect(r.status).toBe(200);
    expect(r.body.revisions.map((x: { version: string; digest: string; signed_by: string; active: boolean }) => [x.version, x.digest, x.signed_by, x.active])).toEqual([
      ["1.2.0", digests[2], "ops", true],
      ["1.1.0", digests[1], "ops", false],
      ["1.0.0", digests[0], "ops", false],
    ]);
    expect(Date.parse(r.body.revisions[0].activated_at)).toBeGreaterThan(0);
  });

  it("reads one revision's manifest; an unknown digest is 404 UNKNOWN_REVISION, a malformed one 400", async () => {
    const r = await op(h, "GET", `/v1/bundles/revs/revisions/${encodeURIComponent(digests[0]!)}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ version: "1.0.0", digest: digests[0], active: false, manifest: { bundle: "revs", version: "1.0.0", hooks: [{ name: "tag", timeout_ms: 1000 }] } });
    const unknown = await op(h, "GET", `/v1/bundles/revs/revisions/${encodeURIComponent(`sha256:${"0".repeat(64)}`)}`);
    expect({ status: unknown.status, code: unknown.body.error.code }).toEqual({ status: 404, code: "UNKNOWN_REVISION" });
    expect((await op(h, "GET", "/v1/bundles/revs/revisions/not-a-digest")).status).toBe(400);
    expect((await op(h, "GET", "/v1/bundles/nope/revisions")).body.error.code).toBe("UNKNOWN_BUNDLE");
  });

  it("rolls back to a kept revision (a downgrade, verified again): chains run it; the same digest again is 200", async () => {
    expect(await firedRevision()).toBe("1.2.0");
    const r = await op(h, "POST", "/v1/bundles/revs/rollback", { digest: digests[0] });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({ bundle: "revs", version: "1.0.0", digest: digests[0] });
    expect(await firedRevision()).toBe("1.0.0");
    const list = await op(h, "GET", "/v1/bundles/revs/revisions");
    expect(list.body.revisions.map((x: { version: string; active: boolean }) => `${x.version}${x.active ? "*" : ""}`)).toEqual(["1.0.0*", "1.2.0", "1.1.0"]);
    expect((await op(h, "POST", "/v1/bundles/revs/rollback", { digest: digests[0] })).status).toBe(200);
    const missing = await op(h, "POST", "/v1/bundles/revs/rollback", { digest: `sha256:${"1".repeat(64)}` });
    expect({ status: missing.status, code: missing.body.error.code }).toEqual({ status: 404, code: "UNKNOWN_REVISION" });
  });

  it("a client token may not list, read or roll back", async () => {
    for (const [method, path, body] of [["GET", "/v1/bundles/revs/revisions"], ["GET", `/v1/bundles/revs/revisions/${encodeURIComponent(digests[1]!)}`], ["POST", "/v1/bundles/revs/rollback", { digest: digests[1] }]] as const) {
      const r = await call(h.url, method, path, { token: TOKENS.client, ...(body !== undefined ? { body } : {}) });
      expect(r.status, path).toBe(403);
    }
    expect((await op(h, "GET", "/v1/bundles/revs")).body.version).toBe("1.0.0");
  });

  it("a kept artifact changed on disk is refused by the roll back, and the active revision stays", async () => {
    // Tampering with the data directory must not let unsigned code in: the roll back verifies again.
    const dir = join(h.dataDir, "bundles", "revs");
    const file = readdirSync(dir).find((f) => f === `${digests[1]!.slice(7)}.vcpb`)!;
    const artifact = JSON.parse(readFileSync(join(dir, file), "utf8"));
    artifact.code += "\n// changed on disk";
    writeFileSync(join(dir, file), JSON.stringify(artifact));
    const r = await op(h, "POST", "/v1/bundles/revs/rollback", { digest: digests[1] });
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect((await op(h, "GET", "/v1/bundles/revs")).body.version).toBe("1.0.0");
  });
});
