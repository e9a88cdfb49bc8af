/**
 * Profile bench (`npm run bench:profiles`, issue 12 deliver 5): one Gemini CLI BeforeTool event through
 * a 5-hook chain, three ways, in the same run:
 *
 *   route   POST /v1/profiles/gemini-cli/events/BeforeTool on a real server (createServer + a real
 *           runtime: sandbox process, isolates), keep-alive client, 5 sandboxed hooks
 *   node    5 spawned `node hook-N.js` scripts per event (how Gemini CLI / LLxprt / Claude Code run
 *           command hooks today), one after another and all at once (upstream's parallel default)
 *   sh      the same as 5 `sh hook-N.sh` scripts (each greps the event as shell hooks do)
 *   adapter `vcp-hooks hook BeforeTool --dialect gemini` (one process per event) → the same route
 *
 * The five hooks have the same logic in every form (one destructive-command pattern each); before
 * timing, every form is checked to give the same decision on a harmless and a destructive command.
 * Rounds are interleaved (one event of each row per round) so machine noise hits every row alike;
 * ratios are p50 of a row / p50 of the route in the same run.
 *
 *   node --no-node-snapshot dist/bench/profiles.js [--quick] [--events N] [--out dir]
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createArtifact } from "../src/bundle/artifact.js";
import { createRuntime, type VcpArtifact } from "../src/index.js";
import { createServer } from "../src/server/app.js";
import { environment, repoRoot, writeReport } from "./lib/report-io.js";
import { latencyStats, nowNs, type LatencyStats } from "./lib/stats.js";

const root = repoRoot();
const MAIN = join(root, "dist", "src", "cli", "main.js");
const TOKEN = "bench-client-token-0123456789";

/** The five hooks: a pattern over the shell command and the reason it blocks. Same in every form. */
const HOOKS: ReadonlyArray<readonly [string, string]> = [
  ["rm\\s+-[a-zA-Z]*r[a-zA-Z]*f[a-zA-Z]*\\s+(/|~)(\\s|$)", "rm -rf of / or ~"],
  ["(curl|wget)[^|]*\\|\\s*(ba)?sh", "pipes a download into a shell"],
  ["(^|[;&|]\\s*)sudo\\s", "runs as root"],
  ["git\\s+push\\b.*\\s(--force|-f)(\\s|$)", "force push"],
  ["mkfs|dd\\s.*of=/dev/", "writes a raw device"],
];

const event = (command: string) =>
  JSON.stringify({ session_id: "bench", transcript_path: "/tmp/t.jsonl", cwd: "/home/dev/app", hook_event_name: "BeforeTool", timestamp: "2026-11-26T00:00:00Z", tool_name: "run_shell_command", tool_input: { command } });
const HARMLESS = event("ls -la src && npm test");
const DESTRUCTIVE = event("rm -rf /");

// ── the three forms of the same five hooks ───────────────────────────────────────────────────────

function sandboxBundle(): VcpArtifact {
  const actions = HOOKS.map(
    ([re, why], i) => `h${i}: function (input) { var c = String(input.tool_input.command || ""); return new RegExp(${JSON.stringify(re)}).test(c) ? { decision: "block", reason: ${JSON.stringify(why)} } : {}; }`,
  );
  const manifest = {
    bundle: "bench-five",
    version: "1.0.0",
    trust: "deployment",
    profile: "gemini-cli",
    hooks: HOOKS.map((_, i) => ({ name: `hook_${i}`, event: "BeforeTool", matcher: "run_shell_command", action: `h${i}`, priority: 50 - i, timeout_ms: 2000 })),
  };
  return createArtifact(manifest, `var __vcp_bundle = {\n${actions.join(",\n")}\n};`) as VcpArtifact;
}

function writeScripts(dir: string): { node: string[]; sh: string[] } {
  const node: string[] = [];
  const sh: string[] = [];
  HOOKS.forEach(([re, why], i) => {
    const js = join(dir, `hook-${i}.js`);
    writeFileSync(
      js,
      `let s = ""; process.stdin.on("data", (c) => (s += c)).on("end", () => {
  const input = JSON.parse(s); const c = String(input.tool_input?.command ?? "");
  process.stdout.write(JSON.stringify(new RegExp(${JSON.stringify(re)}).test(c) ? { decision: "block", reason: ${JSON.stringify(why)} } : {}) + "\\n");
});\n`,
    );
    node.push(js);
    const shFile = join(dir, `hook-${i}.sh`);
    // The command as the JSON holds it; grep -E on it as a shell hook would (no jq on every machine).
    writeFileSync(
      shFile,
      `input=$(cat)
command=$(printf '%s' "$input" | sed -n 's/.*"command":"\\([^"]*\\)".*/\\1/p')
if printf '%s' "$command" | grep -Eq '${re}'; then echo '{"decision":"block","reason":"${why}"}'; else echo '{}'; fi\n`,
    );
    sh.push(shFile);
  });
  return { node, sh };
}

/** Run one process with `input` on stdin; its stdout. */
function spawnOnce(file: string, args: string[], input: string): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(file, args, { stdio: ["pipe", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (c) => (out += c));
    child.on("error", fail);
    child.on("close", (code) => (code === 0 ? done(out) : fail(new Error(`${file} ${args.join(" ")} exited ${code}`))));
    child.stdin.on("error", () => undefined);
    child.stdin.end(input);
  });
}

/** Five scripts for one event, folded as the agent folds them: blocked when any says block. */
async function scripts(run: (i: number) => Promise<string>, parallel: boolean): Promise<string> {
  const outs = parallel ? await Promise.all(HOOKS.map((_, i) => run(i))) : [];
  if (!parallel) for (let i = 0; i < HOOKS.length; i++) outs.push(await run(i));
  return outs.map((o) => (JSON.parse(o) as { decision?: string }).decision).includes("block") ? "block" : "allow";
}

