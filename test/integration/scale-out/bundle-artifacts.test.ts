// The artifact keys of the shared bundle state (src/store/bundles.ts) on a real redis-server: an
// artifact a publication wrote stays only when the publication's entry was written. A script that
// fails after it stored the artifact (here: Redis denies INCR, which only the revision counter of a
// bundle change and a session's lock use) must not leave a key without expiry that nothing names.
import { Redis } from "ioredis";
import { describe, expect, test } from "vitest";
import { sharedBundleState } from "../../../src/store/index.js";
import { whileIncrIsRefused } from "../../support/redis-server.js";
import { useRedisStore } from "../../support/redis-store.js";

const store = useRedisStore("artifacts");

const input = (digest: string, version: string) => ({
  bundle: "guard", digest, version, artifactJson: JSON.stringify({ manifest: { bundle: "guard", version } }), by: "replica-a", allowDowngrade: false,
});
const digestOf = (n: number) => `sha256:${String(n).repeat(64)}`;

describe("shared bundle artifacts", () => {
  test("a publication the script could not finish leaves its artifact expiring, not stored for good", async () => {
    const connection = store();
    const state = sharedBundleState(connection);
    await state.publish({ ...input(digestOf(1), "1.0.0"), mode: "replace" });
    await whileIncrIsRefused(store.url(), () => expect(state.publish({ ...input(digestOf(2), "2.0.0"), mode: "replace" })).rejects.toThrow());
    const admin = new Redis(store.url());
    try {
      const key = connection.keys.bundleArtifact(digestOf(2));
      const ttl = await admin.pttl(key);
      // -2: no key at all is as good; -1 would be a key that stays for ever with no entry naming it.
      expect(ttl === -2 || ttl > 0, `PTTL ${key} = ${ttl}`).toBe(true);
      // The shared revision is still 1.0.0, whose artifact stays for good.
      expect((await state.read()).entries.map((e) => ("digest" in e ? e.digest : undefined))).toEqual([digestOf(1)]);
      expect(await admin.pttl(connection.keys.bundleArtifact(digestOf(1)))).toBe(-1);
    } finally {
      admin.disconnect();
    }
  }, 60_000);

  test("a publication that finishes keeps its artifact for good, and the one it replaced expires", async () => {
    const connection = store();
    const state = sharedBundleState(connection);
    await state.publish({ ...input(digestOf(3), "3.0.0"), mode: "replace" });
    const admin = new Redis(store.url());
    try {
      expect(await admin.pttl(connection.keys.bundleArtifact(digestOf(3)))).toBe(-1);
      expect(await admin.pttl(connection.keys.bundleArtifact(digestOf(1)))).toBeGreaterThan(0);
      expect(await state.artifact(digestOf(3))).toEqual({ manifest: { bundle: "guard", version: "3.0.0" } });
    } finally {
      admin.disconnect();
    }
  }, 60_000);
});

describe("shared bundle removals", () => {
  test("a removal the script could not finish leaves the shared revision and its artifact as they were", async () => {
    const connection = store();
    const state = sharedBundleState(connection);
    await state.publish({ ...input(digestOf(4), "4.0.0"), mode: "replace" });
    await whileIncrIsRefused(store.url(), () => expect(state.remove({ bundle: "guard", by: "replica-a" })).rejects.toThrow());
    const admin = new Redis(store.url());
    try {
      expect((await state.read()).entries.map((e) => ("digest" in e ? e.digest : "removed"))).toEqual([digestOf(4)]);
      expect(await admin.pttl(connection.keys.bundleArtifact(digestOf(4)))).toBe(-1);
      // A removal that finishes sets it to expire.
      await state.remove({ bundle: "guard", by: "replica-a" });
      expect(await admin.pttl(connection.keys.bundleArtifact(digestOf(4)))).toBeGreaterThan(0);
    } finally {
      admin.disconnect();
    }
  }, 60_000);
});
