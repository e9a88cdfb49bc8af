// Audit across three replicas (issue 18, "Done when: every replica's audit verifies"): real `vcp-hooks
// serve` processes on one redis-server; an upload on A (active everywhere), a session opened on A and
// fired on B and C, a replica kill -9ed and started again. Each replica keeps its own hash chain with
// its id in every record; `vcp-hooks audit verify` over the three data directories checks every chain
// and names each replica; a record edited on one replica fails that replica only. Each chain records
// the replica set its replica saw (issue 27), so verifying only A and B names C as missing.
// `npm run build` first (the replicas and the CLI run dist/).
import { readFileSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { verifyAuditLogSet } from "../../../src/audit/index.js";
import { cli } from "../../cli/helpers.js";
import { startReplicas, waitFor, type ReplicaSet } from "../../support/replicas.js";
import { firePreInject, installedDigest, markerBundle } from "./fixtures.js";

let set: ReplicaSet;
beforeAll(async () => {
  set = await startReplicas({ count: 3 });
}, 180_000);
afterAll(async () => {
  await set?.close();
}, 60_000);

describe("every replica's audit verifies", { timeout: 180_000 }, () => {
  test("three chains, one per replica, each naming its replica in every record", async () => {
    const [A, B, C] = set.replicas as [typeof set.replicas[0], typeof set.replicas[0], typeof set.replicas[0]];
    const upload = await A.request("PUT", "/v1/bundles/marker", { token: set.tokens.operator, body: markerBundle(set, "1.0.0") });
    expect(upload.status).toBe(201);
    const digest = upload.body.digest as string;
    for (const r of [B, C]) await waitFor(`marker active on ${r.name}`, async () => (await installedDigest(set, r, "marker")) === digest);
    await firePreInject(set, A, "audited");
    for (const r of [B, C]) {
      const fired = await r.request("POST", "/v1/sessions/audited/chains/pre_inject", { token: set.tokens.client, body: { event: { injection_target: "system", injection_format: "system_prompt", raw_constitution: "Be kind." } } });
      expect(fired.status, r.name).toBe(200);
    }
    // A kill -9 mid-life: the chain resumes from its last durable record at the next start.
    await B.kill9();
    await B.start();
    await firePreInject(set, B, "after-restart");
    // Each replica records the replica set it sees in the store (issue 27): A's chain names all three.
    const logOf = (r: typeof A) => `${r.dataDir}/audit/audit.jsonl`;
    await waitFor("A's chain records B and C in its replica set", async () =>
      readFileSync(logOf(A), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as { kind: string; details?: { replicas?: string[] } })
        .some((r) => r.kind === "replica_set" && ["A", "B", "C"].every((id) => r.details?.replicas?.includes(id))));
    for (const r of set.replicas) await r.stop();

    const dirs = set.replicas.map((r) => r.dataDir);
    const verdict = await verifyAuditLogSet(dirs);
    expect(verdict.problems).toEqual([]);
    expect(verdict.logs.map((l) => [l.replica, l.verdict.ok])).toEqual([["A", true], ["B", true], ["C", true]]);
    for (const { log, verdict: v } of verdict.logs) {
      expect(v.records, log).toBeGreaterThan(0);
      const records = readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { replica?: string; kind: string });
      expect(new Set(records.map((r) => r.replica)), log).toEqual(new Set([v.replicas![0]]));
      expect(records.some((r) => r.kind === "chain"), `${log} holds chain records`).toBe(true);
    }

    const run = await cli(["audit", "verify", ...dirs]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^OK +replica A /m);
    expect(run.stdout).toMatch(/^OK +replica B /m);
    expect(run.stdout).toMatch(/^OK +replica C /m);
    expect(run.stdout).toContain("OK 3 replica log(s) verified");
    expect(verdict.missing).toEqual([]);

    // Issue 27: logs of 3 replicas verified with only 2 name the missing one.
    const partial = await verifyAuditLogSet([A.dataDir, B.dataDir]);
    expect(partial.logs.every((l) => l.verdict.ok)).toBe(true);
    expect(partial.ok).toBe(false);
    expect(partial.missing.map((m) => m.replica)).toEqual(["C"]);
    const withoutC = await cli(["audit", "verify", A.dataDir, B.dataDir]);
    expect(withoutC.code).toBe(1);
    expect(withoutC.stdout).toMatch(/^MISSING replica C: in the replica set recorded in .*audit\.jsonl \(seq \d+\), but its log was not given/m);
    expect(withoutC.stdout + withoutC.stderr).toMatch(/1 replica log\(s\) missing \(C\)/);

    // One edited record on C fails C, and only C.
    const cLog = verdict.logs[2]!.log;
    const lines = readFileSync(cLog, "utf8").split("\n");
    lines[0] = lines[0]!.replace(/"ts":"[^"]+"/, '"ts":"2000-01-01T00:00:00.000Z"');
    writeFileSync(cLog, lines.join("\n"));
    const broken = await cli(["audit", "verify", ...dirs]);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toMatch(/^OK +replica A /m);
    expect(broken.stdout).toMatch(/^BROKEN replica C \(as its first record claims\) .*audit log broken at seq 1: hash mismatch/m);
  });
});
