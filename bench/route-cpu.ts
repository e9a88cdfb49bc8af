/**
 * Server CPU per agent event over HTTP (issue 25 deliver 6, the path agents take): `POST
 * /v1/profiles/gemini-cli/events/BeforeTool` with the 5-hook chain of bench/profile-cpu.ts (every hook
 * selected and run in the sandbox), on a real server (createServer + a real runtime), a keep-alive
 * client in a child process so its CPU is not counted. Printed: CPU of this process (HTTP, fire path,
 * audit) and of the sandbox host, per request, as one JSON line per round.
 *
 * `--build <dir>` runs another checkout's built dist/ with this harness (a build older than this file
 * has the same createRuntime / createServer / createArtifact), so two builds compare in one sitting:
 *
 *   node --no-node-snapshot dist/bench/route-cpu.js [--build <dir>] [--requests N] [--concurrency C] [--no-audit] [--rounds R]
 *
 * Default: 2000 requests one at a time, audit log on (a data directory), 1 round.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { guardCode, guardInput, guardManifest } from "./lib/gemini-guard.js";
import { repoRoot } from "./lib/report-io.js";

const argv = process.argv.slice(2);
const option = (name: string): string | undefined => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1] : undefined);
const build = resolve(option("build") ?? repoRoot());
const requests = Number(option("requests") ?? 2000);
const concurrency = Number(option("concurrency") ?? 1);
const rounds = Number(option("rounds") ?? 1);
const audit = !argv.includes("--no-audit");
for (const [name, value] of [["requests", requests], ["concurrency", concurrency], ["rounds", rounds]] as const) {
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer, got ${String(value)}`);
}

const TOKEN = "bench-client-token-0123456789";
interface BuildApi {
  createRuntime(options: Record<string, unknown>): Promise<{ bundles: { install(artifact: unknown): Promise<unknown> }; metrics(): Promise<string>; close(): Promise<void> }>;
  createServer(options: Record<string, unknown>): Promise<{ listen(host: string, port: number): Promise<string>; close(): Promise<void> }>;
  createArtifact(manifest: unknown, code: string): unknown;
}

async function load(dir: string): Promise<BuildApi> {
  const from = (path: string) => import(pathToFileURL(join(dir, "dist", "src", path)).href) as Promise<Record<string, unknown>>;
  const [index, app, artifact] = await Promise.all([from("index.js"), from("server/app.js"), from("bundle/artifact.js")]);
  return { createRuntime: index.createRuntime, createServer: app.createServer, createArtifact: artifact.createArtifact } as BuildApi;
}

/** The client: `n` keep-alive POSTs, `c` at a time; exits non-zero on any answer but 200. */
const CLIENT = `
import { Agent, request } from "node:http";
const [url, token, body, n, c] = process.argv.slice(2);
const agent = new Agent({ keepAlive: true, maxSockets: Number(c) });
const post = () => new Promise((ok, fail) => {
  const r = request(url, { method: "POST", agent, headers: { authorization: "Bearer " + token, "content-type": "application/json" } }, (m) => {
    let text = "";
    m.on("data", (d) => (text += d));
    m.on("end", () => (m.statusCode === 200 ? ok(text) : fail(new Error(m.statusCode + " " + text))));
  });
  r.on("error", fail);
  r.end(body);
});
let left = Number(n);
await Promise.all(Array.from({ length: Number(c) }, async () => { while (left-- > 0) await post(); }));
`;

async function main(): Promise<void> {
  const api = await load(build);
  const dir = mkdtempSync(join(tmpdir(), "vcp-bench-route-cpu-"));
  const runtime = await api.createRuntime({ requireSignatures: false, sandbox: { threads: 2 }, ...(audit ? { dataDir: join(dir, "data") } : {}) });
  const server = await api.createServer({
    runtime,
    settings: { auth: [{ id: "bench", role: "client", token_sha256: createHash("sha256").update(TOKEN).digest("hex") }], limits: { body_bytes: 1 << 20, bundle_bytes: 1 << 20 }, sessionHookAllowlist: [] },
  });
  try {
    await runtime.bundles.install(api.createArtifact(guardManifest(), guardCode()));
    const url = new URL("/v1/profiles/gemini-cli/events/BeforeTool", await server.listen("127.0.0.1", 0)).href;
    const body = JSON.stringify(guardInput("run_shell_command", "ls -la src && npm test"));
    const client = join(dir, "client.mjs");
    writeFileSync(client, CLIENT);
    const run = (n: number) =>
      new Promise<void>((ok, fail) => {
        const child = spawn(process.execPath, [client, url, TOKEN, body, String(n), String(concurrency)], { stdio: ["ignore", "inherit", "inherit"] });
        child.on("exit", (code) => (code === 0 ? ok() : fail(new Error(`the bench client exited with ${String(code)}`))));
      });
    const hostSeconds = async (): Promise<number> => {
      const line = (await runtime.metrics()).split("\n").find((l) => l.startsWith("vcp_sandbox_host_cpu_seconds_total"));
      return line === undefined ? 0 : Number(line.split(" ").at(-1));
    };
    await run(Math.min(300, requests)); // warm-up: JIT, isolates of both workers, the audit log's file
    for (let round = 0; round < rounds; round++) {
      const host0 = await hostSeconds();
      const main0 = process.cpuUsage();
      await run(requests);
      const main = process.cpuUsage(main0);
      const hostUs = ((await hostSeconds()) - host0) * 1e6;
      const mainUs = (main.user + main.system) / requests;
      console.log(JSON.stringify({ build, round, requests, concurrency, audit, main_us: Math.round(mainUs), host_us: Math.round(hostUs / requests), total_us: Math.round(mainUs + hostUs / requests) }));
    }
  } finally {
    await server.close();
    await runtime.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
