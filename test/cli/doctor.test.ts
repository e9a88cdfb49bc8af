// `vcp-hooks doctor` (PROFILES §3.5), run as users run it (the built CLI in a child process): a config
// and its data directory (local), and a running server (--server). `npm run build` first.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { createRuntime, type BundleSource } from "../../src/index.js";
import { createServer } from "../../src/server/app.js";
import { profileBundle } from "../support/bundles.js";
import { createVmBackend } from "../support/vm-backend.js";
import { sha256 } from "../e2e/helpers.js";
import { cleanup, cli, scratchDir } from "./helpers.js";

const dirs: string[] = [];
afterEach(() => cleanup(dirs));

const MEMORY = profileBundle("memory-guard", "ai-memory", [{ name: "check_store", event: "pre_store" }], { check_store: "() => ({ action: 'allow' })" });
const AMPLIFIER = profileBundle("amp-guard", "amplifier", [{ name: "note", event: "tool:pre" }], { note: "() => ({ action: 'continue' })" });
// timeout_ms 30: a Claude Code `timeout: 30` (seconds) copied by hand — a note.
const CLAUDE = profileBundle("claude-guard", "claude-code", [{ name: "pre", event: "PreToolUse", timeout_ms: 30 }], { pre: "() => ({})" });

/** Install bundles into a data directory the way `serve` stores them, then stop. */
async function installInto(dataDir: string, bundles: BundleSource[]): Promise<void> {
  const runtime = await createRuntime({ dataDir, backend: createVmBackend(), audit: false });
  try {
    for (const b of bundles) await runtime.bundles.install(b);
  } finally {
    await runtime.close();
  }
}

function config(dir: string, profiles: string): string {
  const file = join(dir, "vcp.yaml");
  writeFileSync(file, `data_dir: ./data\n${profiles}`);
  return file;
}

describe("vcp-hooks doctor", () => {
  test("local: a required event without a hook, an enabled profile without a bundle and a bundle of a disabled profile are problems (exit 1)", async () => {
    const dir = scratchDir(dirs);
    await installInto(join(dir, "data"), [MEMORY, AMPLIFIER, CLAUDE]);
    const file = config(dir, "profiles:\n  ai-memory:\n    required_events: [pre_store, pre_delete]\n  amplifier: {}\n  gemini-cli: {}\n");
    const run = await cli(["doctor", "--config", file, "--json"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as { ok: boolean; findings: Array<{ severity: string; code: string; profile?: string; event?: string; bundle?: string; message: string }> };
    expect(report.ok).toBe(false);
    const problems = report.findings.filter((f) => f.severity === "problem").map((f) => [f.code, f.profile, f.event ?? f.bundle ?? null]);
    expect(problems).toEqual([
      ["REQUIRED_EVENT_WITHOUT_HOOK", "ai-memory", "pre_delete"],
      ["PROFILE_WITHOUT_BUNDLE", "gemini-cli", null],
      ["BUNDLE_OF_DISABLED_PROFILE", "claude-code", "claude-guard"],
    ]);
    expect(report.findings.find((f) => f.code === "REQUIRED_EVENT_WITHOUT_HOOK")!.message).toContain("503");
    expect(report.findings.find((f) => f.code === "TIMEOUT_UNIT")).toMatchObject({ severity: "note", bundle: "claude-guard" });

    const human = await cli(["doctor", "--config", file]);
    expect(human.code).toBe(1);
    expect(human.stdout).toContain("3 problems");
    expect(human.stdout).toContain("PROBLEM REQUIRED_EVENT_WITHOUT_HOOK: ai-memory event pre_delete");
  }, 60_000);

  test("local: a deployment whose required events all have hooks and whose profiles all have bundles is healthy (exit 0)", async () => {
    const dir = scratchDir(dirs);
    await installInto(join(dir, "data"), [MEMORY, AMPLIFIER]);
    const file = config(dir, "profiles:\n  ai-memory:\n    required_events: [pre_store]\n  amplifier: {}\n");
    const run = await cli(["doctor", "--config", file]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("no problems found");
  }, 60_000);

  test("--server: the same checks through GET /v1/profiles, /v1/status and /v1/hooks", async () => {
    const dir = scratchDir(dirs);
    const runtime = await createRuntime({
      dataDir: join(dir, "data"),
      backend: createVmBackend(),
      audit: false,
      profiles: { "ai-memory": { required_events: ["pre_store", "pre_recall"] }, amplifier: {} },
    });
    const server = await createServer({
      runtime,
      settings: { auth: [{ id: "ops", role: "operator", token_sha256: sha256("op-token-doctor-0123456789") }], limits: { body_bytes: 65536, bundle_bytes: 262144 }, sessionHookAllowlist: [] },
    });
    try {
      await runtime.bundles.install(MEMORY);
      const url = await server.listen("127.0.0.1", 0);
      const run = await cli(["doctor", "--server", url, "--token", "op-token-doctor-0123456789", "--json"]);
      expect(run.stderr).toBe("");
      expect(run.code).toBe(1);
      const report = JSON.parse(run.stdout) as { findings: Array<{ severity: string; code: string; profile?: string; event?: string }> };
      expect(report.findings.filter((f) => f.severity === "problem").map((f) => [f.code, f.profile, f.event ?? null])).toEqual([
        ["REQUIRED_EVENT_WITHOUT_HOOK", "ai-memory", "pre_recall"],
        ["PROFILE_WITHOUT_BUNDLE", "amplifier", null],
      ]);
      await runtime.bundles.install(AMPLIFIER);
      await runtime.bundles.install(profileBundle("recall-guard", "ai-memory", [{ name: "check_recall", event: "pre_recall" }], { check_recall: "() => ({ action: 'allow' })" }));
      const healthy = await cli(["doctor", "--server", url, "--token", "op-token-doctor-0123456789"]);
      expect(healthy.code).toBe(0);
      const unauthorized = await cli(["doctor", "--server", url, "--token", "wrong-token-0123456789"]);
      expect(unauthorized.code).toBe(1);
      expect(unauthorized.stderr).toContain("UNAUTHENTICATED");
    } finally {
      await server.close();
      await runtime.close();
    }
  }, 60_000);

  test("usage errors: --config and --server together, a missing config file (exit 2)", async () => {
    const both = await cli(["doctor", "--config", "x.yaml", "--server", "http://127.0.0.1:1"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("not both");
    const missing = await cli(["doctor", "--config", "/nonexistent/vcp.yaml"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("does not exist");
  }, 60_000);
});
