/**
 * HTTP load bench (issues 6 and 15): a 5-hook `pre_inject` chain (5 bundles, 5 isolates, 2.4 KB input)
 * fired over HTTP at rising concurrency (1, 8, 32, 64) by wrk on loopback against
 * `node dist/src/cli/serve.js --config …` in its own process, as deployed.
 *
 *   node dist/bench/load.js [--seconds N (per step, default 10)] [--concurrency 1,8,32,64] [--repeat R]
 *                           [--baseline <other tree>/dist/src/cli/serve.js] [--out dir]
 *                           [--audit-fsync batch|always|never] [--baseline-audit-fsync batch|always|never]
 *                           [--audit-group-commit-ms N (this build's audit.group_commit_ms)]
 *
 * Reports requests/s, p50, p99 and error rate per step, and the CPU time per request of the server
 * process (main thread; other threads: libuv pool for the audit log's write and fsync, GC helpers) and
 * of the sandbox host (main thread; isolate workers) from /proc, and the throughput the CPU time allows
 * on this machine's cores (cores × 1 s ÷ CPU per request): on a loaded machine wall-clock figures are
 * pessimistic, CPU per request is not. Target (issue 15): ≥ 5,000 req/s with p99 ≤ 10 ms at
 * concurrency 32. `--repeat R` runs each step R times and reports medians. `--baseline` starts a second
 * server from another build (e.g. the previous commit, built in a scratch copy) and alternates the
 * steps between the two, baseline first, so before/after figures come from one run.
 * `VCP_LOAD_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR"` profiles the server process (of this build;
 * `node dist/bench/lib/cpu-profile-categories.js DIR/<file> <requests>` splits it per request);
 * the bench prints how many requests it served in all, to turn profile time into time per request.
 *
 * Each step is bounded by time (wrk -d) and the whole run by steps × seconds × repeats. Prints a
 * table, writes JSON to <out>/load-<timestamp>.json and load-latest.json. Needs `wrk` on PATH (Debian:
 * apt-get install wrk). Exits 0 even when the target is missed: it is a report.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type VcpArtifact } from "../src/index.js";
import { createArtifact, generateKeyPair, signArtifact } from "../src/tooling.js";
import { constitution, makeContext, preInjectEvent } from "./lib/fixtures.js";
import { bundleCode, checkAction } from "./lib/hooks.js";
import { childPidsMatching, threadCpuUs } from "./lib/proc.js";

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const SERVE = join(REPO_ROOT, "dist", "src", "cli", "serve.js");
const HOOKS = 5;

export interface BenchServer {
  url: string;
  pid: number;
  /** The sandbox host process (child of the server). */
  hostPid: number | undefined;
  path: string;
  body: string;
  clientToken: string;
  operatorToken: string;
  stop(): Promise<number | null>;
}

/** `audit.fsync` of the bench server's vcp.yaml (src/audit/writer.ts). */
export type AuditFsync = "batch" | "always" | "never";
const AUDIT_FSYNC_MODES: readonly AuditFsync[] = ["batch", "always", "never"];

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

/** Requests a bench server answers before the first wrk step: 5 bundle installs, the session, the check. */
export const SETUP_REQUESTS = HOOKS + 2;

/**
 * Start the server process with a config, install the 5 signed bundles, open the session.
 * `serve`: the server entry to run (default this build's dist/src/cli/serve.js).
 */
