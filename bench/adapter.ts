/**
 * Adapter cold-start bench (`npm run bench:adapter`): what one agent event costs when the agent runs
 * `vcp-hooks hook …` as its command hook, next to the floor of any command hook on the same machine in
 * the same run (`node -e ''`, `sh -c true`), plus ai-memory daemon mode per event, and a 5-hook event
 * through the adapter against the same event as 5 spawned scripts (what users run today).
 *
 *   node dist/bench/adapter.js [--samples N] [--out dir]
 *
 * The route is a stand-in (node:http in this process, answering the profile route's envelope at once),
 * so the figures are the adapter's own cost: process start, module load, stdin, one HTTP round trip,
 * stdout. Rounds are interleaved (one sample of each row per round) so machine noise hits every row
 * alike; ratios are against `node -e ''` of the same run.
 */
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { environment, repoRoot, writeReport } from "./lib/report-io.js";
import { latencyStats, nowNs, type LatencyStats } from "./lib/stats.js";

const root = repoRoot();
const MAIN = join(root, "dist", "src", "cli", "main.js");
const BIN = join(root, "bin", "vcp-hooks");
const INPUT = JSON.stringify({
  session_id: "bench", transcript_path: "/tmp/t.jsonl", cwd: "/tmp", hook_event_name: "BeforeTool",
  timestamp: "2026-11-26T00:00:00Z", tool_name: "run_shell_command", tool_input: { command: "ls -la" },
});

function runOnce(file: string, args: string[], input: string): Promise<number> {
  return new Promise((done, fail) => {
    const t0 = nowNs();
    const child = spawn(file, args, { stdio: ["pipe", "ignore", "inherit"] });
    child.on("error", fail);
    child.on("close", (code) => (code === 0 ? done(Number(nowNs() - t0)) : fail(new Error(`${file} ${args.join(" ")} exited ${code}`))));
    child.stdin.on("error", () => undefined);
    child.stdin.end(input);
  });
}

interface Row {
  name: string;
  stats: LatencyStats;
  ratio_to_node_e: number;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const samples = Number(argv[argv.indexOf("--samples") + 1] ?? 0) || 40;
  const outDir = argv.includes("--out") ? argv[argv.indexOf("--out") + 1]! : join(root, "bench", "reports", "adapter");

  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ native: { decision: "allow" }, exit_code: 0, result: {} }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const hookArgs = ["hook", "BeforeTool", "--dialect", "gemini", "--server", url];
  const script = `cat >/dev/null; echo '{"decision":"allow"}'`;
  const nodeScript = `process.stdin.resume(); process.stdin.on("end", () => console.log('{"decision":"allow"}'))`;

  const rows: Array<{ name: string; run: () => Promise<number>; ns: number[] }> = [
    { name: "sh -c true", run: () => runOnce("/bin/sh", ["-c", "true"], ""), ns: [] },
    { name: "node -e ''", run: () => runOnce(process.execPath, ["-e", ""], ""), ns: [] },
    { name: "vcp-hooks hook (node dist/src/cli/main.js)", run: () => runOnce(process.execPath, [MAIN, ...hookArgs], INPUT), ns: [] },
    { name: "vcp-hooks hook (bin/vcp-hooks wrapper)", run: () => runOnce(BIN, hookArgs, INPUT), ns: [] },
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
  for (const r of rows) await r.run(); // warm the page cache
  for (let i = 0; i < samples; i++) for (const r of rows) r.ns.push(await r.run());

  // Daemon mode: one resident adapter, one envelope per line, time to each decision line.
  const daemonNs: number[] = [];
  {
    const child = spawn(process.execPath, [MAIN, "hook", "--dialect", "ai-memory", "--daemon", "--server", url], { stdio: ["pipe", "pipe", "inherit"] });
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

  const nodeP50 = latencyStats(rows[1]!.ns).p50_us;
  const table: Row[] = [...rows.map((r) => ({ name: r.name, ns: r.ns })), { name: "ai-memory --daemon, per event (resident)", ns: daemonNs }].map((r) => {
    const stats = latencyStats(r.ns);
    return { name: r.name, stats, ratio_to_node_e: stats.p50_us / nodeP50 };
  });
  const adapterP50 = table[2]!.stats.p50_us;
  const fiveP50 = table.find((r) => r.name.startsWith("5-hook") && r.name.includes("(sh"))!.stats.p50_us;
  const fiveNodeP50 = table.find((r) => r.name.startsWith("5-hook") && r.name.includes("(node"))!.stats.p50_us;
  const report = { schema: "vcp-hooks/bench-adapter", version: 1, five_hook_ratio_adapter_to_sh_scripts: adapterP50 / fiveP50, five_hook_ratio_adapter_to_node_scripts: adapterP50 / fiveNodeP50, route: "stand-in (node:http, answers at once)", samples, environment: environment(), rows: table };
  const ms = (us: number) => (us / 1000).toFixed(1);
  const md = [
    "# Adapter cold start",
    "",
    `${samples} interleaved rounds; route: a stand-in answering at once, so this is the adapter's own cost. p50/p99 in ms; ratio = p50 / p50 of \`node -e ''\` in the same run.`,
    "",
    "| what | p50 ms | p99 ms | ratio to node -e '' |",
    "|---|---:|---:|---:|",
    ...table.map((r) => `| ${r.name} | ${ms(r.stats.p50_us)} | ${ms(r.stats.p99_us)} | ${r.ratio_to_node_e.toFixed(2)} |`),
    "",
    `A 5-hook event: one adapter process (p50 ${ms(adapterP50)} ms, plus the server's chain, not measured here) vs 5 spawned sh scripts (p50 ${ms(fiveP50)} ms): ratio ${(adapterP50 / fiveP50).toFixed(2)}; vs 5 spawned node scripts (p50 ${ms(fiveNodeP50)} ms): ratio ${(adapterP50 / fiveNodeP50).toFixed(2)}.`,
    "",
  ].join("\n");
  const files = writeReport(outDir, report, md);
  process.stdout.write(`${md}\nwrote ${files.json} and ${files.md}\n`);
}

await main();
