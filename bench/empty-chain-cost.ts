/**
 * What a chain with no hook for its event costs (issue 25 item 3): a VCP chain whose type has no hook
 * and a Gemini CLI `BeforeTool` event with no hook installed, each through the runtime API, without and
 * with an audit log. The backend refuses every chain: nothing may cross to a sandbox. CPU time per call
 * (process.cpuUsage, every thread of this process; best of three rounds) and wall time per call, one
 * call at a time.
 *
 *   node dist/bench/empty-chain-cost.js [calls]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRuntime, type Runtime } from "../src/index.js";
import type { ChainBackend } from "../src/pool/backend.js";
import { constitution, otherEvents } from "./lib/fixtures.js";

const CALLS = Number(process.argv[2] ?? 20_000);

const noCrossing: ChainBackend = {
  loadBundle: () => Promise.reject(new Error("no bundle may load in this bench")),
  unloadBundle: () => Promise.resolve(),
  runChain: () => Promise.reject(new Error("an empty chain crossed to the backend")),
  stats: () => ({ restarts: 0, inFlight: 0, queued: 0, quarantined: [], slowBundles: [] }),
  close: () => Promise.resolve(),
};

const gemini = { session_id: "s1", hook_event_name: "BeforeTool", transcript_path: "/tmp/t", cwd: "/tmp", timestamp: "2026-11-28T00:00:00Z", tool_name: "run_shell_command", tool_input: { command: "ls -la" } };

async function perCall(n: number, fn: () => Promise<unknown>): Promise<{ cpuUs: number; wallUs: number }> {
  for (let i = 0; i < Math.min(n, 2000); i++) await fn();
  let best = { cpuUs: Number.POSITIVE_INFINITY, wallUs: Number.POSITIVE_INFINITY };
  for (let r = 0; r < 3; r++) {
    const cpu = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await fn();
    const wallUs = ((performance.now() - t0) * 1000) / n;
    const d = process.cpuUsage(cpu);
    const cpuUs = (d.user + d.system) / n;
    if (cpuUs < best.cpuUs) best = { cpuUs, wallUs };
  }
  return best;
}

async function measure(label: string, runtime: Runtime, n: number): Promise<void> {
  const vcp = await perCall(n, () => runtime.fire("on_transition", { session: "s1", context: { user: "u1" }, constitution, event: otherEvents.on_transition }));
  const profile = await perCall(n, () => runtime.fireProfile("gemini-cli", "BeforeTool", { input: gemini }));
  for (const [what, m] of [["VCP on_transition, no hook", vcp], ["gemini-cli BeforeTool, no hook", profile]] as const) {
    process.stdout.write(`${`${what} (${label})`.padEnd(52)} ${m.cpuUs.toFixed(2).padStart(8)} µs CPU ${m.wallUs.toFixed(2).padStart(8)} µs wall\n`);
  }
}

const plain = await createRuntime({ backend: noCrossing, profiles: { "gemini-cli": {} }, audit: false });
await measure("no audit log", plain, CALLS);
await plain.close();

const dir = mkdtempSync(join(tmpdir(), "vcp-empty-bench-"));
try {
  const audited = await createRuntime({ backend: noCrossing, profiles: { "gemini-cli": {} }, audit: { path: join(dir, "audit.jsonl") } });
  await measure("audit log", audited, Math.max(1, Math.floor(CALLS / 10)));
  await audited.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
