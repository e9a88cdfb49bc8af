/**
 * CPU per profile chain (issue 25 deliver 6): one Gemini CLI `BeforeTool` event through the 5-hook
 * chain of bench/profiles.ts, fired through the library (`runtime.fireProfile`, a real sandbox host),
 * and the CPU it costs: this process (`process.cpuUsage`) plus the sandbox host process
 * (`vcp_sandbox_host_cpu_seconds_total`, Linux /proc), divided by the events fired. Two rows:
 *
 *   run-5      a shell command every hook's matcher selects: 5 hooks run in the sandbox
 *   select-0   a `read_file` call no matcher selects: no hook runs
 *
 * Each line also has `threads`: the CPU per event of each thread group of both processes (Linux /proc,
 * 10 ms ticks: use a few thousand events), e.g. `host.MainThread`, `host.WorkerThread`,
 * `main.libuv-worker` (the audit log's writes).
 *
 * Built into dist/bench/profile-cpu.js; to compare two builds in one sitting, run the same file
 * against each build's dist/ back to back (rounds interleaved by the caller), as machines are noisy.
 *
 *   node --no-node-snapshot dist/bench/profile-cpu.js [--events N] [--rounds R]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createArtifact } from "../src/bundle/artifact.js";
import { createRuntime, type Runtime, type VcpArtifact } from "../src/index.js";
import { guardCode, guardInput, guardManifest } from "./lib/gemini-guard.js";
import { childPidsMatching, threadCpuUs } from "./lib/proc.js";

function bundle(): VcpArtifact {
  return createArtifact(guardManifest(), guardCode()) as VcpArtifact;
}

const ROWS = {
  "run-5": guardInput("run_shell_command", "ls -la src && npm test"),
  "select-0": guardInput("read_file", "ls -la src && npm test"),
} as const;

async function hostCpuSeconds(runtime: Runtime): Promise<number> {
  const line = (await runtime.metrics()).split("\n").find((l) => l.startsWith("vcp_sandbox_host_cpu_seconds_total"));
  return line === undefined ? 0 : Number(line.split(" ").at(-1));
}

/** CPU of each thread group of both processes, µs, keyed `main.<thread name>` / `host.<thread name>`. */
function threadCpu(): Map<string, number> {
  const out = new Map<string, number>();
  const host = childPidsMatching(process.pid, "host-main.js").at(-1);
  for (const [side, pid] of [["main", process.pid], ["host", host]] as const) {
    if (pid === undefined) continue;
    for (const [name, us] of threadCpuUs(pid)) out.set(`${side}.${name}`, us);
  }
  return out;
}

async function measure(runtime: Runtime, row: keyof typeof ROWS, events: number): Promise<{ mainUs: number; hostUs: number; threads: Record<string, number> }> {
  const principal = { id: "bench", role: "client" } as const;
  const hostBefore = await hostCpuSeconds(runtime);
  const threadsBefore = threadCpu();
  const before = process.cpuUsage();
  for (let i = 0; i < events; i++) await runtime.fireProfile("gemini-cli", "BeforeTool", { input: ROWS[row], principal });
  const used = process.cpuUsage(before);
  const threads: Record<string, number> = {};
  for (const [name, us] of threadCpu()) threads[name] = Math.round((us - (threadsBefore.get(name) ?? 0)) / events);
  const hostUs = ((await hostCpuSeconds(runtime)) - hostBefore) * 1e6;
  return { mainUs: (used.user + used.system) / events, hostUs: hostUs / events, threads };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const events = Number(argv.includes("--events") ? argv[argv.indexOf("--events") + 1] : 0) || 1000;
  const rounds = Number(argv.includes("--rounds") ? argv[argv.indexOf("--rounds") + 1] : 0) || 3;
  const dir = mkdtempSync(join(tmpdir(), "vcp-bench-cpu-"));
  const runtime = await createRuntime({ requireSignatures: false, sandbox: { threads: 2 }, dataDir: join(dir, "data") });
  try {
    await runtime.bundles.install(bundle());
    for (const row of Object.keys(ROWS) as (keyof typeof ROWS)[]) await measure(runtime, row, Math.min(200, events)); // warm-up
    for (let round = 0; round < rounds; round++) {
      for (const row of Object.keys(ROWS) as (keyof typeof ROWS)[]) {
        const { mainUs, hostUs, threads } = await measure(runtime, row, events);
        console.log(JSON.stringify({ row, round, events, main_us: Math.round(mainUs), host_us: Math.round(hostUs), total_us: Math.round(mainUs + hostUs), threads }));
      }
    }
  } finally {
    await runtime.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
