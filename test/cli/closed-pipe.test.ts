// `vcp-hooks status | head -1`: a reader that stops reading closes the CLI's stdout. Every command then
// stops quietly, as a process killed by SIGPIPE does (exit 141, no EPIPE stack trace on stderr).
import { spawn } from "node:child_process";
import { describe, expect, test } from "vitest";
import { MAIN, REPO } from "./helpers.js";

/** Run the CLI with its stdout's reading end closed before it writes; resolves with its exit code and stderr. */
function intoClosedPipe(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ["--no-node-snapshot", MAIN, ...args], { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.destroy(); // the reader went away (head -1 after its line)
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", fail);
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code, stderr });
    });
  });
}

describe("output into a closed pipe", () => {
  test.each([["--help"], ["version", "--json"], ["completion", "bash"], ["hooks", "--help"]])("vcp-hooks %s exits quietly with 141", async (...args) => {
    const run = await intoClosedPipe(args);
    expect(run.stderr).not.toMatch(/EPIPE|Unhandled 'error' event/);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(141);
  });
});
