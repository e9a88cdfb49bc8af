/**
 * CPU per chain of two builds, measured in one sitting with their rounds interleaved (issue 25
 * deliver 6: "before and after, in one run"). A busy machine drifts by tens of percent over minutes;
 * alternating the builds round by round (and which goes first) spreads that drift over both, and the
 * medians and their ratio are what is compared. Each round runs, in each build, as a fresh process:
 *
 *   gemini-run-5     dist/bench/profile-cpu.js row run-5: a 5-hook gemini-cli BeforeTool chain, every
 *                    hook's matcher selects (5 hooks run in the sandbox), one event at a time, audit on
 *   gemini-select-0  the same file's row select-0: a read_file call no matcher selects (no hook runs)
 *   gemini-c64       dist/bench/profile-chain.js MODE=gemini: the 5-hook chain at concurrency 64, no audit
 *   vcp-modify-5     dist/bench/profile-chain.js MODE=vcp: a 5-hook VCP modify chain at concurrency 64
 *   vcp-modify-20    the same with 20 hooks
 *   route-1          dist/bench/route-cpu.js (this build's file, `--build` each checkout): the 5-hook Gemini
 *                    chain as agents send it, POST /v1/profiles/gemini-cli/events/BeforeTool, one request
 *                    at a time, audit on; CPU of the server process and the sandbox host per request
 *   route-32         the same, 32 requests at a time, no audit log
 *
 * CPU is this machine's CPU time (main process + sandbox host), not wall time. Usage (both builds
 * built; a build older than bench/profile-cpu.ts gets it and bench/lib/gemini-guard.ts copied into its
 * dist/bench first, as dist/bench/profile-cpu.js and dist/bench/lib/gemini-guard.js):
 *
 *   node --no-node-snapshot dist/bench/compare-builds.js --base /path/to/old/checkout --new . [--rounds 5]
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

const argv = process.argv.slice(2);
const arg = (name: string, fallback?: string): string => {
  const at = argv.indexOf(`--${name}`);
  const value = at >= 0 ? argv[at + 1] : fallback;
  if (value === undefined) throw new Error(`--${name} is required (see the header of bench/compare-builds.ts)`);
  return value;
};
// Each case runs in a child of this Node (process.execPath): the runtime needs Node 24 or later.
const nodeMajor = Number(process.versions.node.split(".")[0]);
if (nodeMajor < 24) {
  process.stderr.write(`compare-builds runs each build's benches with this Node (${process.version}), and vcp-hooks needs Node 24 or later: run it as node_modules/.bin/node --no-node-snapshot dist/bench/compare-builds.js …\n`);
  process.exit(2);
}
const builds = { base: resolve(arg("base")), new: resolve(arg("new", ".")) };
const ROUNDS = Number(arg("rounds", "5"));
const EVENTS = Number(arg("events", "1500"));
const CHAINS = Number(arg("chains", "3000"));

/** This build's route harness: it loads the build named by --build (route-cpu.ts). */
const ROUTE_CPU = join(builds.new, "dist", "bench", "route-cpu.js");
if (!existsSync(ROUTE_CPU)) throw new Error(`${ROUTE_CPU} is missing: build this checkout (npm run build)`);
for (const [name, dir] of Object.entries(builds)) {
  for (const file of ["profile-cpu.js", "lib/gemini-guard.js", "profile-chain.js"]) {
    if (!existsSync(join(dir, "dist", "bench", file))) throw new Error(`${name} build ${dir} has no dist/bench/${file}: build it (npm run build), or copy this build's dist/bench/profile-cpu.js and dist/bench/lib/gemini-guard.js there`);
  }
}

type Case = "gemini-run-5" | "gemini-select-0" | "gemini-c64" | "vcp-modify-5" | "vcp-modify-20" | "route-1" | "route-32";
const samples: Record<"base" | "new", Record<Case, number[]>> = {
  base: { "gemini-run-5": [], "gemini-select-0": [], "gemini-c64": [], "vcp-modify-5": [], "vcp-modify-20": [], "route-1": [], "route-32": [] },
  new: { "gemini-run-5": [], "gemini-select-0": [], "gemini-c64": [], "vcp-modify-5": [], "vcp-modify-20": [], "route-1": [], "route-32": [] },
};

function node(dir: string, args: string[], env: Record<string, string> = {}): string {
  return execFileSync(process.execPath, ["--no-node-snapshot", ...args], { cwd: dir, env: { ...process.env, ...env }, encoding: "utf8", maxBuffer: 1 << 24 });
}

/** `CPU µs per chain: total 345 = …` of profile-chain.js. */
function chainTotal(out: string): number {
  const m = /CPU µs per chain: total (\d+)/.exec(out);
  if (m === null) throw new Error(`profile-chain.js printed no CPU line:\n${out}`);
  return Number(m[1]);
}

function round(build: "base" | "new"): void {
  const dir = builds[build];
  for (const line of node(dir, ["dist/bench/profile-cpu.js", "--events", String(EVENTS), "--rounds", "1"]).trim().split("\n")) {
    const row = JSON.parse(line) as { row: string; total_us: number };
    samples[build][row.row === "run-5" ? "gemini-run-5" : "gemini-select-0"].push(row.total_us);
  }
  samples[build]["gemini-c64"].push(chainTotal(node(dir, ["dist/bench/profile-chain.js", String(CHAINS), "5"], { MODE: "gemini" })));
  samples[build]["vcp-modify-5"].push(chainTotal(node(dir, ["dist/bench/profile-chain.js", String(CHAINS), "5"], { MODE: "vcp" })));
  // 20 hooks take about four times as long per chain: a quarter of the chains.
  samples[build]["vcp-modify-20"].push(chainTotal(node(dir, ["dist/bench/profile-chain.js", String(Math.max(1, Math.round(CHAINS / 4))), "20"], { MODE: "vcp" })));
  // The route harness is this build's, run against each checkout's dist (route-cpu.ts --build).
  const route = (args: string[]): number => (JSON.parse(node(builds.new, [ROUTE_CPU, "--build", dir, ...args]).trim().split("\n").at(-1)!) as { total_us: number }).total_us;
  samples[build]["route-1"].push(route(["--requests", String(Math.round(EVENTS / 2))]));
  samples[build]["route-32"].push(route(["--requests", String(CHAINS), "--concurrency", "32", "--no-audit"]));
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

for (let r = 0; r < ROUNDS; r++) {
  // Alternate which build goes first, so neither always gets the quieter half of a round.
  const order: Array<"base" | "new"> = r % 2 === 0 ? ["base", "new"] : ["new", "base"];
  for (const build of order) round(build);
  process.stderr.write(`round ${r + 1}/${ROUNDS} done\n`);
}
console.log("| case | base µs/chain (median) | new µs/chain (median) | new / base | samples base | samples new |");
console.log("|---|---:|---:|---:|---|---|");
for (const c of Object.keys(samples.base) as Case[]) {
  const b = median(samples.base[c]);
  const n = median(samples.new[c]);
  console.log(`| ${c} | ${b.toFixed(0)} | ${n.toFixed(0)} | ${(n / b).toFixed(2)} | ${samples.base[c].join(", ")} | ${samples.new[c].join(", ")} |`);
}
