/**
 * CPU-profile harness for the chain path (issue "transport v2"): a 5-hook modify chain at concurrency
 * 64 for a fixed count, through `createRuntime` and the real sandbox. Run with profiles of every
 * process and thread:
 *
 *   NODE_OPTIONS="--cpu-prof --cpu-prof-dir=/tmp/prof" node --no-node-snapshot dist/bench/profile-chain.js [count]
 *
 * and read the profiles with `node dist/bench/lib/cpu-profile-top.js /tmp/prof`. Without NODE_OPTIONS it
 * prints CPU time per chain by process and thread group (CPU time, not wall time: it holds up on a
 * busy machine, where sampled profiles charge preemption to whatever function was running).
 *
 * `MODE=gemini` fires a 5-hook gemini-cli BeforeTool chain (runtime.fireProfile, every hook sandboxed:
 * one sandbox task per chain, the path chains without exec hooks keep); `MODE=gemini-exec` the same
 * chain with its first hook an exec hook (PROFILES §6: the executor then runs in the main process, the
 * four sandboxed hooks as one-action tasks, the script through the command lane). The scripts' own CPU
 * is not counted (they are children of this process, not threads of it). `EXEC_HOOKS=n` makes the first n
 * hooks exec hooks (default 1), `SCRIPT_SLEEP_MS=n` makes each script wait n ms first (as a script waiting
 * on I/O does). The chain is a parallel group: in gemini-exec its hooks run at once.
 * `CONCURRENCY=1` measures one chain's latency (chains/s = 1 / latency).
 * `AUDIT=batch|always|never` writes the audit log (in a temp dir, with that `fsync`), as the HTTP
 * server does with a data directory: the main process's share then includes the records and the
 * group commit (default: no audit log); `AUDIT_GROUP_COMMIT_MS=n` sets its group-commit window.
 */
import { createHash } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createArtifact, generateKeyPair, signArtifact } from "../src/tooling.js";
import { createRuntime, type FireInput } from "../src/index.js";
import { constitution, makeContext, preInjectEvent, SESSION } from "./lib/fixtures.js";
import { benchBundle, chainActions } from "./lib/hooks.js";
import { childPidsMatching, threadCpuByTid, threadCpuUs } from "./lib/proc.js";

const COUNT = Number(process.argv[2] ?? 20_000);
const N = Number(process.argv[3] ?? 5);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 64);

