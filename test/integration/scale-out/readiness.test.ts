// A replica that refuses the active shared revision is not ready (issue 24, review): real `serve`
// processes on one real redis-server. Before, a replica whose keyring refused a new revision stayed
// ready and served without the guard, a fresh replica that refused the only revision answered /readyz
// 200 with no policy at all, and the upload's answer said nothing about either. Now such a replica
// answers /readyz 503 `revision_refused` naming the bundle and the code (and says so in status), and
// `PUT /v1/bundles` answers which live replicas accepted, refused or had not answered.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { generateKeyPair } from "../../../src/tooling.js";
import { startReplicas, waitFor, type Replica, type ReplicaSet } from "../../support/replicas.js";
import { installedDigest, markerBundle, status } from "./fixtures.js";

const CLI = resolve(import.meta.dirname, "../../../dist/src/cli/main.js");
// A second signing key: A and B trust it, C (and the fresh D) do not.
const ops2 = { ...generateKeyPair(), keyId: "ops2" };

/** /readyz once the sandbox is up (a replica just started answers sandbox_starting first). */
async function readiness(replica: Replica): Promise<{ status: number; body: { status: string; reason?: string } }> {
  return waitFor(`${replica.name}'s readiness`, async () => {
    const r = await replica.request("GET", "/readyz");
    return r.body?.status === "sandbox_starting" ? undefined : { status: r.status, body: r.body };
  });
}

