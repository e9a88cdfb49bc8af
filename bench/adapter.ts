/**
 * Adapter cold-start bench (`npm run bench:adapter`): what one agent event costs when the agent runs
 * `vcp-hooks hook …` as its command hook, next to the floor of any command hook on the same machine in
 * the same run (`node -e ''`, `sh -c true`, a bare sh hook script that reads the event and prints
 * JSON), the POSIX sh adapter (`vcp-hooks hook --print-sh`, curl) to the same warm route, plus
 * ai-memory daemon mode per event, and a 5-hook event through the adapter against the same event as
 * 5 spawned scripts (what users run today). Ratios of the adapters to the bare sh hook (issue 26 item 5:
 * the sh adapter ≤ 3×) and to `node -e ''` come from the same run.
 *
 *   node dist/bench/adapter.js [--samples N] [--out dir]
 *
 * The route is a stand-in (node:http in this process, answering the profile route's envelope at once,
 * with the guard a real server always sends, so both adapters check their guard file as they do in
 * use), so the figures are the adapter's own cost: process start, module load, stdin, one HTTP round
 * trip, the guard file, stdout. Rounds are interleaved (one sample of each row per round) so machine noise hits every row
 * alike; ratios are against `node -e ''` of the same run.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { loadavg, tmpdir } from "node:os";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { guardPath } from "../src/cli/hook-guard.js";
import { environment, repoRoot, writeReport } from "./lib/report-io.js";
import { latencyStats, nowNs, percentile, type LatencyStats } from "./lib/stats.js";

const root = repoRoot();
const MAIN = join(root, "dist", "src", "cli", "main.js");
const BIN = join(root, "bin", "vcp-hooks");
const INPUT = JSON.stringify({
  session_id: "bench", transcript_path: "/tmp/t.jsonl", cwd: "/tmp", hook_event_name: "BeforeTool",
  timestamp: "2026-11-26T00:00:00Z", tool_name: "run_shell_command", tool_input: { command: "ls -la" },
});

function runOnce(file: string, args: string[], input: string, env?: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((done, fail) => {
    const t0 = nowNs();
    const child = spawn(file, args, { stdio: ["pipe", "ignore", "inherit"], env });
    child.on("error", fail);
    child.on("close", (code) => (code === 0 ? done(Number(nowNs() - t0)) : fail(new Error(`${file} ${args.join(" ")} exited ${code}`))));
    child.stdin.on("error", () => undefined);
    child.stdin.end(input);
  });
}

/** The median of a[i] / b[i]: two rows' samples of the same rounds. */
function pairedRatio(a: readonly number[], b: readonly number[]): number {
  return percentile(a.map((x, i) => x / b[i]!), 50);
}

interface Row {
  name: string;
  stats: LatencyStats;
  ratio_to_node_e: number;
}

