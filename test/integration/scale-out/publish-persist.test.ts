// A bundle change the shared store took, then this replica's data directory refused (issue 25 item 4):
// with `store: redis` and a data directory, an install (or removal) on replica A is published to Redis
// and only then persisted. When Redis accepted it and the data directory write fails, A must neither
// claim the change was refused (B already runs it) nor stay behind for good: it answers
// PUBLISHED_NOT_PERSISTED, is NOT READY while it does not run the deployment's revision, and applies
// that revision at its next reconcile once its data directory can be written again — so every
// replica converges on the one revision Redis holds. The same for a removal, and for a peer whose
// data directory refuses a shared revision (retried at each reconcile, not only at the next change).
// Runs on a real redis-server. A data directory "refuses" through a directory standing where a file
// must be written (works as root too).
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { describe, expect, test, vi } from "vitest";
import { statusCommand } from "../../../src/cli/remote.js";
import { createRuntime, type Runtime } from "../../../src/index.js";
import { createArtifact } from "../../../src/bundle/artifact.js";
import { parseManifest } from "../../../src/bundle/manifest.js";
import { testBundle } from "../../support/bundles.js";
import { createVmBackend } from "../../support/vm-backend.js";
import { useRedisServer } from "../../support/redis-server.js";
import { waitFor } from "../../support/replicas.js";

const CONTINUE = "function () { return { status: 'continue' }; }";
/** Short, so "well after reconcile" is a few seconds of test. */
const RECONCILE_MS = 300;

const redis = useRedisServer<Runtime>();
const { runtimes, dirs } = redis;

function guard(version: string) {
  return testBundle("guard", [{ name: "mark", type: "pre_inject" }], { mark: CONTINUE }, { version });
}

/** The file name the data directory gives a revision's artifact (bundle/store.ts `artifactFile`). */
function artifactPath(dataDir: string, source: ReturnType<typeof guard>): string {
  const { digest } = createArtifact(parseManifest(source.manifest), source.code);
  return join(dataDir, "bundles", "guard", `${digest.slice("sha256:".length)}.vcpb`);
}

/** A replica on `dataDir` (a new one by default; an existing one is a restart: same data, same replica id). */
async function replica(prefix: string, dataDir = mkdtempSync(join(tmpdir(), "vcp-publish-persist-"))): Promise<{ rt: Runtime; dataDir: string }> {
  if (!dirs.includes(dataDir)) dirs.push(dataDir);
  const rt = await createRuntime({
    backend: createVmBackend(), audit: false, registrationsPerMinute: 1000, dataDir,
    store: { kind: "redis", url: redis.url, prefix, heartbeatMs: 200, reconcileMs: RECONCILE_MS, commandTimeoutMs: 2000, connectTimeoutMs: 5000 },
  });
  runtimes.push(rt);
  return { rt, dataDir };
}

/** Two replicas of a fresh prefix, each with its own data directory, running guard 1.0.0. */
async function pair() {
  const prefix = `persist-${randomUUID().slice(0, 8)}`;
  const a = await replica(prefix);
  const b = await replica(prefix);
  await a.rt.bundles.install(guard("1.0.0"));
  await waitFor("B to run guard 1.0.0", () => b.rt.bundles.get("guard")?.version === "1.0.0");
  return { prefix, a, b };
}

const ready = (rt: Runtime) => (rt.status().store as { bundles?: { ready: boolean; not_ready_reason: string | null } }).bundles;
/** What `vcp-hooks status` prints for `rt` (its GET /v1/status answered by `rt.status()`). */
async function statusLines(rt: Runtime): Promise<string[]> {
  const lines: string[] = [];
  vi.stubGlobal("fetch", async () => new Response(JSON.stringify(rt.status()), { status: 200, headers: { "content-type": "application/json" } }));
  try {
    await statusCommand.run(["--server", "http://127.0.0.1:9", "--token", "t"], { json: false, out: (t) => lines.push(...t.split("\n")), err: () => undefined });
  } finally {
    vi.unstubAllGlobals();
  }
  return lines;
}

