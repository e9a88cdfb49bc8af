// The agent's hook environment, end to end (issue 26 item 3): a migrated Claude Code script pinned as
// an exec hook on a real server (createServer + runtime, the command lane on) reads $CLAUDE_PROJECT_DIR
// that the agent gave `vcp-hooks hook`, as it did natively; the adapter carries only the profile's
// documented variables, the server none of its own, and a bad header is refused — blocked on a guarded
// event, like any refusal of the route.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createArtifact, generateKeyPair, signArtifact } from "../../src/tooling.js";
import { hook } from "../cli/hook/stand-in.js";
import { call, startHarness, TOKENS, type Harness } from "./helpers.js";

const SCRIPT = resolve("test/e2e/fixtures/hook-env-claude.sh");
const GUARD = resolve("test/integration/exec/fixtures/guard.sh");
const sha = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");
const system = generateKeyPair();

const prompt = JSON.stringify({ session_id: "env-e2e", transcript_path: "/tmp/t.jsonl", cwd: "/home/dev/app", permission_mode: "default", hook_event_name: "UserPromptSubmit", prompt: "hi" });
const preToolUse = JSON.stringify({ session_id: "env-e2e", transcript_path: "/tmp/t.jsonl", cwd: "/home/dev/app", permission_mode: "default", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "ls" }, tool_use_id: "toolu_1" });
const context = (stdout: string) => (JSON.parse(stdout) as { hookSpecificOutput?: { additionalContext?: string } }).hookSpecificOutput?.additionalContext;

let h: Harness | undefined;
const target = () => ({ url: h!.url, token: TOKENS.client });

beforeAll(async () => {
  process.env["VCP_TEST_SERVER_SECRET"] = "server-secret";
  h = await startHarness({ runtime: { keyring: { keys: [{ key_id: "sys", public_key: system.publicKeyPem, max_trust: "system" }] }, exec: { enabled: true } } });
  const manifest = {
    bundle: "env-e2e", version: "1.0.0", profile: "claude-code", trust: "system",
    hooks: [
      { name: "reads-env", event: "UserPromptSubmit", timeout_ms: 10_000, exec: { command: SCRIPT, sha256: sha(SCRIPT) } },
      { name: "guard", event: "PreToolUse", timeout_ms: 10_000, fail_closed: true, exec: { command: GUARD, sha256: sha(GUARD) } },
    ],
  };
  await h.runtime.bundles.install(signArtifact(createArtifact(manifest, ""), system.privateKeyPem, "sys"));
}, 60_000);
afterAll(async () => {
  delete process.env["VCP_TEST_SERVER_SECRET"];
  await h?.close();
});

describe("a migrated hook reads the agent's hook environment through `vcp-hooks hook`", () => {
  test("$CLAUDE_PROJECT_DIR and $CLAUDE_CODE_REMOTE as the agent set them; not the adapter's token, not the server's secret", async () => {
    const r = await hook(target(), ["UserPromptSubmit", "--dialect", "claude"], prompt, { CLAUDE_PROJECT_DIR: "/home/dev/my app", CLAUDE_CODE_REMOTE: "true" });
    expect(r.code, r.stderr).toBe(0);
    expect(context(r.stdout)).toBe("project=/home/dev/my app remote=true secret=unset token=unset");
  }, 30_000);

  test("an agent that sets none: the script sees them unset, as before", async () => {
    const r = await hook(target(), ["UserPromptSubmit", "--dialect", "claude"], prompt, { CLAUDE_PROJECT_DIR: undefined, CLAUDE_CODE_REMOTE: undefined });
    expect(r.code, r.stderr).toBe(0);
    expect(context(r.stdout)).toBe("project=unset remote=unset secret=unset token=unset");
  }, 30_000);

  test("a value over 4 KiB: the adapter's failure naming the variable, by --on-error (here on a guarded tool event: the block)", async () => {
    const r = await hook(target(), ["PreToolUse", "--dialect", "claude"], preToolUse, { CLAUDE_PROJECT_DIR: `/${"x".repeat(5000)}` });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("the agent's hook environment cannot be sent: CLAUDE_PROJECT_DIR is 5001 bytes, more than 4096");
  }, 30_000);
});

describe("the route's x-vcp-hook-env header", () => {
  const post = (event: string, body: string, header: string) => call(h!.url, "POST", `/v1/profiles/claude-code/events/${event}`, { token: TOKENS.client, body: JSON.parse(body), headers: { "x-vcp-hook-env": header } });

  test("a name the profile does not document: INVALID_INPUT naming it (never passed on)", async () => {
    const r = await post("UserPromptSubmit", prompt, "LD_PRELOAD=/tmp/x.so");
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: { code: "INVALID_INPUT", message: expect.stringContaining("LD_PRELOAD is not a claude-code hook variable") } });
  });

  test("a header that is not the wire form: INVALID_REQUEST naming the header", async () => {
    const r = await post("UserPromptSubmit", prompt, "CLAUDE_PROJECT_DIR=/a b");
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: { code: "INVALID_REQUEST", message: "x-vcp-hook-env: CLAUDE_PROJECT_DIR: the value is not percent-encoded (RFC 3986)" } });
  });

  test("on an event a fail_closed hook guards, either refusal is the profile's block (never a non-2xx the agent reads as go ahead)", async () => {
    for (const header of ["PATH=/tmp", "CLAUDE_PROJECT_DIR=%zz"]) {
      const r = await post("PreToolUse", preToolUse, header);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ exit_code: 2, native: { hookSpecificOutput: { permissionDecision: "deny" } } });
    }
  });
});