export async function startBenchServer(options: { threads?: number; serve?: string; nodeArgs?: readonly string[]; auditFsync?: AuditFsync; auditGroupCommitMs?: number } = {}): Promise<BenchServer> {
  const dir = mkdtempSync(join(tmpdir(), "vcp-load-"));
  const key = generateKeyPair();
  const operatorToken = `op-${sha256(String(Math.random())).slice(0, 24)}`;
  const clientToken = `cl-${sha256(String(Math.random())).slice(0, 24)}`;
  writeFileSync(join(dir, "bench.pub.pem"), key.publicKeyPem);
  writeFileSync(
    join(dir, "vcp.yaml"),
    [
      "listen: { host: 127.0.0.1, port: 0 }",
      "data_dir: ./data",
      "auth:",
      `  - { id: ops, role: operator, token_sha256: "${sha256(operatorToken)}" }`,
      `  - { id: bench, role: client, token_sha256: "${sha256(clientToken)}" }`,
      "keyring: { keys: [ { key_id: bench, public_key_file: bench.pub.pem, max_trust: deployment } ] }",
      `pool: { threads: ${options.threads ?? 2} }`,
      // Omitted: the default (batch). `never` and `always` split the p99 into fsync wait and CPU queueing.
      ...(options.auditFsync !== undefined || options.auditGroupCommitMs !== undefined
        ? [`audit: { ${[options.auditFsync !== undefined ? `fsync: ${options.auditFsync}` : "", options.auditGroupCommitMs !== undefined ? `group_commit_ms: ${options.auditGroupCommitMs}` : ""].filter((f) => f !== "").join(", ")} }`]
        : []),
    ].join("\n"),
  );
  // VCP_LOAD_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the server process.
  const nodeArgs = options.nodeArgs ?? (process.env.VCP_LOAD_NODE_ARGS ?? "").split(" ").filter((a) => a.length > 0);
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, options.serve ?? SERVE, "--config", "vcp.yaml", "--log-level", "warn"], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  const started = Date.now();
  let url: string | undefined;
  while (url === undefined) {
    url = /serving at (http:\/\/[^\s"]+)/.exec(out)?.[1];
    if (child.exitCode !== null || Date.now() - started > 30_000) throw new Error(`server did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  const request = async (method: string, path: string, token: string, body?: unknown) => {
    const res = await fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    return { status: res.status, body: (await res.json().catch(() => null)) as any };
  };
  for (let i = 0; i < HOOKS; i++) {
    const name = `load-${i}`;
    const artifact = signArtifact(
      createArtifact({ bundle: name, version: "1.0.0", trust: "deployment", hooks: [{ name: `check_${i}`, type: "pre_inject", action: "check", priority: 90 - i * 10, timeout_ms: 1000 }] }, bundleCode({ check: checkAction })) as VcpArtifact,
      key.privateKeyPem,
      "bench",
    );
    const r = await request("PUT", `/v1/bundles/${name}`, operatorToken, artifact);
    if (r.status !== 201) throw new Error(`install ${name}: ${r.status} ${JSON.stringify(r.body)}`);
  }
  const context = makeContext(42, 2048);
  const session = "load-session";
  const open = await request("POST", "/v1/sessions", clientToken, { session_id: session, context, constitution });
  // With session state in the runtime the event alone is sent; otherwise the full input.
  const payload = open.status === 201 ? { context, event: preInjectEvent } : { context, constitution, event: preInjectEvent };
  const path = `/v1/sessions/${session}/chains/pre_inject`;
  const check = await request("POST", path, clientToken, payload);
  if (check.status !== 200 || check.body.hook_results?.length !== HOOKS || check.body.hook_results.some((h: any) => h.outcome !== "ok")) {
    throw new Error(`the chain does not run ${HOOKS} hooks ok: ${check.status} ${JSON.stringify(check.body).slice(0, 500)}`);
  }
  const hostPid = childPidsMatching(child.pid!, "host-main")[0];
  return {
    url,
    pid: child.pid!,
    hostPid,
    path,
    body: JSON.stringify(payload),
    clientToken,
    operatorToken,
    async stop() {
      child.kill("SIGTERM");
      const code = await exited;
      rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
}

export interface WrkResult {
  concurrency: number;
  seconds: number;
  requests: number;
  requests_per_s: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  max_ms: number;
  errors: number;
  error_rate: number;
  errors_by_kind: Record<string, number>;
  /** CPU time per request (user + system, 10 ms resolution) of the server process and the sandbox host: robust to a noisy machine. */
  cpu_us_per_request?: CpuPerRequest;
  /** cores × 1 s ÷ (server + sandbox host CPU per request): the throughput the CPU allows with the client elsewhere. */
  cpu_bound_requests_per_s?: number;
  /** The audit log's fdatasyncs during the step, from the server's own histogram (measureStep). */
  audit_fsync?: AuditFsyncStep;
}

/**
 * The group commit's fdatasyncs during one step (`vcp_audit_fsync_duration_seconds`, scraped before
 * and after): how many per request, their mean, and the histogram bucket holding their p50 and p99
 * (an upper bound: the bucket's `le`). A request's p99 cannot be below the wait for the fsync of its
 * batch, so this separates the disk's share of the latency from CPU queueing.
 */
export interface AuditFsyncStep {
  fsyncs: number;
  per_request: number;
  mean_ms: number;
  p50_le_ms: number;
  p99_le_ms: number;
}

interface FsyncHistogram {
  count: number;
  sum: number;
  /** Cumulative counts by upper bound (seconds), ascending; +Inf last. */
  buckets: Array<[number, number]>;
}

const FSYNC_METRIC = "vcp_audit_fsync_duration_seconds";

/** The server's audit fsync histogram (GET /metrics as the operator). */
async function fsyncHistogram(server: BenchServer): Promise<FsyncHistogram> {
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${server.operatorToken}` } });
  const text = await res.text();
  const value = (line: string) => Number(line.slice(line.lastIndexOf(" ") + 1));
  const buckets: Array<[number, number]> = [];
  let count = 0;
  let sum = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith(`${FSYNC_METRIC}_bucket{`)) {
      const le = /le="([^"]+)"/.exec(line)?.[1];
      if (le !== undefined) buckets.push([le === "+Inf" ? Number.POSITIVE_INFINITY : Number(le), value(line)]);
    } else if (line.startsWith(`${FSYNC_METRIC}_count`)) count = value(line);
    else if (line.startsWith(`${FSYNC_METRIC}_sum`)) sum = value(line);
  }
  buckets.sort((a, b) => a[0] - b[0]);
  return { count, sum, buckets };
}

