// What a replica says at start about its peers (issue 18 "a replica started with a different prefix
// or config version than its peers says so at start"), and a second live process under one replica id.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startReplicas, waitFor, type ReplicaSet } from "../../support/replicas.js";
import { status } from "./fixtures.js";

describe("start-up checks against the peers", () => {
  let set: ReplicaSet;
  beforeAll(async () => {
    set = await startReplicas({ count: 2 });
  }, 300_000);
  afterAll(async () => {
    await set?.close();
  }, 120_000);

  test("a replica started with another store.prefix says so at start (banner, log, status)", async () => {
    const shared = (set.config.store as { prefix: string }).prefix;
    const stray = await set.add("X", { store: { prefix: "mistyped" } });
    const banner = `WARNING (store): no other live replica uses store prefix 'mistyped', but live replicas use prefix '${shared}' on this Redis`;
    expect(stray.output()).toContain(banner);
    expect(stray.output()).toMatch(/"level":40[^\n]*no other live replica uses store prefix 'mistyped'/);
    expect((await status(set, stray)).store.warnings).toEqual([expect.stringContaining("check store.prefix against the other replicas' vcp.yaml")]);
    // The peers under the shared prefix are not confused by it: no warning there.
    expect((await status(set, set.byName("A"))).store.warnings).toEqual([]);
    await stray.stop();
  }, 120_000);

  test("a replica started with another config version says so at start, and its peers say so too", async () => {
    const odd = await set.add("Y", { limits: { sessions_per_client: 7 } });
    const own = (await status(set, odd)).store;
    expect(odd.output()).toMatch(/WARNING \(store\): config version mismatch: replica 'A' runs config version 'sha256:[0-9a-f]{16}', this replica 'Y' runs 'sha256:[0-9a-f]{16}'/);
    expect(own.warnings).toHaveLength(2); // A and B
    const peer = await waitFor("A to report Y's config version", async () => {
      const warnings: string[] = (await status(set, set.byName("A"))).store.warnings;
      return warnings.find((w) => w.includes("replica 'Y'"));
    });
    expect(peer).toContain(`replica 'Y' runs config version '${own.config_version}'`);
    await odd.stop();
    // Y gone (graceful stop removes its record): the warning clears.
    await waitFor("A's warning to clear", async () => (await status(set, set.byName("A"))).store.warnings.length === 0);
  }, 120_000);

  test("an explicit store.config_version is what peers compare", async () => {
    const labelled = await set.add("Z", { store: { config_version: "release-42" } });
    expect((await status(set, labelled)).store.config_version).toBe("release-42");
    expect(labelled.output()).toContain("replica 'A' runs config version 'sha256:");
    expect(labelled.output()).toContain("this replica 'Z' runs 'release-42'");
    await labelled.stop();
  }, 120_000);

  test("a second live process under a replica id in use refuses to start with REPLICA_ID_IN_USE", async () => {
    const twin = set.add("A-twin", undefined, { replicaId: "A" });
    await expect(twin).rejects.toThrow(/REPLICA_ID_IN_USE: replica id 'A' is heartbeating in store prefix '[^']+' from another live process/);
    // A keeps running and is still one live replica.
    const peers = (await status(set, set.byName("A"))).store.replicas.filter((p: any) => p.live && p.id === "A");
    expect(peers).toHaveLength(1);
  }, 120_000);

  test("a replica killed with SIGKILL restarts under its id without waiting for an operator", async () => {
    const b = set.byName("B");
    const before = (await status(set, b)).store.replicas.find((p: any) => p.id === "B").instance;
    await b.kill9();
    await b.start();
    const after = await waitFor("B's new instance in A's view", async () => {
      const peer = (await status(set, set.byName("A"))).store.replicas.find((p: any) => p.id === "B");
      return peer?.live && peer.instance !== before ? peer : undefined;
    });
    expect(after.instance).not.toBe(before);
  }, 120_000);
});
