// Every row of the exit-code tables through the real fire path (PROFILES §6): an exec hook installed
// from a signed system-trust bundle, fired with runtime.fireProfile, its run read by the profile's table
// and folded by the profile's merge rules into the native answer the agent gets.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createRuntime, type Runtime } from "../../../src/index.js";
import { createArtifact, signArtifact } from "../../../src/bundle/artifact.js";
import { generateKeyPair } from "../../../src/bundle/keys.js";
import { blocked, ROWS, text } from "./exit-rows.js";

const FIXTURE = join(resolve("test/integration/exec/fixtures"), "exit-code.sh");
const SHA = createHash("sha256").update(readFileSync(FIXTURE)).digest("hex");
const system = generateKeyPair();
const EVENT: Record<string, string> = { "gemini-cli": "BeforeTool", llxprt: "BeforeTool", "claude-code": "PreToolUse", "ai-memory": "pre_store", "repo-yaml": "PreAbilityCall" };
const INPUT: Record<string, Record<string, unknown>> = {
  "gemini-cli": { session_id: "t", transcript_path: "/t", cwd: "/tmp", hook_event_name: "BeforeTool", timestamp: "2026-11-26T00:00:00Z", tool_name: "run_shell_command", tool_input: { command: "ls" } },
  llxprt: { session_id: "t", transcript_path: "/t", cwd: "/tmp", hook_event_name: "BeforeTool", timestamp: "2026-11-26T00:00:00Z", tool_name: "run_shell_command", tool_input: { command: "ls" } },
  "claude-code": { session_id: "t", transcript_path: "/t", cwd: "/tmp", permission_mode: "default", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "ls" } },
  "ai-memory": { event: "pre_store", payload: { content: "x" } },
  "repo-yaml": { event_type: "PreAbilityCall", session_id: "t", ability_id: "billing.regression" },
};

let runtime: Runtime;
beforeAll(async () => {
  runtime = await createRuntime({ keyring: { keys: [{ key_id: "sys", public_key: system.publicKeyPem, max_trust: "system" }] }, exec: { enabled: true }, sandbox: { threads: 1 }, registrationsPerMinute: 100_000 });
}, 60_000);
afterAll(async () => {
  await runtime?.close();
});

let n = 0;
for (const profile of Object.keys(blocked)) {
  const rows = ROWS.filter((r) => r.expect[profile] !== undefined && r.timeout !== true);
  describe(`${profile}: the exit-code table through fireProfile`, () => {
    test.each(rows.map((r) => [r.row, r] as const))("%s", async (_name, row) => {
      const bundle = `table-${++n}`;
      const manifest = { bundle, version: "1.0.0", profile, trust: "system", hooks: [{ name: "h", event: EVENT[profile]!, timeout_ms: 10_000, exec: { command: FIXTURE, sha256: SHA, args: row.args } }] };
      await runtime.bundles.install(signArtifact(createArtifact(manifest, ""), system.privateKeyPem, "sys"));
      try {
        const out = await runtime.fireProfile(profile, EVENT[profile]!, { input: INPUT[profile] });
        const want = row.expect[profile]!;
        expect(blocked[profile]!(out.native), text(out.native)).toBe(want.blocked);
        if (want.contains) expect(text(out.native)).toContain(want.contains);
        if (want.lacks) expect(text(out.native)).not.toContain(want.lacks);
        expect(out.result.hook_results[0]).toMatchObject({ hook: "h", sandboxed: false, exec: { exit_code: Number(row.args[0]), signal: null } });
      } finally {
        await runtime.bundles.remove(bundle);
      }
    });
  });
}
