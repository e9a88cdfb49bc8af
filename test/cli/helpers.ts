// Run the built CLI (dist/src/cli/main.js) as a child process, as users do through bin/vcp-hooks.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const MAIN = resolve("dist/src/cli/main.js");
export const REPO = resolve(".");

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function cli(args: string[], options: { cwd?: string; input?: string; timeoutMs?: number } = {}): Promise<CliRun> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ["--no-node-snapshot", MAIN, ...args], { cwd: options.cwd ?? REPO, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
    child.on("error", fail);
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? "");
  });
}

export function scratchDir(dirs: string[]): string {
  const d = mkdtempSync(join(tmpdir(), "vcp-cli-"));
  dirs.push(d);
  return d;
}

export function cleanup(dirs: string[]): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}