function fsyncStep(a: FsyncHistogram, b: FsyncHistogram, requests: number): AuditFsyncStep {
  const fsyncs = b.count - a.count;
  const quantile = (q: number): number => {
    if (fsyncs <= 0) return 0;
    for (const [le, cumulative] of b.buckets) {
      const before = a.buckets.find(([l]) => l === le)?.[1] ?? 0;
      if (cumulative - before >= q * fsyncs) return le * 1000;
    }
    return Number.POSITIVE_INFINITY;
  };
  return {
    fsyncs,
    per_request: fsyncs / Math.max(1, requests),
    mean_ms: fsyncs > 0 ? ((b.sum - a.sum) / fsyncs) * 1000 : 0,
    p50_le_ms: quantile(0.5),
    p99_le_ms: quantile(0.99),
  };
}

/** Requests each measured step adds to the server's count besides wrk's: the two /metrics scrapes. */
const SCRAPES_PER_STEP = 2;

/** {@link runWrk} with the audit fsyncs of the step (two /metrics scrapes around it). */
export async function measureStep(server: BenchServer, concurrency: number, seconds: number): Promise<WrkResult> {
  const before = await fsyncHistogram(server);
  const result = runWrk(server, concurrency, seconds);
  const after = await fsyncHistogram(server);
  return { ...result, audit_fsync: fsyncStep(before, after, result.requests) };
}

/** CPU µs per request by process and thread group; `server` and `sandbox_host` are the totals. */
export interface CpuPerRequest {
  server: number;
  server_main: number;
  /** libuv pool (the audit log's write and fdatasync), V8 GC and compiler helpers. */
  server_other: number;
  sandbox_host: number;
  host_main: number;
  host_workers: number;
  host_other: number;
  /** wrk itself (the load generator shares the cores on loopback; not part of the server's cost). */
  client: number;
}

interface CpuSnapshot {
  server: Map<string, number>;
  host: Map<string, number>;
  children: number;
}

const sum = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0);

/** CPU µs of waited-for children of this process (cutime + cstime of /proc/self/stat): wrk, once spawnSync returns. */
function childrenCpuUs(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // cutime and cstime are fields 16 and 17 of stat, i.e. 13 and 14 after the command.
  return ((Number(fields[13]) + Number(fields[14])) / 100) * 1e6;
}

function snapshot(server: BenchServer): CpuSnapshot {
  return { server: threadCpuUs(server.pid), host: server.hostPid === undefined ? new Map() : threadCpuUs(server.hostPid), children: childrenCpuUs() };
}