function postRoute(url: URL, agent: Agent, body: string): Promise<string> {
  return new Promise((done, fail) => {
    const req = request(url, { method: "POST", agent, headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}`, "content-length": Buffer.byteLength(body) } }, (res) => {
      let text = "";
      res.on("data", (c) => (text += c));
      res.on("end", () => (res.statusCode === 200 ? done(text) : fail(new Error(`route answered ${res.statusCode}: ${text}`))));
    });
    req.on("error", fail);
    req.end(body);
  });
}

const decisionOf = (native: { decision?: string }) => (native.decision === "block" || native.decision === "deny" ? "block" : "allow");

interface Row {
  name: string;
  stats: LatencyStats;
  ratio_to_route: number;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const quick = argv.includes("--quick");
  const events = Number(argv.includes("--events") ? argv[argv.indexOf("--events") + 1] : 0) || (quick ? 30 : 200);
  const outDir = argv.includes("--out") ? argv[argv.indexOf("--out") + 1]! : join(root, "bench", "reports", "profiles");

  const dir = mkdtempSync(join(tmpdir(), "vcp-bench-profiles-"));
  const runtime = await createRuntime({ requireSignatures: false, sandbox: { threads: 2 }, dataDir: join(dir, "data") });
  const server = await createServer({
    runtime,
    settings: { auth: [{ id: "bench", role: "client", token_sha256: createHash("sha256").update(TOKEN).digest("hex") }], limits: { body_bytes: 1 << 20, bundle_bytes: 1 << 20 }, sessionHookAllowlist: [] },
  });
  try {
    await runtime.bundles.install(sandboxBundle());
    const base = await server.listen("127.0.0.1", 0);
    const url = new URL("/v1/profiles/gemini-cli/events/BeforeTool", base);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const { node, sh } = writeScripts(dir);

    const route = async (body: string) => decisionOf((JSON.parse(await postRoute(url, agent, body)) as { native: { decision?: string } }).native);
    const nodeRun = (body: string) => (i: number) => spawnOnce(process.execPath, [node[i]!], body);
    const shRun = (body: string) => (i: number) => spawnOnce("/bin/sh", [sh[i]!], body);
    const adapter = async (body: string) => decisionOf(JSON.parse(await spawnOnce(process.execPath, [MAIN, "hook", "BeforeTool", "--dialect", "gemini", "--server", base], body)) as { decision?: string });
    process.env["VCP_CLIENT_TOKEN"] = TOKEN; // the adapter reads it from its environment

    const rows: Array<{ name: string; run: (body: string) => Promise<string> }> = [
      { name: "route: POST /v1/profiles/gemini-cli/events/BeforeTool (keep-alive, 5 sandboxed hooks)", run: route },
      { name: "5 spawned node scripts, sequential", run: (b) => scripts(nodeRun(b), false) },
      { name: "5 spawned node scripts, parallel", run: (b) => scripts(nodeRun(b), true) },
      { name: "5 spawned sh scripts, sequential", run: (b) => scripts(shRun(b), false) },
      { name: "5 spawned sh scripts, parallel", run: (b) => scripts(shRun(b), true) },
      { name: "vcp-hooks hook adapter process → route (5 sandboxed hooks)", run: adapter },
    ];
    // Same logic: every form gives the same decision on both inputs before anything is timed.
    for (const r of rows) {
      const got = [await r.run(HARMLESS), await r.run(DESTRUCTIVE)];
      if (got[0] !== "allow" || got[1] !== "block") throw new Error(`${r.name}: decisions ${got.join("/")}, expected allow/block`);
    }
    // Warm-up: JIT, isolates of both workers, page cache.
    for (let i = 0; i < 5; i++) for (const r of rows) await r.run(HARMLESS);
    const ns: number[][] = rows.map(() => []);
    for (let e = 0; e < events; e++) {
      for (let i = 0; i < rows.length; i++) {
        const t0 = nowNs();
        await rows[i]!.run(HARMLESS);
        ns[i]!.push(Number(nowNs() - t0));
      }
    }
    agent.destroy();

    const routeP50 = latencyStats(ns[0]!).p50_us;
    const table: Row[] = rows.map((r, i) => {
      const stats = latencyStats(ns[i]!);
      return { name: r.name, stats, ratio_to_route: stats.p50_us / routeP50 };
    });
    const report = { schema: "vcp-hooks/bench-profiles", version: 1, quick, events_per_row: events, hooks: HOOKS.length, event: "gemini-cli BeforeTool (harmless command: every hook runs)", environment: environment(), rows: table };
    const ms = (us: number) => (us / 1000).toFixed(2);
    const md = [
      "# A 5-hook BeforeTool chain: the profile route vs spawned hook scripts",
      "",
      `${events} events per row, interleaved rounds${quick ? " (--quick)" : ""}; p50/p99 per event in ms; ratio = p50 / p50 of the route in the same run.`,
      "",
      "| what | p50 ms | p99 ms | ratio to route |",
      "|---|---:|---:|---:|",
      ...table.map((r) => `| ${r.name} | ${ms(r.stats.p50_us)} | ${ms(r.stats.p99_us)} | ${r.ratio_to_route.toFixed(1)} |`),
      "",
    ].join("\n");
    const files = writeReport(outDir, report, md);
    process.stdout.write(`${md}\nwrote ${files.json} and ${files.md}\n`);
  } finally {
    await server.close();
    await runtime.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