const NODE_ADAPTER = "vcp-hooks hook (node dist/src/cli/main.js)";
const BARE_SH = "bare sh hook script (reads stdin, prints JSON)";
const SH_ADAPTER = "sh adapter (vcp-hooks hook --print-sh: sh + curl)";
const CURL_START = "curl --version (curl's own start-up)";
/** curl as the sh adapter finds it (PATH). */
const CURL = spawnSync("/bin/sh", ["-c", "command -v curl"], { encoding: "utf8" }).stdout.trim() || "curl";

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const samples = Number(argv[argv.indexOf("--samples") + 1] ?? 0) || 40;
  const outDir = argv.includes("--out") ? argv[argv.indexOf("--out") + 1]! : join(root, "bench", "reports", "adapter");

  // The plan's guard, as the route sends it with every answer (the adapters keep it for their next failure).
  const guard = { revisions: "0123456789abcdef".repeat(4), fail_closed_events: ["BeforeTool"] };
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      // `?answer=native` (the sh adapter): the native JSON, the exit code and guard in headers, as the route answers it.
      if (req.url?.endsWith("?answer=native") === true) {
        res.writeHead(200, { "content-type": "application/json", "x-vcp-exit-code": "0", "x-vcp-guard-revisions": guard.revisions, "x-vcp-fail-closed-events": guard.fail_closed_events.join(",") });
        res.end(JSON.stringify({ decision: "allow" }));
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ native: { decision: "allow" }, exit_code: 0, result: {}, guard }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const hookArgs = ["hook", "BeforeTool", "--dialect", "gemini", "--server", url];
  const script = `cat >/dev/null; echo '{"decision":"allow"}'`;
  // Script files, as an agent's settings name them: a bare sh hook and the sh adapter.
  const scratch = mkdtempSync(join(tmpdir(), "vcp-bench-adapter-"));
  // The adapters' guard files go to the scratch directory, never the user's cache.
  const adapterEnv = { ...process.env, XDG_CACHE_HOME: join(scratch, "cache") };
  const bareHook = join(scratch, "hook.sh");
  writeFileSync(bareHook, `#!/bin/sh\n${script}\n`, { mode: 0o755 });
  const shAdapter = join(scratch, "vcp-hook.sh");
  const printed = spawnSync(process.execPath, [MAIN, "hook", "--print-sh"], { encoding: "utf8" });
  if (printed.status !== 0) throw new Error(`vcp-hooks hook --print-sh failed: ${printed.stderr}`);
  writeFileSync(shAdapter, printed.stdout, { mode: 0o755 });
  const shAdapterArgs = [shAdapter, "BeforeTool", "--dialect", "gemini", "--server", url];
  const nodeScript = `process.stdin.resume(); process.stdin.on("end", () => console.log('{"decision":"allow"}'))`;

  const rows: Array<{ name: string; run: () => Promise<number>; ns: number[] }> = [
    { name: "sh -c true", run: () => runOnce("/bin/sh", ["-c", "true"], ""), ns: [] },
    { name: "node -e ''", run: () => runOnce(process.execPath, ["-e", ""], ""), ns: [] },
    { name: BARE_SH, run: () => runOnce("/bin/sh", [bareHook], INPUT), ns: [] },
    { name: SH_ADAPTER, run: () => runOnce("/bin/sh", shAdapterArgs, INPUT, adapterEnv), ns: [] },
    // The sh adapter's floor: curl's own start-up (its shared libraries), no request, in the environment the adapter gives it.
    { name: CURL_START, run: () => runOnce(CURL, ["--version"], "", { ...process.env, GNUTLS_NO_IMPLICIT_INIT: "1" }), ns: [] },
    { name: NODE_ADAPTER, run: () => runOnce(process.execPath, [MAIN, ...hookArgs], INPUT, adapterEnv), ns: [] },
    { name: "vcp-hooks hook (bin/vcp-hooks wrapper)", run: () => runOnce(BIN, hookArgs, INPUT, adapterEnv), ns: [] },
    { name: "node --no-node-snapshot -e '' (how other commands start)", run: () => runOnce(process.execPath, ["--no-node-snapshot", "-e", ""], ""), ns: [] },
    {
      name: "5-hook event: 5 spawned scripts (sh, sequential)",
      run: async () => {
        let total = 0;
        for (let i = 0; i < 5; i++) total += await runOnce("/bin/sh", ["-c", script], INPUT);
        return total;
      },
      ns: [],
    },
    {
      name: "5-hook event: 5 spawned scripts (node, sequential)",
      run: async () => {
        let total = 0;
        for (let i = 0; i < 5; i++) total += await runOnce(process.execPath, ["-e", nodeScript], INPUT);
        return total;
      },
      ns: [],
    },
  ];
  // The machine's load (1-minute average) around the rounds: the ratios move with it on a shared machine.
  const loadBefore = loadavg()[0]!;
  for (const r of rows) await r.run(); // warm the page cache
  for (let i = 0; i < samples; i++) for (const r of rows) r.ns.push(await r.run());

  // Daemon mode: one resident adapter, one envelope per line, time to each decision line.
  const daemonNs: number[] = [];
  {
    const child = spawn(process.execPath, [MAIN, "hook", "--dialect", "ai-memory", "--daemon", "--server", url], { stdio: ["pipe", "pipe", "inherit"], env: adapterEnv });
    let buf = "";
    let waiting: (() => void) | undefined;
    child.stdout.on("data", (c) => {
      buf += c;
      if (buf.includes("\n")) {
        buf = buf.slice(buf.indexOf("\n") + 1);
        waiting?.();
      }
    });
    const envelope = `${JSON.stringify({ event: "pre_store", payload: { namespace: "n", content: "x" } })}\n`;
    for (let i = 0; i < samples * 5 + 10; i++) {
      const t0 = nowNs();
      await new Promise<void>((r) => {
        waiting = r;
        child.stdin.write(envelope);
      });
      if (i >= 10) daemonNs.push(Number(nowNs() - t0));
    }
    child.stdin.end();
    await new Promise((r) => child.on("close", r));
  }
  server.close();
  // The adapters did keep the stand-in's guard (both name the same file for the same server and profile).
  if (!existsSync(guardPath(`${url}/`, "gemini-cli", adapterEnv))) throw new Error("the adapters kept no guard file: the stand-in's guard did not reach them");
  rmSync(scratch, { recursive: true, force: true });

  const nodeP50 = latencyStats(rows[1]!.ns).p50_us;
  const table: Row[] = [...rows.map((r) => ({ name: r.name, ns: r.ns })), { name: "ai-memory --daemon, per event (resident)", ns: daemonNs }].map((r) => {
    const stats = latencyStats(r.ns);
    return { name: r.name, stats, ratio_to_node_e: stats.p50_us / nodeP50 };
  });
  const p50 = (name: string) => table.find((r) => r.name === name)!.stats.p50_us;
  const adapterP50 = p50(NODE_ADAPTER);
  const bareP50 = p50(BARE_SH);
  const shAdapterP50 = p50(SH_ADAPTER);
  const ratios = {
    sh_adapter_to_bare_sh_hook: shAdapterP50 / bareP50,
    node_adapter_to_bare_sh_hook: adapterP50 / bareP50,
    sh_adapter_to_node_e: shAdapterP50 / nodeP50,
    curl_start_to_bare_sh_hook: p50(CURL_START) / bareP50,
    node_adapter_to_node_e: adapterP50 / nodeP50,
    node_adapter_to_sh_adapter: adapterP50 / shAdapterP50,
    // Paired: the median over rounds of the sh adapter's time over the bare sh hook's of the same round
    // (run one after the other), which a load that drifts between rounds moves less than the p50s' ratio.
    sh_adapter_to_bare_sh_hook_paired: pairedRatio(rows.find((r) => r.name === SH_ADAPTER)!.ns, rows.find((r) => r.name === BARE_SH)!.ns),
  };
  const fiveP50 = table.find((r) => r.name.startsWith("5-hook") && r.name.includes("(sh"))!.stats.p50_us;
  const fiveNodeP50 = table.find((r) => r.name.startsWith("5-hook") && r.name.includes("(node"))!.stats.p50_us;
  const load = { before: loadBefore, after: loadavg()[0]! };
  const report = { schema: "vcp-hooks/bench-adapter", version: 1, ratios, load_average_1m: load, five_hook_ratio_adapter_to_sh_scripts: adapterP50 / fiveP50, five_hook_ratio_adapter_to_node_scripts: adapterP50 / fiveNodeP50, route: "stand-in (node:http, answers at once)", samples, environment: environment(), rows: table };
  const ms = (us: number) => (us / 1000).toFixed(1);
  const md = [
    "# Adapter cold start",
    "",
    `${samples} interleaved rounds; route: a stand-in answering at once, so this is the adapter's own cost. p50/p99 in ms; ratio = p50 / p50 of \`node -e ''\` in the same run. Load average (1 min): ${load.before.toFixed(1)} before, ${load.after.toFixed(1)} after.`,
    "",
    "| what | p50 ms | p99 ms | ratio to node -e '' |",
    "|---|---:|---:|---:|",
    ...table.map((r) => `| ${r.name} | ${ms(r.stats.p50_us)} | ${ms(r.stats.p99_us)} | ${r.ratio_to_node_e.toFixed(2)} |`),
    "",
    `One event, p50 ratios of this run: the sh adapter ${ratios.sh_adapter_to_bare_sh_hook.toFixed(2)}× a bare sh hook (target ≤ 3; paired by round ${ratios.sh_adapter_to_bare_sh_hook_paired.toFixed(2)}×; curl's start-up alone is ${ratios.curl_start_to_bare_sh_hook.toFixed(2)}×), ${ratios.sh_adapter_to_node_e.toFixed(2)}× \`node -e ''\`; the Node adapter ${ratios.node_adapter_to_bare_sh_hook.toFixed(2)}× a bare sh hook, ${ratios.node_adapter_to_node_e.toFixed(2)}× \`node -e ''\`, ${ratios.node_adapter_to_sh_adapter.toFixed(2)}× the sh adapter.`,
    "",
    `A 5-hook event: one adapter process (p50 ${ms(adapterP50)} ms, plus the server's chain, not measured here) vs 5 spawned sh scripts (p50 ${ms(fiveP50)} ms): ratio ${(adapterP50 / fiveP50).toFixed(2)}; vs 5 spawned node scripts (p50 ${ms(fiveNodeP50)} ms): ratio ${(adapterP50 / fiveNodeP50).toFixed(2)}.`,
    "",
  ].join("\n");
  const files = writeReport(outDir, report, md);
  process.stdout.write(`${md}\nwrote ${files.json} and ${files.md}\n`);
}

await main();