function perRequest(a: CpuSnapshot, b: CpuSnapshot, requests: number): CpuPerRequest {
  const n = Math.max(1, requests);
  const d = (x: Map<string, number>, y: Map<string, number>, name?: string) => (name === undefined ? sum(y) - sum(x) : (y.get(name) ?? 0) - (x.get(name) ?? 0)) / n;
  const server = d(a.server, b.server);
  const serverMain = d(a.server, b.server, "MainThread");
  const host = d(a.host, b.host);
  const hostMain = d(a.host, b.host, "MainThread");
  const hostWorkers = d(a.host, b.host, "WorkerThread");
  return {
    server,
    server_main: serverMain,
    server_other: server - serverMain,
    sandbox_host: host,
    host_main: hostMain,
    host_workers: hostWorkers,
    host_other: host - hostMain - hostWorkers,
    client: (b.children - a.children) / n,
  };
}

/** Run wrk once against the chain route; wrk's Lua `done` prints one JSON line we parse. */
export function runWrk(server: BenchServer, concurrency: number, seconds: number): WrkResult {
  const dir = mkdtempSync(join(tmpdir(), "vcp-wrk-"));
  const script = join(dir, "chain.lua");
  writeFileSync(
    script,
    `wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer ${server.clientToken}"
wrk.body = [==[${server.body}]==]
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRKJSON {"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50":%d,"p90":%d,"p99":%d,"max":%d}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
`,
  );
  const cpu0 = snapshot(server);
  const result = spawnSync("wrk", ["-t1", `-c${concurrency}`, `-d${seconds}s`, "--timeout", "5s", "-s", script, `${server.url}${server.path}`], { encoding: "utf8", timeout: (seconds + 30) * 1000 });
  const cpu1 = snapshot(server);
  rmSync(dir, { recursive: true, force: true });
  if (result.error) throw result.error;
  const line = /WRKJSON (\{.*\})/.exec(result.stdout)?.[1];
  if (line === undefined) throw new Error(`wrk printed no summary:\n${result.stdout}\n${result.stderr}`);
  const s = JSON.parse(line) as Record<string, number>;
  const errorsByKind = { connect: s.connect!, read: s.read!, write: s.write!, non_2xx: s.status!, timeout: s.timeout! };
  const errors = Object.values(errorsByKind).reduce((a, b) => a + b, 0);
  const cpu = perRequest(cpu0, cpu1, s.requests!);
  return {
    concurrency,
    seconds,
    requests: s.requests!,
    requests_per_s: s.requests! / (s.duration_us! / 1e6),
    p50_ms: s.p50! / 1000,
    p90_ms: s.p90! / 1000,
    p99_ms: s.p99! / 1000,
    max_ms: s.max! / 1000,
    errors,
    error_rate: s.requests! > 0 ? errors / s.requests! : 0,
    errors_by_kind: errorsByKind,
    cpu_us_per_request: cpu,
    cpu_bound_requests_per_s: (cpus().length * 1e6) / (cpu.server + cpu.sandbox_host),
  };
}

function wrkVersion(): string | null {
  const r = spawnSync("wrk", ["-v"], { encoding: "utf8" });
  if (r.error) return null;
  return (r.stdout + r.stderr).split("\n")[0]?.trim() ?? "wrk";
}