describe("replica readiness follows the shared revision", () => {
  let set: ReplicaSet;
  let a: Replica, b: Replica, c: Replica;
  let opsOnly: Record<string, unknown>;

  beforeAll(async () => {
    const ops = generateKeyPair();
    const both = { keyring: { keys: [{ key_id: "ops", public_key: ops.publicKeyPem, max_trust: "deployment" }, { key_id: "ops2", public_key: ops2.publicKeyPem, max_trust: "deployment" }] } };
    opsOnly = { keyring: { keys: [{ key_id: "ops", public_key: ops.publicKeyPem, max_trust: "deployment" }] } };
    // A generous wait: on a busy 2-core machine a replica may take seconds to verify and load; the
    // answer comes as soon as every live replica has said, so this only bounds the worst case.
    set = await startReplicas({ count: 3, signingKey: ops, perReplica: { A: both, B: both }, config: { store: { upload_wait_ms: 20_000 } } });
    a = set.byName("A");
    b = set.byName("B");
    c = set.byName("C");
  }, 300_000);

  afterAll(async () => {
    if (process.env.SCALE_OUT_DEBUG) for (const r of set.replicas) console.log(`── ${r.name}\n${r.output()}`);
    await set?.close();
  }, 120_000);

  test("an upload answers which replicas refused it; the refusing replica is not ready until it runs the active revision", async () => {
    const v1 = markerBundle(set, "1.0.0");
    const put1 = await a.request("PUT", "/v1/bundles/marker", { token: set.tokens.operator, body: v1 });
    expect(put1.status, put1.text).toBe(201);
    expect(put1.body.replicas).toEqual({ accepted: ["A", "B", "C"], refused: [], pending: [] });
    for (const r of [a, b, c]) expect((await readiness(r)).status).toBe(200);

    // v2 is signed by a key C's keyring does not hold: A's answer names C's refusal.
    const v2 = markerBundle(set, "2.0.0", { privateKeyPem: ops2.privateKeyPem, keyId: "ops2" });
    const put2 = await a.request("PUT", "/v1/bundles/marker", { token: set.tokens.operator, body: v2 });
    expect(put2.status, put2.text).toBe(201);
    expect(put2.body.replicas.accepted).toEqual(["A", "B"]);
    expect(put2.body.replicas.pending).toEqual([]);
    expect(put2.body.replicas.refused).toEqual([{ replica: "C", code: "SIGNATURE_INVALID", message: expect.stringContaining("marker") }]);

    // C still runs v1 — without whatever v2 adds — so it is not ready; A and B are.
    expect(await installedDigest(set, c, "marker")).toBe(v1.digest);
    const refused = await readiness(c);
    expect(refused.status).toBe(503);
    expect(refused.body.status).toBe("revision_refused");
    expect(refused.body.reason).toMatch(/bundle 'marker' 2\.0\.0 \(sha256:[0-9a-f]{64}, shared revision \d+\): SIGNATURE_INVALID/);
    for (const r of [a, b]) expect((await readiness(r)).status).toBe(200);
    const own = await status(set, c);
    expect(own.store.bundles).toMatchObject({ ready: false, not_ready_reason: expect.stringContaining("SIGNATURE_INVALID") });

    // The same upload again through `vcp-hooks push` (nothing changes, 200): it names C's refusal and exits 1.
    const file = join(b.dataDir, "v2.vcpb");
    writeFileSync(file, JSON.stringify(v2));
    const push = spawnSync(process.execPath, ["--no-node-snapshot", CLI, "push", file, "--server", b.url, "--token", set.tokens.operator], { encoding: "utf8" });
    expect(push.status, push.stderr).toBe(1);
    expect(push.stdout).toMatch(/already installed \(nothing changed\): marker@2\.0\.0/);
    expect(push.stdout).toMatch(/REFUSED by replica C \(SIGNATURE_INVALID\)/);
    // `vcp-hooks status` shows C not ready.
    const cli = spawnSync(process.execPath, ["--no-node-snapshot", CLI, "status", "--server", a.url, "--token", set.tokens.operator], { encoding: "utf8" });
    expect(cli.stdout).toMatch(/replica C: live, NOT READY \(refused the active revision\)/);

    // A revision C accepts: everyone runs it, C is ready again.
    const v3 = markerBundle(set, "3.0.0");
    const put3 = await b.request("PUT", "/v1/bundles/marker", { token: set.tokens.operator, body: v3 });
    expect(put3.body.replicas).toEqual({ accepted: ["A", "B", "C"], refused: [], pending: [] });
    expect((await readiness(c)).status).toBe(200);
  }, 180_000);

  test("a fresh replica that refuses the only revision of a bundle is not ready (it would run no policy)", async () => {
    const removed = await a.request("DELETE", "/v1/bundles/marker", { token: set.tokens.operator });
    expect(removed.status, removed.text).toBe(200);
    const guard = markerBundle(set, "4.0.0", { privateKeyPem: ops2.privateKeyPem, keyId: "ops2" });
    const put = await a.request("PUT", "/v1/bundles/marker", { token: set.tokens.operator, body: guard });
    expect(put.status, put.text).toBe(201);
    expect(put.body.replicas.refused.map((r: { replica: string }) => r.replica)).toEqual(["C"]);

    // D starts on an empty data directory with C's keyring: the store's only bundle is refused.
    const d = await set.add("D", opsOnly, { ready: false });
    const answer = await readiness(d);
    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({ status: "revision_refused", reason: expect.stringMatching(/bundle 'marker' 4\.0\.0 .*SIGNATURE_INVALID/) });
    expect(await installedDigest(set, d, "marker")).toBeUndefined();
    const seen = await status(set, d);
    expect(seen.bundles).toEqual([]);
    expect(seen.store.bundles.refused).toEqual([expect.objectContaining({ bundle: "marker", digest: guard.digest, code: "SIGNATURE_INVALID" })]);

    // Removing the bundle everywhere: nothing is refused any more, C and D are ready.
    expect((await b.request("DELETE", "/v1/bundles/marker", { token: set.tokens.operator })).status).toBe(200);
    await waitFor("D to be ready", async () => (await d.request("GET", "/readyz")).status === 200);
    await waitFor("C to be ready", async () => (await c.request("GET", "/readyz")).status === 200);
  }, 240_000);
});
