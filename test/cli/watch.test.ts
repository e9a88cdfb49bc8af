// `vcp-hooks test --watch`: runs once, re-runs a policy when a file under it changes, stops on SIGINT
// with the last run's exit code.
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, test, vi } from "vitest";
import { cleanup, cli, MAIN, scratchDir } from "./helpers.js";

const dirs: string[] = [];
afterAll(() => cleanup(dirs));

describe("vcp-hooks test --watch", () => {
  test("re-runs on a source change, reports the new result, and exits with the last run's code", async () => {
    const policy = join(scratchDir(dirs), "watched");
    expect((await cli(["init", policy])).code).toBe(0);
    const child = spawn(process.execPath, ["--no-node-snapshot", MAIN, "test", policy, "--watch"], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
    try {
      await vi.waitFor(() => expect(out).toMatch(/3\/3 case\(s\) passed[\s\S]*watching 1 policy for changes/), { timeout: 60_000, interval: 100 });
      // Break the policy: its "continue" case now fails.
      const source = join(policy, "src", "index.ts");
      writeFileSync(source, readFileSync(source, "utf8").replace('return { status: "continue", annotations: { topic } }', 'return { status: "abort", reason: "broken on purpose" }'));
      await vi.waitFor(() => expect(out).toMatch(/changed: .*watched — running again[\s\S]*case\(s\) passed in 1 policy; 1 policy failed/), { timeout: 60_000, interval: 100 });
    } finally {
      child.kill("SIGINT");
    }
    expect(await exited).toBe(1);
    // Two builds and three policy runs in child processes: each wait above allows 60 s on a busy machine.
  }, 150_000);

  test("--watch with --json is a usage error", async () => {
    const run = await cli(["test", ".", "--watch", "--json"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("does not combine with --json");
  });
});