/** The median of each numeric field of a step's results (R repeats of one step). */
function medianStep(runs: readonly WrkResult[]): WrkResult {
  const median = (xs: number[]): number => {
    const sorted = [...xs].sort((a, b) => a - b);
    const m = sorted.length >> 1;
    return sorted.length % 2 === 1 ? sorted[m]! : (sorted[m - 1]! + sorted[m]!) / 2;
  };
  const first = runs[0]!;
  const pick = (f: (r: WrkResult) => number) => median(runs.map(f));
  const cpuKeys = Object.keys(first.cpu_us_per_request!) as Array<keyof CpuPerRequest>;
  return {
    ...first,
    requests: runs.reduce((a, r) => a + r.requests, 0),
    requests_per_s: pick((r) => r.requests_per_s),
    p50_ms: pick((r) => r.p50_ms),
    p90_ms: pick((r) => r.p90_ms),
    p99_ms: pick((r) => r.p99_ms),
    max_ms: pick((r) => r.max_ms),
    errors: runs.reduce((a, r) => a + r.errors, 0),
    error_rate: runs.reduce((a, r) => a + r.errors, 0) / Math.max(1, runs.reduce((a, r) => a + r.requests, 0)),
    cpu_us_per_request: Object.fromEntries(cpuKeys.map((k) => [k, pick((r) => r.cpu_us_per_request![k])])) as unknown as CpuPerRequest,
    cpu_bound_requests_per_s: pick((r) => r.cpu_bound_requests_per_s!),
    ...(first.audit_fsync !== undefined
      ? {
          audit_fsync: {
            fsyncs: runs.reduce((a, r) => a + (r.audit_fsync?.fsyncs ?? 0), 0),
            per_request: pick((r) => r.audit_fsync?.per_request ?? 0),
            mean_ms: pick((r) => r.audit_fsync?.mean_ms ?? 0),
            p50_le_ms: pick((r) => r.audit_fsync?.p50_le_ms ?? 0),
            p99_le_ms: pick((r) => r.audit_fsync?.p99_le_ms ?? 0),
          },
        }
      : {}),
  };
}