/** Let several reconcile intervals pass. */
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("a change Redis took whose data-directory write failed on the replica that made it", () => {
  test("an install: A answers PUBLISHED_NOT_PERSISTED, is not ready while it runs 1.0.0, and converges on 2.0.0 once its disk takes it", async () => {
    const { prefix, a, b } = await pair();
    const v2 = guard("2.0.0");
    // A non-empty directory where A's data directory must write 2.0.0's artifact: the rename fails (as root too).
    const inTheWay = artifactPath(a.dataDir, v2);
    mkdirSync(inTheWay, { recursive: true });
    writeFileSync(join(inTheWay, "blocker"), "in the way");

    const err = await a.rt.bundles.install(v2).then(() => undefined, (e: unknown) => e as { code?: string; message?: string });
    // The answer says what happened: live in the shared store, not written here.
    expect(err).toMatchObject({ code: "PUBLISHED_NOT_PERSISTED" });
    expect(err?.message).toMatch(/shared store/);
    expect(err?.message).toMatch(/data directory/);
    // Counted as what it is, not as a failed install: B runs it.
    const metrics = await a.rt.metrics();
    expect(metrics).toContain('vcp_bundle_changes_total{result="not_persisted"} 1');
    expect(metrics).not.toContain('vcp_bundle_changes_total{result="failed"}');
    await waitFor("B to run guard 2.0.0", () => b.rt.bundles.get("guard")?.version === "2.0.0");

    // While its disk refuses 2.0.0, A keeps what its disk holds and says it is not ready.
    await pause(RECONCILE_MS * 4);
    expect(a.rt.bundles.get("guard")?.version).toBe("1.0.0");
    expect(ready(a.rt)).toMatchObject({ ready: false, not_ready_reason: expect.stringContaining("'guard' 2.0.0") });

    // A restarted on its data directory (still 1.0.0, still refusing 2.0.0) rolls nobody back: the
    // deployment's revision stays 2.0.0, and A says it is not ready.
    await a.rt.close();
    const restarted = await replica(prefix, a.dataDir);
    await waitFor("the restarted A to report it does not run 2.0.0", () => ready(restarted.rt)?.ready === false, 30_000);
    await pause(RECONCILE_MS * 4);
    expect(b.rt.bundles.get("guard")?.version).toBe("2.0.0");
    const late = await replica(prefix);
    await waitFor("a replica started now to run guard", () => late.rt.bundles.get("guard") !== undefined);
    expect(late.rt.bundles.get("guard")?.version).toBe("2.0.0");

    // The disk is writable again: A's reconcile applies and persists 2.0.0 — one revision everywhere.
    rmSync(inTheWay, { recursive: true, force: true });
    await waitFor("A to run guard 2.0.0", () => restarted.rt.bundles.get("guard")?.version === "2.0.0", 30_000);
    await waitFor("A to be ready", () => ready(restarted.rt)?.ready === true, 30_000);
    expect(b.rt.bundles.get("guard")?.version).toBe("2.0.0");

    // Persisted: A's data directory names 2.0.0, and A restarted again runs it.
    const index = JSON.parse(readFileSync(join(a.dataDir, "bundles", "installed.json"), "utf8")) as { bundles: Array<{ bundle: string; version: string }> };
    expect(index.bundles).toEqual([expect.objectContaining({ bundle: "guard", version: "2.0.0" })]);
    await restarted.rt.close();
    expect((await replica(prefix, a.dataDir)).rt.bundles.get("guard")?.version).toBe("2.0.0");
  }, 120_000);

  test("a removal: A answers PUBLISHED_NOT_PERSISTED, is not ready while it keeps the bundle, and removes it once its disk takes it", async () => {
    const { a, b } = await pair();
    // A directory where A's index must be rewritten: the removal cannot be written (as root too).
    const index = join(a.dataDir, "bundles", "installed.json");
    const saved = `${index}.saved`;
    rmSync(saved, { force: true });
    renameSync(index, saved);
    mkdirSync(join(index, "blocker"), { recursive: true });

    const err = await a.rt.bundles.remove("guard").then(() => undefined, (e: unknown) => e as { code?: string; message?: string });
    expect(err).toMatchObject({ code: "PUBLISHED_NOT_PERSISTED" });
    expect(err?.message).toMatch(/removed in the shared store/);
    expect(await a.rt.metrics()).toContain('vcp_bundle_changes_total{result="not_persisted"} 1');
    await waitFor("B to drop guard", () => b.rt.bundles.get("guard") === undefined);
    // While its disk refuses the removal, A keeps guard and says it is not ready.
    await pause(RECONCILE_MS * 4);
    expect(a.rt.bundles.get("guard")?.version).toBe("1.0.0");
    expect(ready(a.rt)).toMatchObject({ ready: false, not_ready_reason: expect.stringContaining("'guard' removal") });
    // `vcp-hooks status` names the removal A could not apply, and what A keeps.
    expect(await statusLines(a.rt)).toContainEqual(expect.stringMatching(/^ {4}refused the removal of guard \(STORE_CORRUPT\); keeps guard@1\.0\.0$/));

    rmSync(index, { recursive: true, force: true });
    renameSync(saved, index);
    await waitFor("A to drop guard", () => a.rt.bundles.get("guard") === undefined, 30_000);
    await waitFor("A to be ready", () => ready(a.rt)?.ready === true, 30_000);
  }, 120_000);

  test("a peer whose data directory refuses a shared revision is not ready, and takes it at a later reconcile once its disk does", async () => {
    const { a, b } = await pair();
    const v2 = guard("2.0.0");
    const inTheWay = artifactPath(b.dataDir, v2);
    mkdirSync(inTheWay, { recursive: true });
    writeFileSync(join(inTheWay, "blocker"), "in the way");

    await a.rt.bundles.install(v2);
    await waitFor("B to report it does not run 2.0.0", () => ready(b.rt)?.ready === false, 30_000);
    expect(b.rt.bundles.get("guard")?.version).toBe("1.0.0");
    // No new shared revision comes: the reconcile interval alone retries it.
    rmSync(inTheWay, { recursive: true, force: true });
    await waitFor("B to run guard 2.0.0", () => b.rt.bundles.get("guard")?.version === "2.0.0", 30_000);
    await waitFor("B to be ready", () => ready(b.rt)?.ready === true, 30_000);
  }, 120_000);
});
