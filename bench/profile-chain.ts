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
 */
import { createRuntime, type FireInput } from "../src/index.js";
import { constitution, makeContext, preInjectEvent, SESSION } from "./lib/fixtures.js";
import { benchBundle, chainActions } from "./lib/hooks.js";
import { childPidsMatching, threadCpuUs } from "./lib/proc.js";

const COUNT = Number(process.argv[2] ?? 20_000);
const N = Number(process.argv[3] ?? 5);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 64);

const runtime = await createRuntime({ sandbox: { threads: 2 }, registrationsPerMinute: 100_000 });
try {
  const actions = chainActions(N, "modify");
  for (let i = 0; i < N; i++) {
    await runtime.bundles.install(benchBundle(`prof-${i}`, [{ name: `h-${i}`, type: "pre_inject", action: "run", priority: 100 - i }], { run: actions[i]! }));
  }
  const input: FireInput<"pre_inject"> = { context: makeContext(), constitution, event: preInjectEvent, session: SESSION };
  const hostPid = childPidsMatching(process.pid, "host-main.js").at(-1)!;
  // Warm-up: JIT, isolates of both workers.
  await Promise.all(Array.from({ length: CONCURRENCY }, () => runtime.fire("pre_inject", input)));
  const main0 = process.cpuUsage();
  const host0 = threadCpuUs(hostPid);
  let started = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (started < COUNT) {
        started++;
        await runtime.fire("pre_inject", input);
      }
    }),
  );
  const ms = performance.now() - t0;
  const main1 = process.cpuUsage(main0);
  const host1 = threadCpuUs(hostPid);
  const delta = (name: string): number => (host1.get(name) ?? 0) - (host0.get(name) ?? 0);
  let hostAll = 0;
  for (const name of host1.keys()) hostAll += delta(name);
  const per = (us: number): string => (us / COUNT).toFixed(0);
  const mainUs = main1.user + main1.system;
  process.stdout.write(`${COUNT} chains of ${N} hooks in ${ms.toFixed(0)} ms: ${((COUNT / ms) * 1000).toFixed(0)} chains/s\n`);
  process.stdout.write(
    `CPU µs per chain: total ${per(mainUs + hostAll)} = main ${per(mainUs)} + host main thread ${per(delta("MainThread"))} + workers ${per(delta("WorkerThread"))} + other ${per(hostAll - delta("MainThread") - delta("WorkerThread"))}\n`,
  );
} finally {
  await runtime.close();
}
