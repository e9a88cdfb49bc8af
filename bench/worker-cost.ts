/**
 * What one chain costs inside a sandbox worker (issue 15), in one thread, with the worker's real
 * pieces: the IsolateHost (src/sandbox-host/), the VCP executor (src/chain/execute.ts) with the
 * worker's ChainDeps (integrity checker, event packer), the crash-attribution slot writer
 * (src/pool/slots.ts), packChainValue and the reply JSON. The chain is profile-chain.ts's: 5 hooks,
 * the first one modifying the context, the 2.6 KB HookInput of the perf bench.
 *
 * Each row is CPU time per chain (or per piece), best of three rounds; "thread" is this thread's CPU
 * (process.threadCpuUsage) and "other" what the process's other threads spent meanwhile (isolated-vm's
 * timer threads, V8's platform threads). CPU time holds up on a busy machine; compare rows of one run.
 * A round lasts well under isolated-vm's 1 s timer expiry, so the timer thread's share shows only in
 * the "paced" rows, which pace timed calls as a worker makes them and wait for every expiry. The last
 * two rows are a thread hand-off (one postMessage) to a thread that is awake and to one that sleeps:
 * the price of each crossing a chain makes between the runtime, the host's main thread and a worker.
 *
 *   node --no-node-snapshot dist/bench/worker-cost.js [chains-per-round]
 *   WHOLE=1 node --no-node-snapshot --cpu-prof --cpu-prof-dir=/tmp/prof dist/bench/worker-cost.js
 *   node dist/bench/lib/cpu-profile-top.js /tmp/prof
 *
 * (`WHOLE=1`: only the whole-task row, so the profile is the worker's hot path alone.)
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import ivm from "isolated-vm";
import { capAuditDiff, diffForAudit } from "../src/audit/diff.js";
import { runChain, type ChainDeps } from "../src/chain/execute.js";
import { compileChainPlan } from "../src/chain/plan.js";
import { parseHookResult } from "../src/model/result-json.js";
import type { ActionInvoker, ChainRequest, InvokeOutcome, InvokeRequest } from "../src/model/chain.js";
import { createIntegrityChecker } from "../src/integrity/check.js";
import type { ResolvedHook } from "../src/model/hook.js";
import { systemClock } from "../src/observe/events.js";
import { EventPacker, packChainValue } from "../src/pool/events.js";
import { SlotWriter, currentTid, monotonicMs } from "../src/pool/slots.js";
import { createIsolateHost, DEFAULT_SANDBOX_LIMITS } from "../src/sandbox-host/index.js";
import type { BundleCode } from "../src/sandbox-host/types.js";
import { constitution, makeContext, preInjectEvent, SESSION } from "./lib/fixtures.js";
import { bundleCode, chainActions } from "./lib/hooks.js";

const CHAINS = Number(process.argv[2] ?? 4000);
const N = 5;

interface Cost {
  thread: number;
  other: number;
}

/** CPU µs per call of `fn` (this thread, other threads), best of three rounds of `n` calls. */
async function cpuPerCall(n: number, fn: () => unknown): Promise<Cost> {
  for (let i = 0; i < Math.min(n, 2000); i++) await fn();
  let best: Cost = { thread: Number.POSITIVE_INFINITY, other: 0 };
  for (let r = 0; r < 3; r++) {
    const p0 = process.cpuUsage();
    const t0 = process.threadCpuUsage();
    for (let i = 0; i < n; i++) await fn();
    const t = process.threadCpuUsage(t0);
    const p = process.cpuUsage(p0);
    const thread = (t.user + t.system) / n;
    const other = Math.max(0, (p.user + p.system) / n - thread);
    if (thread + other < best.thread + best.other) best = { thread, other };
  }
  return best;
}

function row(label: string, cost: Cost, note = ""): void {
  const total = cost.thread + cost.other;
  process.stdout.write(
    `${label.padEnd(58)} ${total.toFixed(2).padStart(8)} µs  (thread ${cost.thread.toFixed(2).padStart(7)}, other ${cost.other.toFixed(2).padStart(6)})${note}\n`,
  );
}

