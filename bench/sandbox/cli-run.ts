/**
 * The built CLI (`dist/src/cli/main.js`) spawned as a user or an agent runs it, for the
 * profile-boundary scenarios (adapter, importers, `build --from repo-yaml`): stdin written once,
 * stdout/stderr as bytes, the exit code. Needs `npm run build` (the bench and `npm test` build first).
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { findRepoRoot } from "./corpus.js";

export const CLI_MAIN = join(findRepoRoot(), "dist", "src", "cli", "main.js");

export interface CliRun {
  code: number | null;
  stdout: Buffer;
  stderr: Buffer;
}

/** Run `vcp-hooks <args>`; killed (and answered with code null) after `killAfterMs`. */
export function runCli(args: string[], options: { stdin?: string | Buffer | null; env?: Record<string, string | undefined>; cwd?: string; killAfterMs?: number } = {}): Promise<CliRun> {
  if (!existsSync(CLI_MAIN)) return Promise.reject(new Error(`${CLI_MAIN} is missing: run npm run build first`));
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [CLI_MAIN, ...args], { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, ...options.env }, ...(options.cwd !== undefined ? { cwd: options.cwd } : {}) });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (d: Buffer) => out.push(d));
    child.stderr.on("data", (d: Buffer) => err.push(d));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.killAfterMs ?? 60_000);
    child.on("error", fail);
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout: Buffer.concat(out), stderr: Buffer.concat(err) });
    });
    child.stdin.on("error", () => undefined);
    if (options.stdin === null) return;
    child.stdin.end(options.stdin ?? "");
  });
}

/** Control characters a terminal acts on (everything below 0x20 but tab and newline, DEL, C1). */
export const TERMINAL_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
