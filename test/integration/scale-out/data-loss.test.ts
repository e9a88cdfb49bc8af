// Redis losing its data (issue 27): two real `serve` processes on one real redis-server whose files
// are taken away or rolled back between a stop and a start.
//
// Before, nothing noticed: every session became a silent 404, and the shared revision counter started
// over (a 3-replica trial saw 32 → 11), so an operator's "revision 32" meant another bundle than before;
// a Redis restored from an older copy (a backup, a failover to a lagging Redis replica) was
// reconciled to, rolling every replica back to older bundles without a word. Now a replica detects
// both — the store's epoch key (written at first start) gone, or the revision counter below the
// highest it has seen — says so (error log, `store.data_loss` in status, vcp_store_data_loss_total),
// keeps the revisions it runs, and writes them back above the highest revision it has seen.
// `npm run build` first (the replicas run dist/).
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startReplicas, waitFor, type Replica, type ReplicaSet } from "../../support/replicas.js";
import { constitution, installedDigest, markerBundle, status } from "./fixtures.js";

let set: ReplicaSet;
let A: Replica, B: Replica;
let prefix: string;
const backups = mkdtempSync(join(tmpdir(), "vcp-redis-backup-"));

beforeAll(async () => {
  set = await startReplicas({ count: 2 });
  [A, B] = set.replicas as [Replica, Replica];
  prefix = (set.config.store as { prefix: string }).prefix;
}, 300_000);
afterAll(async () => {
  if (process.env.SCALE_OUT_DEBUG) for (const r of set?.replicas ?? []) console.log(`── ${r.name}\n${r.output()}`);
  await set?.close();
  rmSync(backups, { recursive: true, force: true });
}, 120_000);

async function install(version: string): Promise<string> {
  const artifact = markerBundle(set, version);
  const res = await A.request("PUT", "/v1/bundles/marker", { token: set.tokens.operator, body: artifact });
  expect(res.status, res.text).toBe(201);
  for (const r of [A, B]) await waitFor(`${r.name} to run marker ${version}`, async () => (await installedDigest(set, r, "marker")) === artifact.digest);
  return artifact.digest;
}

/** Both replicas connected to Redis again after it restarted. */
async function reconnected(): Promise<void> {
  for (const r of [A, B]) await waitFor(`${r.name} to reconnect`, async () => (await status(set, r)).store.connection.connected === true, 60_000);
}

const aof = () => join(set.redis.dir, "appendonlydir");
const seq = async () => Number((await set.redis.command("GET", `${prefix}:bundle:seq`)) || 0);
const metric = async (r: Replica, kind: string) => {
  const text = (await r.request("GET", "/metrics", { token: set.tokens.operator })).text;
  return Number(new RegExp(`^vcp_store_data_loss_total\\{kind="${kind}"\\} (\\d+)$`, "m").exec(text)?.[1] ?? "NaN");
};

describe("Redis data loss", () => {
  test("Redis restored from an older copy: the replicas keep the newer revisions, say so, and write them back above the highest revision", async () => {
    await install("1.0.0");
    // A copy of Redis's files at revision 1 (a backup, or a Redis replica that fell behind).
    await set.redis.stop();
    cpSync(aof(), join(backups, "at-1"), { recursive: true });
    await set.redis.start();
    await reconnected();
    await install("2.0.0");
    const v3 = await install("3.0.0");
    const highest = await seq();
    expect(highest).toBeGreaterThanOrEqual(3);

    await set.redis.stop();
    rmSync(aof(), { recursive: true, force: true });
    cpSync(join(backups, "at-1"), aof(), { recursive: true });
    await set.redis.start();
    expect(await seq()).toBeLessThan(highest);

    for (const r of [A, B]) {
      const loss = await waitFor(`${r.name} to report the rewind`, async () => (await status(set, r)).store.data_loss ?? undefined, 60_000);
      expect(loss).toMatchObject({ kind: "rewound", detected_at: expect.any(String), message: expect.stringMatching(/revision/) });
    }
    // The shared state says 3.0.0 again, under a revision above every one used before.
    const entry = await waitFor("the store to name 3.0.0 again", async () => {
      const text = await set.redis.command("HGET", `${prefix}:bundle:active`, "marker");
      const parsed = text === "" ? undefined : (JSON.parse(text) as { digest: string; seq: number });
      return parsed?.digest === v3 ? parsed : undefined;
    }, 60_000);
    expect(entry.seq).toBeGreaterThan(highest);
    expect(await seq()).toBeGreaterThan(highest);
    for (const r of [A, B]) {
      expect(await installedDigest(set, r, "marker")).toBe(v3);
      expect((await status(set, r)).store.bundles.revision).toBeGreaterThan(highest);
    }
    expect((await metric(A, "rewound")) + (await metric(B, "rewound"))).toBeGreaterThanOrEqual(2);
    expect(A.output() + B.output()).toMatch(/"level":50[^\n]*lost data/);
  }, 300_000);

  test("Redis restarted empty: the replicas detect it (the epoch key is gone), say so, and the revision counter does not start over", async () => {
    const opened = await A.request("POST", "/v1/sessions", { token: set.tokens.client, body: { session_id: "lost", context: {}, constitution } });
    expect(opened.status, opened.text).toBe(201);
    const v4 = await install("4.0.0");
    const highest = await seq();
    const revisionBefore = (await status(set, B)).store.bundles.revision as number;
    expect(revisionBefore).toBe(highest);

    await set.redis.stop({ kill: true });
    rmSync(aof(), { recursive: true, force: true });
    await set.redis.start();

    for (const r of [A, B]) {
      const loss = await waitFor(`${r.name} to report the loss`, async () => {
        const l = (await status(set, r)).store.data_loss;
        return l?.kind === "emptied" ? l : undefined;
      }, 60_000);
      expect(loss.message).toMatch(/epoch/);
      // `vcp-hooks status` prints the store's warnings: the loss is among them.
      expect((await status(set, r)).store.warnings.join("\n")).toMatch(/Redis lost data \(emptied/);
    }
    expect((await metric(A, "emptied")) + (await metric(B, "emptied"))).toBeGreaterThanOrEqual(2);
    // The session is gone with the data (nothing can bring it back); the bundles are not.
    expect((await B.request("GET", "/v1/sessions/lost", { token: set.tokens.client })).status).toBe(404);
    await waitFor("the store to name 4.0.0 again", async () => {
      const text = await set.redis.command("HGET", `${prefix}:bundle:active`, "marker");
      return text !== "" && (JSON.parse(text) as { digest: string }).digest === v4;
    }, 60_000);
    // The counter continues above every revision used before the loss: revision numbers keep their meaning.
    expect(await seq()).toBeGreaterThan(highest);
    for (const r of [A, B]) expect((await status(set, r)).store.bundles.revision).toBeGreaterThan(revisionBefore);
    await install("5.0.0");
    expect(await seq()).toBeGreaterThan(highest + 1);
  }, 300_000);
});