// ── the worker's pieces, as src/pool/worker.ts assembles them ────────────────────────────────────
const scratch = mkdtempSync(join(tmpdir(), "vcp-worker-cost-"));
const slot = new SlotWriter(scratch, 1, 1);
const tid = currentTid();
const host = createIsolateHost({ limits: DEFAULT_SANDBOX_LIMITS, fetch: { allowHosts: [], denyLlmHosts: [] }, onLog: () => undefined });
const actions = chainActions(N, "modify");
const bundles: BundleCode[] = actions.map((action, i) => ({
  name: `prof-${i}`,
  digest: `sha256:${(i + 1).toString(16).padStart(64, "0")}`,
  code: bundleCode({ run: action }),
  trust: "deployment",
}));
for (const b of bundles) await host.load(b);
const hooks: ResolvedHook[] = bundles.map((b, i) => ({
  name: `h-${i}`,
  type: "pre_inject",
  priority: 100 - i,
  timeout_ms: 1000,
  action: { bundle: b.name, export: "run", digest: b.digest },
  condition: null,
  enabled: true,
  metadata: {},
  fail_closed: false,
  trust: "deployment",
  scope: "deployment",
  seq: i + 1,
}));
const plan = compileChainPlan("pre_inject", hooks, 1);
const positions = new Map(hooks.map((hook, i) => [hook, i]));
let taskId = 0;

/** The worker's invoker (worker.ts): slot record, then the isolate. */
const invoker: ActionInvoker = {
  async invoke(request: InvokeRequest): Promise<InvokeOutcome> {
    slot.enter(taskId, positions.get(request.hook) ?? -1, request.hook.name, monotonicMs(), Math.ceil(request.budgetMs), tid);
    return host.invoke(request);
  },
};
const packer = new EventPacker();
const deps: ChainDeps = {
  invoker,
  clock: systemClock,
  emit: packer.emit,
  checkConstitution: createIntegrityChecker({ safetyCriticalRuleIds: [] }),
  limits: { jsonDepth: DEFAULT_SANDBOX_LIMITS.jsonDepth, annotationBytesPerHook: DEFAULT_SANDBOX_LIMITS.annotationBytesPerHook, annotationBytesPerChain: DEFAULT_SANDBOX_LIMITS.annotationBytesPerChain },
};
const request: ChainRequest = { chainId: "c-1", context: makeContext(), constitution, event: preInjectEvent, session: SESSION };
const requestText = JSON.stringify(request);

/** One whole worker task minus piscina: parse, slot "C", runChain, pack, slot "C", reply JSON. */
async function workerChain(): Promise<string> {
  taskId++;
  packer.reset();
  slot.chainCode(taskId);
  try {
    const rq = JSON.parse(requestText) as ChainRequest;
    const result = await runChain(plan, rq, deps);
    return JSON.stringify({ ok: true, value: packChainValue(result, rq, packer, hooks) });
  } finally {
    slot.chainCode(taskId);
  }
}

process.stdout.write(`worker cost of a ${N}-hook modify chain (2.6 KB input), ${CHAINS} chains per round, best of 3, CPU µs\n`);
const whole = await cpuPerCall(CHAINS, workerChain);
row("whole worker task (parse → runChain → pack → reply JSON)", whole);
// WHOLE=1: only the whole task (for --cpu-prof: the profile is then the worker's hot path alone).
if (process.env.WHOLE === "1") {
  host.dispose();
  slot.close();
  rmSync(scratch, { recursive: true, force: true });
  process.exit(0);
}

// ── the pieces ────────────────────────────────────────────────────────────────────────────────
const rq = JSON.parse(requestText) as ChainRequest;
row("  request JSON.parse (task.rq)", await cpuPerCall(CHAINS * 5, () => JSON.parse(requestText)));

// What ChainInput builds: the HookInput text before hook 1, and again after hook 1's modify.
const fixed = `,"event":${JSON.stringify(rq.event)},"session":${JSON.stringify(rq.session)}`;
const modified = { ...rq.context, dimensions: { ...(rq.context as { dimensions: object }).dimensions, data_sensitivity: 0 }, redacted: true };
const inputBuild = (context: unknown): string => `{"context":${JSON.stringify(context)},"constitution":${JSON.stringify(rq.constitution)}${fixed},"chain_state":{}}`;
row("  HookInput text ×2 per chain (before hook 1, after its modify)", await cpuPerCall(CHAINS, () => inputBuild(modified) + inputBuild(rq.context)));
const inputJson = inputBuild(rq.context);

