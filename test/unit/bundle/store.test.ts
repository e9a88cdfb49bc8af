import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { createArtifact } from "../../../src/bundle/artifact.js";
import { createBundleStore, KEPT_REVISIONS, writeAtomic } from "../../../src/bundle/store.js";

const dirs: string[] = [];
const dataDir = () => {
  const d = mkdtempSync(join(tmpdir(), "vcp-store-"));
  dirs.push(d);
  return d;
};
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

const artifact = (bundle: string, version = "1.0.0", tag = "a") =>
  createArtifact(
    { bundle, version, hooks: [{ name: `${bundle}_hook`, type: "pre_inject", action: "act", priority: 1, timeout_ms: 10 }] },
    `var __vcp_bundle = { act: function () { return { status: "continue", annotations: { tag: ${JSON.stringify(tag)} } }; } };`,
  );
const entry = (a: ReturnType<typeof artifact>) => ({ bundle: a.manifest.bundle, version: a.manifest.version, digest: a.digest, activated_at: "2026-01-01T00:00:00.000Z", signed_by: null });

test("activate writes the content-addressed artifact and the index; loadInstalled reads them back in activation order", async () => {
  const d = dataDir();
  const store = createBundleStore(d);
  expect(await store.loadInstalled()).toEqual([]);
  const a = artifact("alpha");
  const b = artifact("beta");
  await store.activate(a, entry(a));
  await store.activate(b, entry(b));
  expect(existsSync(join(d, "bundles", "alpha", `${a.digest.slice(7)}.vcpb`))).toBe(true);
  const loaded = await createBundleStore(d).loadInstalled();
  expect(loaded.map((s) => s.entry.bundle)).toEqual(["alpha", "beta"]);
  expect(loaded[0]!.artifact).toEqual(JSON.parse(JSON.stringify(a)));
  // A new revision moves the bundle to the end; the superseded one stays as history (a roll back target).
  const a2 = artifact("alpha", "1.1.0", "b");
  await store.activate(a2, entry(a2));
  expect((await store.entries()).map((e) => [e.bundle, e.version])).toEqual([["beta", "1.0.0"], ["alpha", "1.1.0"]]);
  expect(readdirSync(join(d, "bundles", "alpha")).sort()).toEqual([`${a.digest.slice(7)}.vcpb`, `${a2.digest.slice(7)}.vcpb`, "revisions.json"].sort());
});

test("the last KEPT_REVISIONS revisions are kept, newest first, with their artifacts; older ones are deleted", async () => {
  const d = dataDir();
  const store = createBundleStore(d);
  const all = Array.from({ length: KEPT_REVISIONS + 2 }, (_, i) => artifact("alpha", `1.${i}.0`, `t${i}`));
  for (const a of all) await store.activate(a, entry(a));
  const kept = all.slice(-KEPT_REVISIONS).reverse();
  expect((await store.revisions("alpha")).map((e) => e.version)).toEqual(kept.map((a) => a.manifest.version));
  expect(await store.revisionArtifact("alpha", kept[3]!.digest)).toEqual(JSON.parse(JSON.stringify(kept[3])));
  // A pruned revision is gone, from the history and the disk.
  expect(await store.revisionArtifact("alpha", all[0]!.digest)).toBeUndefined();
  expect(existsSync(join(d, "bundles", "alpha", `${all[0]!.digest.slice(7)}.vcpb`))).toBe(false);
  // Re-activating a kept revision (a roll back) moves it to the front without a duplicate.
  await store.activate(kept[2]!, entry(kept[2]!));
  expect((await store.revisions("alpha")).map((e) => e.version)).toEqual([kept[2]!, ...kept.filter((a) => a !== kept[2])].map((a) => a.manifest.version));
  // A bundle not installed has no revisions; remove forgets them.
  expect(await store.revisions("beta")).toEqual([]);
  await store.remove("alpha");
  expect(await store.revisions("alpha")).toEqual([]);
  expect(await store.revisionArtifact("alpha", kept[0]!.digest)).toBeUndefined();
});

test("remove drops the index entry and the files", async () => {
  const d = dataDir();
  const store = createBundleStore(d);
  const a = artifact("alpha");
  await store.activate(a, entry(a));
  await store.remove("alpha");
  expect(await store.loadInstalled()).toEqual([]);
  expect(existsSync(join(d, "bundles", "alpha"))).toBe(false);
});

test("no temporary files are left behind", async () => {
  const d = dataDir();
  const store = createBundleStore(d);
  const a = artifact("alpha");
  await store.activate(a, entry(a));
  expect(readdirSync(join(d, "bundles")).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  await writeAtomic(join(d, "x.json"), "one");
  await writeAtomic(join(d, "x.json"), "two");
  expect(readFileSync(join(d, "x.json"), "utf8")).toBe("two");
  expect(readdirSync(d).sort()).toEqual(["bundles", "x.json"]);
});

test.each([
  ["not JSON", "{"],
  ["wrong format", JSON.stringify({ format: "other", bundles: [] })],
  ["a path-traversing bundle name", JSON.stringify({ format: "vcp-installed/1", bundles: [{ bundle: "../../etc", version: "1.0.0", digest: `sha256:${"0".repeat(64)}`, activated_at: "x", signed_by: null }] })],
  ["a digest that is not sha256 hex", JSON.stringify({ format: "vcp-installed/1", bundles: [{ bundle: "a", version: "1.0.0", digest: "sha256:../x", activated_at: "x", signed_by: null }] })],
])("a corrupt index (%s) is STORE_CORRUPT naming the file", async (_label, text) => {
  const d = dataDir();
  const store = createBundleStore(d);
  await writeAtomic(join(d, "bundles", "installed.json"), text);
  await expect(store.loadInstalled()).rejects.toMatchObject({ code: "STORE_CORRUPT", message: expect.stringContaining("installed.json") });
});

test("an index naming a missing artifact is STORE_CORRUPT", async () => {
  const d = dataDir();
  const store = createBundleStore(d);
  const a = artifact("alpha");
  await store.activate(a, entry(a));
  rmSync(join(d, "bundles", "alpha", `${a.digest.slice(7)}.vcpb`));
  await expect(store.loadInstalled()).rejects.toMatchObject({ code: "STORE_CORRUPT", message: expect.stringContaining("alpha") });
  writeFileSync(join(d, "bundles", "alpha", `${a.digest.slice(7)}.vcpb`), "{ not json");
  await expect(store.loadInstalled()).rejects.toMatchObject({ code: "STORE_CORRUPT" });
});
