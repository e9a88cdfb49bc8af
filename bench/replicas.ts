/**
 * Scale-out bench (issue 18): what one replica gives with its state in Redis, against the same
 * replica with the local store, in one run.
 *
 *   node dist/bench/replicas.js [--seconds N (per step, default 8)] [--concurrency C (default 16)]
 *                               [--repeat R (default 2)] [--ops N (sequential operations per kind, default 200)]
 *                               [--out dir]
 *
 * 1. Chains/s per replica: `vcp-hooks serve` processes (2 sandbox threads each, one 5-hook pre_inject
 *    chain like bench/load.ts) driven by wrk on loopback: a chain fired on a session (POST
 *    /v1/sessions/{id}/chains/pre_inject) and a stateless event-profile fire (POST
 *    /v1/profiles/gemini-cli/events/BeforeTool), each with `store: local` and with `store: redis`. The
 *    steps alternate (local then redis, then redis then local, …) so both see the same machine; the figure that matters
 *    is the ratio redis ÷ local (medians of R repeats), in chains/s and — what a machine shared with
 *    other work does not distort — in CPU per chain (server + sandbox host, plus redis-server's own CPU
 *    for the redis steps, read from /proc).
 * 2. Redis round trips per operation, counted with `redis-cli monitor` against the replica's Redis:
 *    every command a client sent (lines from `[db lua]`, commands a script ran inside Redis, are not
 *    round trips and are not counted). N operations of each kind are run one after another; the
 *    replica's background traffic (heartbeat, bundle reconciliation, periodic due-set scan, approval
 *    sweep) is measured over an idle window first and its rate × the window's duration subtracted.
 *    The command names seen per operation kind are listed too.
 *
 * Needs `redis-server`, `redis-cli` and `wrk` on PATH (Debian: redis-server, redis-tools, wrk). Redis
 * runs with AOF `appendfsync always` (the deployment files' setting). Writes JSON to
 * <out>/replicas-<timestamp>.json and replicas-latest.json. Exits 0 whatever the figures: it is a report.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import type { VcpArtifact } from "../src/index.js";
import { createArtifact, generateKeyPair, signArtifact } from "../src/tooling.js";
import { runWrk, type BenchServer, type WrkResult } from "./load.js";
import { constitution, makeContext, preInjectEvent } from "./lib/fixtures.js";
import { bundleCode, checkAction } from "./lib/hooks.js";
import { childPidsMatching, threadCpuUs } from "./lib/proc.js";

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const SERVE = join(REPO_ROOT, "dist", "src", "cli", "serve.js");
const HOOKS = 5;
const sha256 = (s: string): string => createHash("sha256").update(s).digest("hex");

async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

async function waitUntil(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A redis-server of our own: loopback, a free port, AOF with appendfsync always, in a temp dir. */
async function startRedis(): Promise<{ url: string; port: number; pid: number; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "vcp-bench-redis-"));
  const port = await freePort();
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--appendonly", "yes", "--appendfsync", "always", "--save", ""], { stdio: "ignore" });
  await waitUntil("redis-server", () => spawnSync("redis-cli", ["-p", String(port), "ping"], { encoding: "utf8" }).stdout.trim() === "PONG", 20_000);
  return {
    url: `redis://127.0.0.1:${port}/0`,
    port,
    pid: child.pid!,
    async stop() {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface Replica extends BenchServer {
  request(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: any }>;
  install(version: string, index?: number): Promise<void>;
}

/** One `vcp-hooks serve` with the 5 signed bundles installed, as deployed; `store` local or redis. */
async function startReplica(name: string, store: { kind: "local" } | { kind: "redis"; url: string; prefix: string }): Promise<Replica> {
  const dir = mkdtempSync(join(tmpdir(), `vcp-bench-${name}-`));
  const key = generateKeyPair();
  const operatorToken = `op-${sha256(`${name}${Math.random()}`).slice(0, 40)}`;
  const clientToken = `cl-${sha256(`${name}${Math.random()}`).slice(0, 40)}`;
  writeFileSync(join(dir, "bench.pub.pem"), key.publicKeyPem);
  const storeYaml = store.kind === "local" ? "store: { kind: local }" : `store: { kind: redis, url: "${store.url}", prefix: ${store.prefix}, heartbeat_ms: 1000, reconcile_ms: 5000 }`;
  writeFileSync(
    join(dir, "vcp.yaml"),
    [
      "listen: { host: 127.0.0.1, port: 0 }",
      "data_dir: ./data",
      "auth:",
      `  - { id: ops, role: operator, token_sha256: "${sha256(operatorToken)}" }`,
      `  - { id: bench, role: client, token_sha256: "${sha256(clientToken)}" }`,
      "keyring: { keys: [ { key_id: bench, public_key_file: bench.pub.pem, max_trust: deployment } ] }",
      "pool: { threads: 2 }",
      // Rate limits out of the way: the bench measures chains, not the limiter.
      "limits: { registrations_per_minute: 100000, sessions_per_client: 1000000 }",
      storeYaml,
    ].join("\n"),
  );
  const child: ChildProcess = spawn(process.execPath, ["--no-node-snapshot", SERVE, "--config", "vcp.yaml", "--log-level", "warn"], { cwd: dir, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, VCP_REPLICA_ID: name } });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  let url: string | undefined;
  await waitUntil(`${name} to serve`, () => {
    if (child.exitCode !== null) throw new Error(`${name} exited:\n${out}`);
    url = /serving at (http:\/\/[^\s"]+)/.exec(out)?.[1];
    return url !== undefined;
  }, 60_000);
  const request = async (method: string, path: string, body?: unknown, token = clientToken) => {
    const res = await fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    return { status: res.status, body: (await res.json().catch(() => null)) as any };
  };
  const install = async (version: string, index = 0): Promise<void> => {
    const bundle = `bench-${index}`;
    const artifact = signArtifact(
      createArtifact({ bundle, version, trust: "deployment", hooks: [{ name: `check_${index}`, type: "pre_inject", action: "check", priority: 90 - index * 10, timeout_ms: 1000 }] }, bundleCode({ check: checkAction })) as VcpArtifact,
      key.privateKeyPem,
      "bench",
    );
    const r = await request("PUT", `/v1/bundles/${bundle}`, artifact, operatorToken);
    if (r.status !== 201 && r.status !== 200) throw new Error(`install ${bundle}@${version} on ${name}: ${r.status} ${JSON.stringify(r.body)}`);
  };
  for (let i = 0; i < HOOKS; i++) await install("1.0.0", i);
  const session = `${name}-load`;
  const context = makeContext(42, 2048);
  const open = await request("POST", "/v1/sessions", { session_id: session, context, constitution });
  if (open.status !== 201) throw new Error(`open session on ${name}: ${open.status} ${JSON.stringify(open.body)}`);
  const path = `/v1/sessions/${session}/chains/pre_inject`;
  const payload = { context, event: preInjectEvent };
  const check = await request("POST", path, payload);
  if (check.status !== 200 || check.body.hook_results?.length !== HOOKS) throw new Error(`${name}: the chain does not run ${HOOKS} hooks: ${check.status} ${JSON.stringify(check.body).slice(0, 400)}`);
  return {
    url: url!,
    pid: child.pid!,
    hostPid: childPidsMatching(child.pid!, "host-main")[0],
    path,
    body: JSON.stringify(payload),
    clientToken,
    operatorToken,
    request,
    install,
    async stop() {
      child.kill("SIGTERM");
      const code = await exited;
      rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
}

/**
 * An event-profile fire: no pipeline session, nothing shared but the client's implicit-session count
 * (one script the first time a replica sees a session id, then one per min(ttl/4, 5 s) while in use).
 */
const PROFILE_PATH = "/v1/profiles/gemini-cli/events/BeforeTool";
function profileEvent(session: string): Record<string, unknown> {
  return { session_id: session, transcript_path: "/t", cwd: "/home/dev/app", hook_event_name: "BeforeTool", timestamp: "2026-11-26T06:00:00Z", tool_name: "run_shell_command", tool_input: { command: "ls -la" } };
}

// ── round trips: redis-cli monitor ─────────────────────────────────────────────────────────────

interface Monitor {
  /** Client-sent commands seen so far (not `[n lua]` lines), with their names. */
  seen(): string[];
  stop(): Promise<void>;
}

async function startMonitor(port: number): Promise<Monitor> {
  const child = spawn("redis-cli", ["-p", String(port), "monitor"], { stdio: ["ignore", "pipe", "ignore"] });
  const commands: string[] = [];
  let rest = "";
  let ok = false;
  child.stdout.on("data", (d: Buffer) => {
    rest += d.toString("utf8");
    let nl: number;
    while ((nl = rest.indexOf("\n")) >= 0) {
      const line = rest.slice(0, nl);
      rest = rest.slice(nl + 1);
      if (line.startsWith("OK")) ok = true;
      // 1732600000.123456 [0 127.0.0.1:54321] "EVALSHA" "…" — scripts' own calls are `[0 lua]`.
      const m = /^\d+\.\d+ \[\d+ ([^\]]+)\] "([^"]+)"/.exec(line);
      if (m && m[1] !== "lua") commands.push(m[2]!.toUpperCase());
    }
  });
  await waitUntil("redis-cli monitor", () => ok, 10_000);
  return {
    seen: () => commands,
    async stop() {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    },
  };
}

interface RoundTrips {
  operation: string;
  operations: number;
  /** Client commands per operation, background subtracted. */
  round_trips_per_op: number;
  /** Client commands per operation as seen, background included. */
  raw_per_op: number;
  /** Command names seen in the window, per operation. */
  commands_per_op: Record<string, number>;
}

async function countRoundTrips(monitor: Monitor, backgroundPerMs: number, operation: string, n: number, run: (i: number) => Promise<void>): Promise<RoundTrips> {
  const before = monitor.seen().length;
  const started = performance.now();
  for (let i = 0; i < n; i++) await run(i);
  // Let the last operation's commands reach the monitor.
  await new Promise((r) => setTimeout(r, 100));
  const elapsed = performance.now() - started;
  const window = monitor.seen().slice(before);
  const byName: Record<string, number> = {};
  for (const c of window) byName[c] = (byName[c] ?? 0) + 1;
  const perOp = Object.fromEntries(Object.entries(byName).sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, round2(v / n)]));
  const raw = window.length / n;
  return { operation, operations: n, round_trips_per_op: Math.max(0, round2((window.length - backgroundPerMs * elapsed) / n)), raw_per_op: round2(raw), commands_per_op: perOp };
}