// The isolate calls, through the IsolateHost (prelude run(), guest JSON.parse, action, serialize, decode).
const hookReq = (i: number): InvokeRequest => ({ hook: hooks[i]!, chainId: "c", sessionId: "s", inputJson, budgetMs: 1000 });
const reqs = hooks.map((_, i) => hookReq(i));
row("  5 × IsolateHost.invoke (the chain's isolate calls)", await cpuPerCall(CHAINS, async () => {
  for (const r of reqs) await host.invoke(r);
}));
const results: InvokeOutcome[] = [];
for (const r of reqs) results.push(await host.invoke(r));
const resultTexts = results.map((o) => (o.kind === "returned" ? o.resultJson : ""));
row("  5 × parseHookResult (depth scan, parse, ajv)", await cpuPerCall(CHAINS, () => {
  for (const t of resultTexts) parseHookResult(t, 64);
}));
row("  7 × slot write (5 × I, 2 × C)", await cpuPerCall(CHAINS, () => {
  slot.chainCode(1);
  for (let i = 0; i < 5; i++) slot.enter(1, i, "h-0", monotonicMs(), 1000, tid);
  slot.chainCode(1);
}));
const finalResult = await runChain(plan, rq, { ...deps, emit: () => undefined });
row("  packChainValue + reply JSON.stringify", await cpuPerCall(CHAINS * 5, () => JSON.stringify({ ok: true, value: packChainValue(finalResult, rq, packer, hooks) })));
const proposed = { ...constitution, rules: [...constitution.rules] };
row("  integrity check of one modified constitution (not in this chain)", await cpuPerCall(CHAINS * 5, () => deps.checkConstitution!(constitution, proposed, hooks[0]!, [])));
row("  audit diff of hook 1's modify (only with auditDiffs)", await cpuPerCall(CHAINS, () => capAuditDiff(diffForAudit({ context: rq.context, constitution }, { context: modified, constitution }))));

// ── the isolate call itself, on a bare isolated-vm context ───────────────────────────────────────
// What isolated-vm charges for one call, and what the per-call `timeout` adds (a timer armed on
// isolated-vm's timer thread and disarmed after the call), apart from the prelude's own work.
const iso = new ivm.Isolate({ memoryLimit: 64 });
const ctx = iso.createContextSync();
const probe = ctx.evalClosureSync(
  `return { len: (s) => s.length, parse: (s) => { const v = JSON.parse(s); return JSON.stringify({ status: "continue", annotations: { n: v.context.recent_topics.length } }); }, echo: (s) => { const v = JSON.parse(s); return JSON.stringify({ status: "modify", modified_context: v.context }); } }`,
  [],
  { result: { reference: true } },
) as ivm.Reference<Record<string, unknown>>;
const len = probe.getSync("len", { reference: true }) as ivm.Reference<(s: string) => number>;
const parse = probe.getSync("parse", { reference: true }) as ivm.Reference<(s: string) => string>;
const echo = probe.getSync("echo", { reference: true }) as ivm.Reference<(s: string) => string>;
const calls = CHAINS * 5;
row("bare applySync(2.6 KB string → length), no timeout", await cpuPerCall(calls, () => len.applySync(undefined, [inputJson])));
row("bare applySync(2.6 KB string → length), { timeout: 1000 }", await cpuPerCall(calls, () => len.applySync(undefined, [inputJson], { timeout: 1000 })));
row("bare applySync(short string → length), no timeout", await cpuPerCall(calls, () => len.applySync(undefined, ["x"])));
row("bare applySync, guest JSON.parse + small JSON.stringify", await cpuPerCall(calls, () => parse.applySync(undefined, [inputJson])));
row("bare applySync, guest JSON.parse + stringify of the context", await cpuPerCall(calls, () => echo.applySync(undefined, [inputJson])));