function describeStep(label: string, r: WrkResult): string {
  const c = r.cpu_us_per_request!;
  const f = r.audit_fsync;
  return (
    `${label}c=${String(r.concurrency).padStart(3)}  ${r.requests_per_s.toFixed(0).padStart(6)} req/s  p50 ${r.p50_ms.toFixed(2).padStart(6)} ms  p99 ${r.p99_ms.toFixed(2).padStart(6)} ms  errors ${r.errors}` +
    `  CPU µs/req: server ${c.server.toFixed(0)} (main ${c.server_main.toFixed(0)} + other ${c.server_other.toFixed(0)})` +
    ` + host ${c.sandbox_host.toFixed(0)} (main ${c.host_main.toFixed(0)} + workers ${c.host_workers.toFixed(0)} + other ${c.host_other.toFixed(0)})` +
    ` = ${(c.server + c.sandbox_host).toFixed(0)} → CPU-bound ceiling ${r.cpu_bound_requests_per_s!.toFixed(0)} req/s on ${cpus().length} cores; wrk ${c.client.toFixed(0)}` +
    (f === undefined || f.fsyncs === 0 ? "" : `; audit fsync ${f.per_request.toFixed(2)}/req, mean ${f.mean_ms.toFixed(2)} ms, p50 ≤ ${f.p50_le_ms} ms, p99 ≤ ${f.p99_le_ms} ms`)
  );
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const arg = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const seconds = Number(arg("--seconds") ?? 10);
  const levels = (arg("--concurrency") ?? "1,8,32,64").split(",").map(Number);
  const outDir = resolve(arg("--out") ?? join(REPO_ROOT, "bench", "reports"));
  const wrk = wrkVersion();
  if (wrk === null) {
    console.error("bench/load: wrk is not on PATH (Debian: apt-get install -y wrk)");
    process.exitCode = 1;
    return;
  }
  const repeat = Math.max(1, Number(arg("--repeat") ?? 1));
  const baselineServe = arg("--baseline");
  const fsyncArg = (name: string): AuditFsync | undefined => {
    const value = arg(name);
    if (value !== undefined && !AUDIT_FSYNC_MODES.includes(value as AuditFsync)) throw new Error(`${name} must be one of ${AUDIT_FSYNC_MODES.join(", ")}, got '${value}'`);
    return value as AuditFsync | undefined;
  };
  // Each server's audit.fsync (default: the config default, batch): e.g. `--baseline <this build's
  // serve.js> --audit-fsync never` measures what the fsync wait adds to p99 in one run.
  const auditFsync = fsyncArg("--audit-fsync");
  const baselineAuditFsync = fsyncArg("--baseline-audit-fsync");
  // This build's audit.group_commit_ms (a baseline older than the setting would refuse the key).
  const groupCommitArg = arg("--audit-group-commit-ms");
  const auditGroupCommitMs = groupCommitArg === undefined ? undefined : Number(groupCommitArg);
  if (auditGroupCommitMs !== undefined && !(auditGroupCommitMs >= 0 && auditGroupCommitMs <= 100)) throw new Error(`--audit-group-commit-ms must be a number from 0 to 100, got '${groupCommitArg}'`);
  const startedAt = new Date();
  const load = (await import("node:os")).loadavg()[0]!;
  if (load > cpus().length) console.log(`note: load average ${load.toFixed(1)} on ${cpus().length} CPUs before the run: other work competes for the CPU, latencies are pessimistic`);
  // The baseline is never profiled: VCP_LOAD_NODE_ARGS applies to this build's server only.
  const baseline = baselineServe === undefined ? undefined : await startBenchServer({ serve: resolve(baselineServe), nodeArgs: [], ...(baselineAuditFsync !== undefined ? { auditFsync: baselineAuditFsync } : {}) });
  const server = await startBenchServer({ ...(auditFsync !== undefined ? { auditFsync } : {}), ...(auditGroupCommitMs !== undefined ? { auditGroupCommitMs } : {}) });
  const steps: WrkResult[] = [];
  const baselineSteps: WrkResult[] = [];
  let served = SETUP_REQUESTS;
  try {
    // warm-up: JIT, isolates, connection setup
    if (baseline !== undefined) runWrk(baseline, 8, 2);
    served += runWrk(server, 8, 2).requests;
    for (const c of levels) {
      const runs: WrkResult[] = [];
      const baseRuns: WrkResult[] = [];
      for (let i = 0; i < repeat; i++) {
        if (baseline !== undefined) {
          const b = await measureStep(baseline, c, seconds);
          baseRuns.push(b);
          console.log(describeStep("  baseline ", b));
        }
        const r = await measureStep(server, c, seconds);
        served += r.requests + SCRAPES_PER_STEP;
        runs.push(r);
        console.log(describeStep(baseline !== undefined ? "  this     " : repeat > 1 ? "  " : "", r));
      }
      if (repeat > 1 || baseline !== undefined) {
        if (baseline !== undefined) {
          baselineSteps.push(medianStep(baseRuns));
          console.log(describeStep(`median of ${repeat}, baseline: `, baselineSteps.at(-1)!));
        }
        steps.push(medianStep(runs));
        console.log(describeStep(`median of ${repeat}${baseline !== undefined ? ", this:     " : ": "}`, steps.at(-1)!));
      } else steps.push(runs[0]!);
    }
  } finally {
    await server.stop();
    await baseline?.stop();
  }
  console.log(`this build's server answered ${served} requests in all (setup ${SETUP_REQUESTS}, warm-up and steps): divide its profile's time by this`);
  const at32 = steps.find((s) => s.concurrency === 32);
  const target = { concurrency: 32, min_requests_per_s: 5000, max_p99_ms: 10, met: at32 !== undefined && at32.requests_per_s >= 5000 && at32.p99_ms <= 10 && at32.errors === 0 };
  console.log(`target (c=32: ≥5000 req/s, p99 ≤ 10 ms, no errors): ${target.met ? "met" : "MISSED"}`);
  const report = {
    bench: "load",
    started_at: startedAt.toISOString(),
    environment: { load_average_before: load, node: process.version, cpus: cpus().length, cpu_model: cpus()[0]?.model ?? "", wrk },
    config: { hooks: HOOKS, bundles: HOOKS, type: "pre_inject", body_bytes: server.body.length, seconds_per_step: seconds, repeat, threads: 2, client: "wrk -t1 on loopback", baseline: baselineServe ?? null, audit_fsync: auditFsync ?? "batch", audit_group_commit_ms: auditGroupCommitMs ?? 0, baseline_audit_fsync: baselineServe === undefined ? null : (baselineAuditFsync ?? "batch") },
    steps,
    ...(baseline !== undefined ? { baseline_steps: baselineSteps } : {}),
    requests_served: served,
    target,
  };
  mkdirSync(outDir, { recursive: true });
  const stamp = startedAt.toISOString().replace(/[:.]/g, "-");
  writeFileSync(join(outDir, `load-${stamp}.json`), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(outDir, "load-latest.json"), `${JSON.stringify(report, null, 2)}\n`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  await main();
}