const round2 = (x: number): number => Math.round(x * 100) / 100;
const cpuOf = (pid: number): number => [...threadCpuUs(pid).values()].reduce((a, b) => a + b, 0);
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { seconds: { type: "string" }, concurrency: { type: "string" }, repeat: { type: "string" }, ops: { type: "string" }, out: { type: "string" } } });
  const seconds = Number(values.seconds ?? 8);
  const concurrency = Number(values.concurrency ?? 16);
  const repeat = Number(values.repeat ?? 2);
  const ops = Number(values.ops ?? 200);
  const outDir = resolve(values.out ?? join(REPO_ROOT, "bench", "reports"));
  for (const tool of ["redis-server", "redis-cli", "wrk"]) {
    if (spawnSync(tool, ["--version"]).error) throw new Error(`${tool} is not on PATH (Debian: apt-get install redis-server redis-tools wrk)`);
  }
  const startedAt = new Date();
  const load = loadavg()[0]!;
  console.log(`replicas bench: ${cpus().length} cores, load ${load.toFixed(2)}; ${seconds}s per step at c=${concurrency}, ${repeat} repeat(s); ${ops} operations per round-trip count`);

  const redis = await startRedis();
  const local = await startReplica("local-1", { kind: "local" });
  const shared = await startReplica("redis-1", { kind: "redis", url: redis.url, prefix: `bench${Date.now().toString(36)}` });
  const profileBody = (server: Replica): BenchServer => ({ ...server, path: PROFILE_PATH, body: JSON.stringify(profileEvent("bench-profile")) });
  const throughput: Record<string, { local: WrkResult[]; redis: WrkResult[] }> = { session_fire: { local: [], redis: [] }, profile_fire: { local: [], redis: [] } };
  const redisCpuUsPerChain: Record<string, number[]> = { session_fire: [], profile_fire: [] };
  let roundTrips: RoundTrips[] = [];
  let background = { window_ms: 0, commands: 0, per_s: 0, commands_by_name: {} as Record<string, number> };
  try {
    // Warm both (JIT, isolates) before anything is measured.
    runWrk(local, concurrency, 2);
    runWrk(shared, concurrency, 2);
    runWrk(profileBody(local), concurrency, 1);
    runWrk(profileBody(shared), concurrency, 1);
    for (let r = 0; r < repeat; r++) {
      for (const [kind, target] of [["session_fire", (s: Replica) => s], ["profile_fire", profileBody]] as const) {
        // Alternate which goes first, so a drift in the machine's load favours neither.
        let a: WrkResult;
        let b: WrkResult;
        // The redis step also charges redis-server's own CPU (another process) to its chains.
        const redisStep = (): WrkResult => {
          const before = cpuOf(redis.pid);
          const result = runWrk(target(shared), concurrency, seconds);
          redisCpuUsPerChain[kind]!.push((cpuOf(redis.pid) - before) / Math.max(1, result.requests));
          return result;
        };
        if (r % 2 === 0) {
          a = runWrk(target(local), concurrency, seconds);
          b = redisStep();
        } else {
          b = redisStep();
          a = runWrk(target(local), concurrency, seconds);
        }
        throughput[kind]!.local.push(a);
        throughput[kind]!.redis.push(b);
        console.log(`${kind.padEnd(13)} local ${a.requests_per_s.toFixed(0).padStart(6)} chains/s (p99 ${a.p99_ms.toFixed(1)} ms, ${a.errors} err)   redis ${b.requests_per_s.toFixed(0).padStart(6)} chains/s (p99 ${b.p99_ms.toFixed(1)} ms, ${b.errors} err)`);
      }
    }

    // Round trips: background first, then each operation kind in turn, one at a time.
    const monitor = await startMonitor(redis.port);
    try {
      const idleMs = 3000;
      const b0 = monitor.seen().length;
      await new Promise((r) => setTimeout(r, idleMs));
      const idle = monitor.seen().slice(b0);
      const byName: Record<string, number> = {};
      for (const c of idle) byName[c] = (byName[c] ?? 0) + 1;
      background = { window_ms: idleMs, commands: idle.length, per_s: round2((idle.length / idleMs) * 1000), commands_by_name: byName };
      const perMs = idle.length / idleMs;
      const context = makeContext(7, 2048);
      const adaptBody = { selected: constitution, candidates: [constitution], selection_rationale: "bench", selection_algorithm: "fixed" };
      const expect = async (what: string, p: Promise<{ status: number; body: any }>, status = 200): Promise<void> => {
        const r = await p;
        if (r.status !== status) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      };
      const tag = Date.now().toString(36);
      roundTrips = [
        await countRoundTrips(monitor, perMs, "open session (POST /v1/sessions)", ops, (i) => expect("open", shared.request("POST", "/v1/sessions", { session_id: `rt-${tag}-${i}`, context, constitution }), 201)),
        await countRoundTrips(monitor, perMs, "fire on a session (POST …/chains/pre_inject)", ops, () => expect("fire", shared.request("POST", shared.path, JSON.parse(shared.body)))),
        await countRoundTrips(monitor, perMs, "adapt (POST …/adapt)", ops, () => expect("adapt", shared.request("POST", `/v1/sessions/${shared.path.split("/")[3]}/adapt`, adaptBody))),
        await countRoundTrips(monitor, perMs, "profile fire, 10 implicit sessions (POST /v1/profiles/…/events/…)", ops, (i) => expect("profile fire", shared.request("POST", PROFILE_PATH, profileEvent(`rt-profile-${i % 10}`)))),
        await countRoundTrips(monitor, perMs, "close session (DELETE /v1/sessions/{id})", ops, (i) => expect("close", shared.request("DELETE", `/v1/sessions/rt-${tag}-${i}`), 204)),
        await countRoundTrips(monitor, perMs, "bundle upload (PUT /v1/bundles/{name}, a new revision)", Math.max(5, Math.floor(ops / 10)), (i) => shared.install(`1.1.${i}`, 0)),
      ];
    } finally {
      await monitor.stop();
    }
  } finally {
    await local.stop();
    await shared.stop();
    await redis.stop();
  }

  const summary = Object.fromEntries(
    Object.entries(throughput).map(([kind, { local: l, redis: r }]) => {
      const lm = median(l.map((x) => x.requests_per_s));
      const rm = median(r.map((x) => x.requests_per_s));
      // CPU per chain (server + sandbox host; for redis also redis-server) is what a busy machine does not distort.
      const cpu = (x: WrkResult): number => (x.cpu_us_per_request?.server ?? 0) + (x.cpu_us_per_request?.sandbox_host ?? 0);
      const lc = median(l.map(cpu));
      const rc = median(r.map(cpu)) + median(redisCpuUsPerChain[kind] ?? [0]);
      return [kind, {
        local_chains_per_s: Math.round(lm), redis_chains_per_s: Math.round(rm), ratio_redis_to_local: round2(rm / lm),
        local_p99_ms: round2(median(l.map((x) => x.p99_ms))), redis_p99_ms: round2(median(r.map((x) => x.p99_ms))),
        local_cpu_us_per_chain: Math.round(lc), redis_cpu_us_per_chain: Math.round(rc), redis_server_cpu_us_per_chain: Math.round(median(redisCpuUsPerChain[kind] ?? [0])),
        cpu_ratio_redis_to_local: round2(rc / lc),
        local_cpu_bound_chains_per_s_per_core: Math.round(1e6 / lc), redis_cpu_bound_chains_per_s_per_core: Math.round(1e6 / rc),
        errors: [...l, ...r].reduce((a, x) => a + x.errors, 0),
      }];
    }),
  );
  console.log("\nchains/s per replica (medians; 5-hook pre_inject chain on a session; profile fire: gemini-cli BeforeTool, no hooks):");
  for (const [kind, s] of Object.entries(summary)) console.log(`  ${kind.padEnd(13)} local ${String(s.local_chains_per_s).padStart(6)}  redis ${String(s.redis_chains_per_s).padStart(6)}  ratio ${s.ratio_redis_to_local.toFixed(2)}  (p99 ${s.local_p99_ms} → ${s.redis_p99_ms} ms)`);
  console.log("CPU per chain (server + sandbox host; redis adds redis-server's), and the chains/s one core allows:");
  for (const [kind, s] of Object.entries(summary)) console.log(`  ${kind.padEnd(13)} local ${String(s.local_cpu_us_per_chain).padStart(5)} µs  redis ${String(s.redis_cpu_us_per_chain).padStart(5)} µs (redis-server ${s.redis_server_cpu_us_per_chain} µs)  ratio ${s.cpu_ratio_redis_to_local.toFixed(2)}  → ${s.local_cpu_bound_chains_per_s_per_core} vs ${s.redis_cpu_bound_chains_per_s_per_core} chains/s per core`);
  console.log(`\nRedis round trips per operation (client commands, background ${background.per_s}/s subtracted):`);
  for (const r of roundTrips) console.log(`  ${r.operation.padEnd(58)} ${r.round_trips_per_op.toFixed(2).padStart(6)}   seen ${JSON.stringify(r.commands_per_op)}`);

  const report = {
    bench: "replicas",
    started_at: startedAt.toISOString(),
    environment: { load_average_before: load, node: process.version, cpus: cpus().length, cpu_model: cpus()[0]?.model ?? "", redis: spawnSync("redis-server", ["--version"], { encoding: "utf8" }).stdout.trim() },
    config: { hooks: HOOKS, seconds_per_step: seconds, concurrency, repeat, operations_per_count: ops, threads: 2, redis_appendfsync: "always", client: "wrk -t1 on loopback" },
    throughput: summary,
    throughput_steps: throughput,
    background,
    round_trips: roundTrips,
  };
  mkdirSync(outDir, { recursive: true });
  const stamp = startedAt.toISOString().replace(/[:.]/g, "-");
  writeFileSync(join(outDir, `replicas-${stamp}.json`), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(outDir, "replicas-latest.json"), `${JSON.stringify(report, null, 2)}\n`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  await main();
}