// isolated-vm's timer thread in the production regime: calls spaced as a sandbox worker's are (≈ 10k
// timed calls/s across the host), for longer than the 1 s timeout, since the thread pays for each armed
// timer when it expires (it stays queued after its call returned) with one wake-up per expiry once they
// are sparser than the kernel's timer slack. "other" here is that thread.
async function paced(label: string, withTimeout: boolean): Promise<void> {
  const spacingMs = 0.1;
  const runMs = 3000;
  const p0 = process.cpuUsage();
  const t0 = process.threadCpuUsage();
  const start = performance.now();
  let n = 0;
  for (let next = start; performance.now() - start < runMs; n++) {
    len.applySync(undefined, ["x"], withTimeout ? { timeout: 1000 } : undefined);
    next += spacingMs;
    while (performance.now() < next) {
      // spin: this thread's time is not what this row is about
    }
  }
  // The timers armed in the last second expire after the loop: wait for them inside the window.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const t = process.threadCpuUsage(t0);
  const p = process.cpuUsage(p0);
  const other = Math.max(0, (p.user + p.system - (t.user + t.system)) / n);
  process.stdout.write(`${label.padEnd(58)} other threads ${other.toFixed(2).padStart(6)} µs per call (${n} calls, one per ${spacingMs * 1000} µs)\n`);
}
await paced("paced applySync, no timeout", false);
await paced("paced applySync, { timeout: 1000 } (isolated-vm timer thread)", true);
// The sandbox host widens its threads' timer slack to 1 ms (src/pool/host-main.ts TIMER_SLACK_NS): the
// kernel then wakes the timer thread once for the expiries of a whole millisecond. The timer thread
// above has ended with its last expiry; the next one is started by this thread and inherits its slack.
try {
  writeFileSync("/proc/self/timerslack_ns", "1000000");
  await paced("paced applySync, { timeout: 1000 }, 1 ms timer slack", true);
} catch {
  process.stdout.write("(no /proc/self/timerslack_ns: the timer-slack row is Linux only)\n");
}

// ── a thread hand-off ─────────────────────────────────────────────────────────────────────────────
// What one postMessage costs when the receiving thread is busy (a burst: it is still awake) and when it
// sleeps between messages (one every 300 µs, as a sandbox host's threads do at low load): waking a
// sleeping thread is charged to the sender, and the receiver pays for its own wake-up. A chain crosses
// at least four such hand-offs (runtime → host main thread → worker → host main thread → runtime),
// batched under load (batch.ts), so on a machine where a wake-up is dear they outweigh the chain code.
async function handOff(label: string, spacingMs: number): Promise<void> {
  const receiver = new Worker(
    `const { parentPort } = require("node:worker_threads");
     let n = 0;
     parentPort.on("message", (m) => {
       if (m === "report") { const c = process.threadCpuUsage(); parentPort.postMessage({ n, us: c.user + c.system }); return; }
       n++;
     });`,
    { eval: true },
  );
  await new Promise((resolve) => receiver.once("online", resolve));
  const reply = JSON.stringify({ ok: true, value: { result: { chain_id: "c", status: "completed", padding: "x".repeat(600) } } });
  const ask = (): Promise<{ n: number; us: number }> => new Promise((resolve) => { receiver.once("message", resolve); receiver.postMessage("report"); });
  const count = 4000;
  for (let i = 0; i < 500; i++) receiver.postMessage([reply]);
  const before = await ask();
  let sender = 0;
  for (let i = 0; i < count; i++) {
    if (spacingMs > 0) {
      const until = performance.now() + spacingMs;
      while (performance.now() < until) {
        // spin: the sender stays awake; only the receiver sleeps
      }
    }
    const t0 = process.threadCpuUsage();
    receiver.postMessage([reply]);
    const t = process.threadCpuUsage(t0);
    sender += t.user + t.system;
  }
  const after = await ask();
  await receiver.terminate();
  const received = after.n - before.n;
  process.stdout.write(`${label.padEnd(58)} sender ${(sender / count).toFixed(2).padStart(6)} µs, receiver ${((after.us - before.us) / Math.max(1, received)).toFixed(2).padStart(6)} µs per message\n`);
}
await handOff("postMessage to a busy thread (burst)", 0);
await handOff("postMessage to a sleeping thread (one per 300 µs)", 0.3);

iso.dispose();
host.dispose();
slot.close();
rmSync(scratch, { recursive: true, force: true });
