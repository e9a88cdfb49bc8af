/**
 * Bounded soak (issue 6): the load bench's 5-hook chain at a steady concurrency for `--seconds`
 * (default 300), sampling every `--every` seconds (default 10) the RSS of the server process and of
 * the sandbox host, and their open file descriptors (sockets, pipes, files: the handles that leak).
 * Reports whether they stay flat: after the first third (warm-up: JIT, isolates, pools), the last
 * sample may exceed the first post-warm-up sample by at most 10 % RSS (+16 MiB slack) and 8 fds.
 *
 *   node dist/bench/soak.js [--seconds N] [--every S] [--concurrency C (default 16)] [--out dir]
 *
 * Writes <out>/soak-<timestamp>.json and soak-latest.json. Exits 0 even when not flat: it is a report.
 */
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { startBenchServer } from "./load.js";
import { rssBytes } from "./lib/proc.js";

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

function openFds(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return Number.NaN;
  }
}

interface Sample {
  t_s: number;
  server_rss_mb: number;
  host_rss_mb: number;
  server_fds: number;
  host_fds: number;
  requests_so_far?: number;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const arg = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const seconds = Number(arg("--seconds") ?? 300);
  const every = Number(arg("--every") ?? 10);
  const concurrency = Number(arg("--concurrency") ?? 16);
  const outDir = resolve(arg("--out") ?? join(REPO_ROOT, "bench", "reports"));
  const startedAt = new Date();
  const server = await startBenchServer();
  const samples: Sample[] = [];
  const mb = (b: number) => Math.round((b / 1048576) * 10) / 10;
  let wrkOut = "";
  try {
    const lua = `wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer ${server.clientToken}"
wrk.body = [==[${server.body}]==]
done = function(summary, latency, requests)
  io.write(string.format('WRKJSON {"requests":%d,"non_2xx":%d,"socket_errors":%d,"p50_us":%d,"p99_us":%d}\\n',
    summary.requests, summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`;
    const { mkdtempSync, writeFileSync: write } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const script = join(mkdtempSync(join(tmpdir(), "vcp-soak-")), "soak.lua");
    write(script, lua);
    const wrk = spawn("wrk", ["-t1", `-c${concurrency}`, `-d${seconds}s`, "--timeout", "5s", "-s", script, `${server.url}${server.path}`], { stdio: ["ignore", "pipe", "pipe"] });
    wrk.stdout.on("data", (d) => (wrkOut += d));
    wrk.stderr.on("data", (d) => (wrkOut += d));
    const wrkDone = new Promise<void>((r) => wrk.on("exit", () => r()));
    const t0 = Date.now();
    const sample = async () => {
      const s: Sample = {
        t_s: Math.round((Date.now() - t0) / 1000),
        server_rss_mb: mb(rssBytes(server.pid)),
        host_rss_mb: server.hostPid !== undefined ? mb(rssBytes(server.hostPid)) : Number.NaN,
        server_fds: openFds(server.pid),
        host_fds: openFds(server.hostPid),
      };
      // the server's own request counter, through /metrics (operator token)
      try {
        const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${server.operatorToken}` } });
        const text = await res.text();
        const m = new RegExp(`vcp_http_requests_total\\{method="POST",route="/v1/sessions/:id/chains/:type",status="200"\\} (\\d+)`).exec(text);
        if (m) s.requests_so_far = Number(m[1]);
      } catch {
        // a failed scrape is not a failed soak
      }
      samples.push(s);
      console.log(
        `t=${String(s.t_s).padStart(4)}s  server ${s.server_rss_mb.toFixed(1).padStart(7)} MiB ${String(s.server_fds).padStart(4)} fds   sandbox host ${s.host_rss_mb.toFixed(1).padStart(7)} MiB ${String(s.host_fds).padStart(4)} fds   requests ${s.requests_so_far ?? "?"}`,
      );
    };
    await sample();
    while (Date.now() - t0 < seconds * 1000) {
      await Promise.race([new Promise((r) => setTimeout(r, every * 1000)), wrkDone]);
      if (Date.now() - t0 >= seconds * 1000 - 500) break;
      await sample();
    }
    await wrkDone;
    await sample();
  } finally {
    await server.stop();
  }
  const summary = JSON.parse(/WRKJSON (\{.*\})/.exec(wrkOut)?.[1] ?? "{}") as Record<string, number>;
  const warm = samples.filter((s) => s.t_s >= seconds / 3);
  const first = warm[0] ?? samples[0]!;
  const last = samples[samples.length - 1]!;
  const flatRss = (a: number, b: number) => b <= a * 1.1 + 16;
  const verdict = {
    server_rss: { from_mb: first.server_rss_mb, to_mb: last.server_rss_mb, flat: flatRss(first.server_rss_mb, last.server_rss_mb) },
    host_rss: { from_mb: first.host_rss_mb, to_mb: last.host_rss_mb, flat: flatRss(first.host_rss_mb, last.host_rss_mb) },
    server_fds: { from: first.server_fds, to: last.server_fds, flat: last.server_fds <= first.server_fds + 8 },
    host_fds: { from: first.host_fds, to: last.host_fds, flat: last.host_fds <= first.host_fds + 8 },
  };
  const flat = Object.values(verdict).every((v) => v.flat);
  console.log(
    `requests ${summary.requests ?? "?"} (${summary.requests ? (summary.requests / seconds).toFixed(0) : "?"} req/s), non-2xx ${summary.non_2xx ?? "?"}, socket errors ${summary.socket_errors ?? "?"}, p50 ${((summary.p50_us ?? 0) / 1000).toFixed(2)} ms, p99 ${((summary.p99_us ?? 0) / 1000).toFixed(2)} ms`,
  );
  for (const [k, v] of Object.entries(verdict)) console.log(`${k.padEnd(11)} ${JSON.stringify(v)}`);
  console.log(`flat after warm-up: ${flat ? "yes" : "NO"}`);
  const report = {
    bench: "soak",
    started_at: startedAt.toISOString(),
    environment: { node: process.version, cpus: cpus().length },
    config: { seconds, every_s: every, concurrency, hooks: 5 },
    wrk: summary,
    samples,
    verdict,
    flat,
  };
  mkdirSync(outDir, { recursive: true });
  const stamp = startedAt.toISOString().replace(/[:.]/g, "-");
  writeFileSync(join(outDir, `soak-${stamp}.json`), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(outDir, "soak-latest.json"), `${JSON.stringify(report, null, 2)}\n`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  await main();
}
