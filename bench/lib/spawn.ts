/**
 * The spawn-per-hook baseline (Claude Code, LLxprt): each hook is a process that reads the JSON
 * input on stdin and writes a JSON result on stdout; hooks of a chain run one after another.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkAction, type PlainInput } from "./hooks.js";

export interface SpawnHook {
  command: string;
  args: string[];
}

export interface SpawnKit {
  sh: SpawnHook;
  node: SpawnHook;
  dispose(): void;
}

/** Write the two hook scripts to a temporary directory. */
export function createSpawnKit(): SpawnKit {
  const dir = mkdtempSync(join(tmpdir(), "vcp-bench-spawn-"));
  const shPath = join(dir, "hook.sh");
  writeFileSync(shPath, `cat >/dev/null\necho '{"status":"continue","annotations":{"check":{"ok":true}}}'\n`);
  const nodePath = join(dir, "hook.mjs");
  writeFileSync(
    nodePath,
    `const action = ${checkAction.toString()};\n` +
      `const chunks = [];\n` +
      `process.stdin.on("data", (c) => chunks.push(c));\n` +
      `process.stdin.on("end", () => { process.stdout.write(JSON.stringify(action(JSON.parse(Buffer.concat(chunks).toString("utf8"))))); });\n`,
  );
  return {
    sh: { command: "/bin/sh", args: [shPath] },
    node: { command: process.execPath, args: [nodePath] },
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export function runHookProcess(hook: SpawnHook, inputJson: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(hook.command, hook.args, { stdio: ["pipe", "pipe", "ignore"] });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.on("error", reject);
    child.stdin.on("error", () => undefined); // EPIPE if the hook exits without reading
    child.on("close", (code, signal) => {
      if (code === 0) resolve(Buffer.concat(chunks).toString("utf8"));
      else reject(new Error(`${hook.command} ${hook.args.join(" ")} exited with ${signal ?? code}`));
    });
    child.stdin.end(inputJson);
  });
}

/** One chain of `n` spawned hooks with modify chaining, as the spawn-per-hook runtimes do it. */
export async function spawnChain(hook: SpawnHook, n: number, input: PlainInput): Promise<unknown[]> {
  let context = input.context;
  const results: unknown[] = [];
  for (let i = 0; i < n; i++) {
    const out = await runHookProcess(hook, JSON.stringify({ ...input, context }));
    const result = JSON.parse(out) as { status: string; modified_context?: Record<string, unknown> };
    if (result.status === "modify" && result.modified_context != null) context = result.modified_context;
    results.push(result);
  }
  return results;
}
