/**
 * What a replica's background work costs with sessions open (issue 27): CPU per sessionless call —
 * a gemini-cli `BeforeTool` event, no hooks, so no Redis round trip — on `vcp-hooks serve` with
 * `store: local` and with `store: redis`, each holding N idle sessions and one 60 s periodic hook.
 *
 *   node dist/bench/replicas-background.js [--sessions 200] [--rate 200] [--calls 3000] [--repeat 2]
 *                                          [--before <root of another build>] [--out dir]
 *
 * The calls are paced (`--rate` per second, 8 connections): a replica that is not saturated, where
 * background work per second shows as CPU per call. Each redis replica has its own redis-server, whose
 * CPU is added to its calls. `--before` adds a redis replica run from another build (a directory with
 * its own dist/ and node_modules), so a change is compared before/after in one run on one machine.
 * Also measured: CPU per second with no call at all. Add `--cpu-prof` to the servers with
 * VCP_BENCH_CPU_PROF=<dir>. Needs `redis-server` on PATH. Exits 0 whatever the figures: it is a report.
 *
 * Found with it (2026-11-28): the periodic scan of the release before issue 27 sent one script per open
 * session every 200 ms, 49 % of the redis replica's busy CPU in its --cpu-prof; at 200 calls/s with 200
 * idle sessions that made each call cost 1.5–1.6× the local store's CPU.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import type { VcpArtifact } from "../src/index.js";
import { createArtifact, generateKeyPair, signArtifact } from "../src/tooling.js";
import { threadCpuUs } from "./lib/proc.js";
import { environment, repoRoot } from "./lib/report-io.js";

const sha256 = (s: string): string => createHash("sha256").update(s).digest("hex");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cpuUs = (pid: number): number => [...threadCpuUs(pid).values()].reduce((a, b) => a + b, 0);
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

interface Redis {
  port: number;
  pid: number;
  stop(): Promise<void>;
}

async function startRedis(): Promise<Redis> {
  const dir = mkdtempSync(join(tmpdir(), "vcp-bench-bg-redis-"));
  const port = await freePort();
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no"], { stdio: "ignore" });
  await sleep(500);
  return {
    port,
    pid: child.pid!,
    async stop() {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface Server {
  name: string;
  url: string;
  pid: number;
  clientToken: string;
  redis: Redis | undefined;
  stop(): Promise<void>;
}

const key = generateKeyPair();
const periodicBundle = signArtifact(
  createArtifact(
    { bundle: "minutely", version: "1.0.0", trust: "deployment", hooks: [{ name: "every_minute", type: "periodic", action: "tick", priority: 50, timeout_ms: 2000, metadata: { interval_ms: 60_000 } }] },
    `var __vcp_bundle = { tick: function () { return { status: "continue" }; } };`,
  ) as VcpArtifact,
  key.privateKeyPem,
  "bench",
);

async function startServer(name: string, root: string, redis: Redis | undefined, sessions: number): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), `vcp-bench-bg-${name}-`));
  const operatorToken = `op-${sha256(`${name}${Math.random()}`).slice(0, 40)}`;
  const clientToken = `cl-${sha256(`${name}${Math.random()}`).slice(0, 40)}`;
  writeFileSync(join(dir, "bench.pub.pem"), key.publicKeyPem);
  const store = redis === undefined ? "store: { kind: local }" : `store: { kind: redis, url: "redis://127.0.0.1:${redis.port}", prefix: bg${name.replace(/\W/g, "")}, heartbeat_ms: 1000, reconcile_ms: 5000 }`;
  writeFileSync(
    join(dir, "vcp.yaml"),
    [
      "listen: { host: 127.0.0.1, port: 0 }",
      "data_dir: ./data",
      "auth:",
      `  - { id: ops, role: operator, token_sha256: "${sha256(operatorToken)}" }`,
      `  - { id: bench, role: client, token_sha256: "${sha256(clientToken)}" }`,
      "keyring: { keys: [ { key_id: bench, public_key_file: bench.pub.pem, max_trust: deployment } ] }",
      "pool: { threads: 1 }",
      `limits: { registrations_per_minute: 100000, sessions_per_client: ${sessions + 10} }`,
      store,
    ].join("\n"),
  );
  const profile = process.env.VCP_BENCH_CPU_PROF;
  const args = ["--no-node-snapshot", ...(profile !== undefined ? ["--cpu-prof", "--cpu-prof-dir", join(resolve(profile), name)] : []), join(root, "dist", "src", "cli", "serve.js"), "--config", "vcp.yaml", "--log-level", "warn"];
  const child: ChildProcess = spawn(process.execPath, args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, VCP_REPLICA_ID: name } });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise((r) => child.once("exit", r));
  let url: string | undefined;
  for (let i = 0; i < 900 && url === undefined; i++) {
    if (child.exitCode !== null) throw new Error(`${name} exited:\n${out}`);
    await sleep(100);
    url = /serving at (http:\/\/[^\s"]+)/.exec(out)?.[1];
  }
  if (url === undefined) throw new Error(`${name} did not start:\n${out}`);
  const request = async (method: string, path: string, body: unknown, token: string) => {
    const res = await fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    return { status: res.status, text: await res.text() };
  };
  const put = await request("PUT", "/v1/bundles/minutely", periodicBundle, operatorToken);
  if (put.status !== 201) throw new Error(`${name}: install: ${put.status} ${put.text}`);
  for (let i = 0; i < sessions; i++) {
    const open = await request("POST", "/v1/sessions", { session_id: `idle-${i}`, context: {}, constitution: { id: "c", version: "1", rules: [{ id: "r", text: "x" }] } }, clientToken);
    if (open.status !== 201) throw new Error(`${name}: open: ${open.status} ${open.text}`);
  }
  return {
    name,
    url,
    pid: child.pid!,
    clientToken,
    redis,
    async stop() {
      child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const EVENT = JSON.stringify({ session_id: "bench-profile", transcript_path: "/t", cwd: "/home/dev/app", hook_event_name: "BeforeTool", timestamp: "2026-11-28T06:00:00Z", tool_name: "run_shell_command", tool_input: { command: "ls -la" } });

/** `calls` sessionless profile events at `rate` per second over 8 connections; the non-200 answers. */
async function drive(server: Server, calls: number, rate: number): Promise<number> {
  let next = 0;
  let errors = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < calls) {
      next++;
      const wait = started + (next / rate) * 1000 - performance.now();
      if (wait > 0) await sleep(wait);
      const res = await fetch(`${server.url}/v1/profiles/gemini-cli/events/BeforeTool`, { method: "POST", headers: { authorization: `Bearer ${server.clientToken}`, "content-type": "application/json" }, body: EVENT });
      await res.arrayBuffer();
      if (res.status !== 200) errors++;
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return errors;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { sessions: { type: "string" }, rate: { type: "string" }, calls: { type: "string" }, repeat: { type: "string" }, before: { type: "string" }, out: { type: "string" } } });
  const sessions = Number(values.sessions ?? 200);
  const rate = Number(values.rate ?? 200);
  const calls = Number(values.calls ?? 3000);
  const repeat = Number(values.repeat ?? 2);
  const root = repoRoot();
  const outDir = resolve(values.out ?? join(root, "bench", "reports"));
  const redisA = await startRedis();
  const redisB = values.before !== undefined ? await startRedis() : undefined;
  const servers: Server[] = [];
  try {
    servers.push(await startServer("local", root, undefined, sessions));
    servers.push(await startServer("redis", root, redisA, sessions));
    if (values.before !== undefined) servers.push(await startServer("redis-before", resolve(values.before), redisB, sessions));
    for (const s of servers) await drive(s, Math.min(600, calls), rate);
    const idle: Record<string, { server_ms_per_s: number; redis_server_ms_per_s: number }> = {};
    for (const s of servers) {
      const before = cpuUs(s.pid);
      const redisBefore = s.redis === undefined ? 0 : cpuUs(s.redis.pid);
      const started = performance.now();
      await sleep(10_000);
      const seconds = (performance.now() - started) / 1000;
      idle[s.name] = { server_ms_per_s: Math.round((cpuUs(s.pid) - before) / 1000 / seconds), redis_server_ms_per_s: s.redis === undefined ? 0 : Math.round((cpuUs(s.redis.pid) - redisBefore) / 1000 / seconds) };
    }
    const steps: Record<string, Array<{ server_us: number; redis_server_us: number; errors: number }>> = {};
    for (let r = 0; r < repeat; r++) {
      // Alternate the order, so a drift in the machine's load favours none.
      for (const s of r % 2 === 0 ? servers : [...servers].reverse()) {
        const before = cpuUs(s.pid);
        const redisBefore = s.redis === undefined ? 0 : cpuUs(s.redis.pid);
        const errors = await drive(s, calls, rate);
        (steps[s.name] ??= []).push({ server_us: Math.round((cpuUs(s.pid) - before) / calls), redis_server_us: s.redis === undefined ? 0 : Math.round((cpuUs(s.redis.pid) - redisBefore) / calls), errors });
      }
    }
    const summary = Object.fromEntries(servers.map((s) => {
      const xs = steps[s.name]!;
      return [s.name, { server_us_per_call: median(xs.map((x) => x.server_us)), redis_server_us_per_call: median(xs.map((x) => x.redis_server_us)), total_us_per_call: median(xs.map((x) => x.server_us + x.redis_server_us)), errors: xs.reduce((a, x) => a + x.errors, 0) }];
    }));
    const local = summary.local!.total_us_per_call;
    console.log(`replicas-background: ${sessions} idle sessions + one 60 s periodic hook per server; ${calls} sessionless calls per step at ${rate}/s; ${repeat} repeats (medians)`);
    console.log("server           CPU/call (server + redis-server)   ratio to local   idle CPU (server + redis-server)");
    for (const s of servers) {
      const x = summary[s.name]!;
      console.log(`  ${s.name.padEnd(14)} ${String(x.total_us_per_call).padStart(6)} µs (${x.server_us_per_call} + ${x.redis_server_us_per_call})        ${(x.total_us_per_call / local).toFixed(2).padStart(5)}          ${idle[s.name]!.server_ms_per_s} + ${idle[s.name]!.redis_server_ms_per_s} ms/s`);
    }
    const report = { bench: "replicas-background", at: new Date().toISOString(), environment: environment(), config: { sessions, rate, calls, repeat, before: values.before ?? null }, idle, steps, summary };
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, "replicas-background-latest.json"), `${JSON.stringify(report, null, 2)}\n`);
  } finally {
    for (const s of servers) await s.stop().catch(() => undefined);
    await redisA.stop();
    await redisB?.stop();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  await main();
}