const MODE = process.env.MODE ?? "vcp";
const EXEC_HOOKS = Number(process.env.EXEC_HOOKS ?? 1);
/** Each script waits this long first (a script that waits on I/O, as real hooks do); default 0. */
const SCRIPT_SLEEP_MS = Number(process.env.SCRIPT_SLEEP_MS ?? 0);
if (!["vcp", "gemini", "gemini-exec"].includes(MODE)) throw new Error(`MODE must be vcp, gemini or gemini-exec, not ${MODE}`);
const systemKey = generateKeyPair();
const scratch = mkdtempSync(join(tmpdir(), "vcp-profile-chain-"));
const AUDIT = process.env.AUDIT;
if (AUDIT !== undefined && !["batch", "always", "never"].includes(AUDIT)) throw new Error(`AUDIT must be batch, always or never, not ${AUDIT}`);
const runtime = await createRuntime({
  sandbox: { threads: 2 },
  ...(AUDIT !== undefined
    ? { audit: { path: join(scratch, "audit", "audit.jsonl"), fsync: AUDIT as "batch" | "always" | "never", groupCommitMs: Number(process.env.AUDIT_GROUP_COMMIT_MS ?? 0) } }
    : {}),
  registrationsPerMinute: 100_000,
  ...(MODE === "gemini-exec" ? { keyring: { keys: [{ key_id: "sys", public_key: systemKey.publicKeyPem, max_trust: "system" as const }] }, requireSignatures: false, exec: { enabled: true } } : {}),
});
let fireOnce: () => Promise<unknown>;
/** Audit syncs so far (one per group-commit batch), from the runtime's fsync histogram. */
async function auditSyncs(): Promise<number> {
  const line = /^vcp_audit_fsync_duration_seconds_count(?:\{[^}]*\})? (\d+)/m.exec(await runtime.metrics());
  return Number(line?.[1] ?? 0);
}
try {
  if (MODE === "vcp") {
    const actions = chainActions(N, "modify");
    for (let i = 0; i < N; i++) {
      await runtime.bundles.install(benchBundle(`prof-${i}`, [{ name: `h-${i}`, type: "pre_inject", action: "run", priority: 100 - i }], { run: actions[i]! }));
    }
    const input: FireInput<"pre_inject"> = { context: makeContext(), constitution, event: preInjectEvent, session: SESSION };
    fireOnce = () => runtime.fire("pre_inject", input);
  } else {
    // Five gemini-cli BeforeTool hooks, one destructive-command pattern each (the first an exec hook in gemini-exec).
    const patterns = ["rm\\s+-rf", "mkfs", "dd\\s+if=", ":\\(\\)\\{", "chmod\\s+-R\\s+777"];
    for (let i = 0; i < N; i++) {
      const hook = { name: `g-${i}`, event: "BeforeTool", priority: 100 - i, timeout_ms: 5000 };
      if (i < EXEC_HOOKS && MODE === "gemini-exec") {
        const script = join(scratch, "guard.sh");
        const text = `#!/bin/sh\n${SCRIPT_SLEEP_MS > 0 ? `sleep ${SCRIPT_SLEEP_MS / 1000}\n` : ""}case "$(cat)" in *'rm -rf'*) echo 'blocked' >&2; exit 2;; esac\nexit 0\n`;
        writeFileSync(script, text);
        chmodSync(script, 0o755);
        const sha256 = createHash("sha256").update(text).digest("hex");
        const artifact = createArtifact({ bundle: `g-${i}`, version: "1.0.0", profile: "gemini-cli", trust: "system", hooks: [{ ...hook, exec: { command: script, sha256 } }] }, "");
        await runtime.bundles.install(signArtifact(artifact, systemKey.privateKeyPem, "sys"));
        continue;
      }
      const code = `var __vcp_bundle = { check: function (input) { return new RegExp(${JSON.stringify(patterns[i % patterns.length])}).test(input.tool_input.command) ? { decision: "deny", reason: "g-${i}" } : {}; } };`;
      await runtime.bundles.install({ manifest: { bundle: `g-${i}`, version: "1.0.0", profile: "gemini-cli", trust: "deployment", hooks: [{ ...hook, action: "check" }] }, code });
    }
    const input = { session_id: "bench", transcript_path: "/t", cwd: "/tmp", hook_event_name: "BeforeTool", timestamp: "2026-11-26T00:00:00Z", tool_name: "run_shell_command", tool_input: { command: "npm test" } };
    fireOnce = () => runtime.fireProfile("gemini-cli", "BeforeTool", { input });
  }
  const hostPid = childPidsMatching(process.pid, "host-main.js").at(-1)!;
  // Warm-up: JIT, isolates of both workers.
  await Promise.all(Array.from({ length: CONCURRENCY }, () => fireOnce()));
  const syncs0 = AUDIT !== undefined ? await auditSyncs() : 0;
  const main0 = process.cpuUsage();
  const host0 = threadCpuUs(hostPid);
  const tids0 = threadCpuByTid(hostPid);
  let started = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (started < COUNT) {
        started++;
        await fireOnce();
      }
    }),
  );
  const ms = performance.now() - t0;
  const main1 = process.cpuUsage(main0);
  const host1 = threadCpuUs(hostPid);
  const tids1 = threadCpuByTid(hostPid);
  const delta = (name: string): number => (host1.get(name) ?? 0) - (host0.get(name) ?? 0);
  let hostAll = 0;
  for (const name of host1.keys()) hostAll += delta(name);
  const per = (us: number): string => (us / COUNT).toFixed(0);
  const mainUs = main1.user + main1.system;
  // Group-commit batches per chain: fewer, larger batches cost less CPU per chain (and wait longer).
  const batches = AUDIT !== undefined ? `, ${((AUDIT === "never" ? 0 : (await auditSyncs()) - syncs0) / COUNT).toFixed(2)} audit syncs per chain` : "";
  process.stdout.write(`${MODE}${MODE === "gemini-exec" ? ` (${EXEC_HOOKS} exec)` : ""}${AUDIT !== undefined ? `, audit fsync ${AUDIT} window ${process.env.AUDIT_GROUP_COMMIT_MS ?? 0} ms` : ""}, concurrency ${CONCURRENCY}: ${COUNT} chains of ${N} hooks in ${ms.toFixed(0)} ms: ${((COUNT / ms) * 1000).toFixed(0)} chains/s\n`);
  process.stdout.write(
    `CPU µs per chain: total ${per(mainUs + hostAll)} = main ${per(mainUs)} + host main thread ${per(delta("MainThread"))} + workers ${per(delta("WorkerThread"))} + other ${per(hostAll - delta("MainThread") - delta("WorkerThread"))}${batches}\n`,
  );
  // "other", by thread name (V8's platform workers, libuv's pool, isolated-vm's timer threads, …).
  const others = [...host1.keys()].filter((name) => name !== "MainThread" && name !== "WorkerThread" && delta(name) > 0).sort((a, b) => delta(b) - delta(a));
  process.stdout.write(`  other threads of the sandbox host: ${others.map((name) => `${name} ${per(delta(name))}`).join(", ") || "none"}\n`);
  // The two busiest WorkerThreads are piscina's workers; any other thread of that name was started by
  // one of them (isolated-vm's timer threads for the per-call timeout, its thread pool). Threads that
  // ended during the run are not seen.
  const named = [...tids1].filter(([, t]) => t.name === "WorkerThread").map(([tid, t]) => t.us - (tids0.get(tid)?.us ?? 0)).sort((a, b) => b - a);
  const spawned = named.slice(2);
  process.stdout.write(`  WorkerThread-named threads: ${named.length} (piscina workers ${per((named[0] ?? 0) + (named[1] ?? 0))}, threads they started ${spawned.length}: ${per(spawned.reduce((a, b) => a + b, 0))})\n`);
} finally {
  await runtime.close();
  rmSync(scratch, { recursive: true, force: true });
}
