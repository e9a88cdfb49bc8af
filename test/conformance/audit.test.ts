// Every hook execution, chain and registry change lands in the hash-chained audit log (spec §8.2.3),
// with the input's hash and never the input itself.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";
import { createRuntime } from "../../src/index.js";
import { verifyAuditLog } from "../../src/audit/index.js";
import { testBundle } from "../support/bundles.js";
import { fireInput } from "../support/fixtures.js";
import { createVmBackend } from "../support/vm-backend.js";

test("§8.2.3 every hook execution, result and chain is in the append-only log with timestamp, name, type, input hash (not the input), status and duration; it verifies and detects an edit", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "vcp-audit-rt-"));
  const rt = await createRuntime({ backend: createVmBackend(), dataDir });
  try {
    await rt.bundles.install(
      testBundle("audited", [
        { name: "tag_it", type: "pre_inject", priority: 90 },
        { name: "skip_me", type: "pre_inject", priority: 10, condition: { field: "context.never", operator: "eq", value: true } },
      ], {
        tag_it: "function (input) { return { status: 'modify', modified_context: { tagged: true }, annotations: { api_key: 'sk-live-abcdefghijklmnopqrstuvwxyz123456' } }; }",
        skip_me: "function () { return { status: 'continue' }; }",
      }),
    );
    const secretContext = { ssn: "123-45-6789", note: "very private" };
    const result = await rt.fire("pre_inject", fireInput("pre_inject", secretContext, "audit-session"));
    const records = await rt.audit.query({ session: "audit-session" });
    expect(records.map((r) => [r.kind, r.hook ?? null, r.outcome ?? null])).toEqual([
      ["hook", "tag_it", "ok"],
      ["hook", "skip_me", "skipped_predicate"],
      ["chain", null, null],
    ]);
    expect(records.every((r) => r.chain_id === result.chain_id && r.input_hash === records[0]!.input_hash)).toBe(true);
    expect(records[0]!.input_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(records[0]).toMatchObject({ hook_type: "pre_inject", status: "modify", ts: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), duration_ms: expect.any(Number) });
    // spec §8.2.3: "any modifications made (diff, not full content)".
    expect(records[0]!.modification).toEqual(expect.arrayContaining([expect.objectContaining({ path: expect.stringMatching(/^\/context\//) })]));
    const fileText = readFileSync(join(dataDir, "audit", "audit.jsonl"), "utf8");
    expect(fileText).not.toContain("123-45-6789");
    expect(fileText).not.toContain("very private");
    expect(fileText).not.toContain("sk-live-abcdefghijklmnopqrstuvwxyz123456");
    const registry = (await rt.audit.query()).filter((r) => r.kind === "registry");
    expect(registry.map((r) => [r.event, r.hook])).toEqual([
      ["hook.registered", "tag_it"],
      ["hook.registered", "skip_me"],
    ]);
    expect(rt.status().audit).toMatchObject({ enabled: true, head: { seq: rt.audit.head().seq } });
  } finally {
    await rt.close();
  }
  const path = join(dataDir, "audit", "audit.jsonl");
  expect(await verifyAuditLog([path])).toMatchObject({ ok: true, records: 5 });
  const lines = readFileSync(path, "utf8").split("\n");
  lines[3] = lines[3]!.replace('"skipped_predicate"', '"ok"');
  writeFileSync(path, lines.join("\n"));
  expect(await verifyAuditLog([path])).toMatchObject({ ok: false, first_bad_seq: 4 });
});

test("§8.2.3 without a data directory there is no audit log, and asking for it says so (AUDIT_DISABLED)", async () => {
  const rt = await createRuntime({ backend: createVmBackend() });
  try {
    expect(rt.status().audit.enabled).toBe(false);
    await expect(rt.audit.query()).rejects.toMatchObject({ code: "AUDIT_DISABLED" });
  } finally {
    await rt.close();
  }
});
