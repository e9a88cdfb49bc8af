// `vcp-hooks audit verify` over several replicas' logs (issue 18): one line per replica naming its id,
// exit 0 when every chain verifies, exit 1 naming the broken replica otherwise.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openAuditLog } from "../../src/audit/index.js";
import { cleanup, cli, scratchDir } from "./helpers.js";

const dirs: string[] = [];
let root: string;
afterAll(() => cleanup(dirs));

beforeAll(async () => {
  root = scratchDir(dirs);
  for (const [name, n] of [["vcp-0", 3], ["vcp-1", 4], ["vcp-2", 2]] as const) {
    const log = await openAuditLog({ path: join(root, name, "audit", "audit.jsonl"), fsync: "batch", rotateBytes: 1 << 20, maxPending: 100, replica: name });
    for (let i = 0; i < n; i++) await log.append({ kind: "chain", session: "s", chain_id: `c${i}`, status: "completed" });
    await log.close();
  }
});

describe("audit verify <dir…> over replica logs", () => {
  test("every replica verifies: one OK line each, with its id and count", async () => {
    const run = await cli(["audit", "verify", join(root, "vcp-0"), join(root, "vcp-1"), join(root, "vcp-2")]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split("\n");
    expect(lines).toEqual([
      expect.stringMatching(/^OK +replica vcp-0 .*vcp-0\/audit\/audit\.jsonl: 3 record\(s\); head seq 3 sha256:/),
      expect.stringMatching(/^OK +replica vcp-1 .*: 4 record\(s\)/),
      expect.stringMatching(/^OK +replica vcp-2 .*: 2 record\(s\)/),
      "OK 3 replica log(s) verified",
    ]);
    const json = await cli(["audit", "verify", root, "--json"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, problems: [], logs: [{ replica: "vcp-0" }, { replica: "vcp-1" }, { replica: "vcp-2" }] });
  });

  test("a tampered replica fails the set, named by its id; the others still say OK", async () => {
    const path = join(root, "vcp-1", "audit", "audit.jsonl");
    const original = readFileSync(path, "utf8");
    try {
      writeFileSync(path, original.replace('"chain_id":"c2"', '"chain_id":"cX"'));
      const run = await cli(["audit", "verify", root]);
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(/^OK +replica vcp-0 /m);
      expect(run.stdout).toMatch(/^BROKEN replica vcp-1 .*audit log broken at seq 3: hash mismatch/m);
      expect(run.stdout).toMatch(/^OK +replica vcp-2 /m);
      expect(run.stderr).toContain("1 of 3 replica log(s) broken");
      const anchored = await cli(["audit", "verify", root, "--anchor", "1:sha256:00"]);
      expect(anchored.code).toBe(2);
      expect(anchored.stderr).toContain("--anchor names one chain's head, but the paths hold 3 logs");
    } finally {
      writeFileSync(path, original);
    }
  });

  test("one log: the single-line verdict names its replica", async () => {
    const run = await cli(["audit", "verify", join(root, "vcp-2", "audit", "audit.jsonl")]);
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toMatch(/^OK 2 record\(s\); head seq 2 sha256:[0-9a-f]{64}; replica vcp-2$/);
  });
});
