// `npm run test:agents` (issue 26 item 4): the real agent CLIs pinned in test/agents/agents.ts, with
// vcp-hooks as their hooks, each offline in its own loopback-only network namespace.
//
//   1. install each pinned CLI from the npm registry into
//      ${VCP_AGENTS_CACHE:-/var/cache/vcp-hooks-agents}/<id>@<version>  (once; kept between runs,
//      outside the clone; the only step that uses the network)
//   2. per agent: `unshare --net`, bring `lo` up, `vitest run --config vitest.agents.config.ts` with
//      VCP_AGENT=<id> (vcp-hooks serve, the fake model server and the CLI all live in that namespace)
//   3. print each agent's time; exit 1 if any agent failed
//
// Usage: node scripts/test-agents.mjs [agent-id …] [-- vitest arguments]
// Where no network namespace can be made (no root and no user namespaces, no unshare or ip), the suite
// is skipped with the reason, exit 0 — except under CI=true, where that is a failure.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
// Node strips the types of agents.ts (it has no relative runtime imports for this reason).
const { AGENTS, agentsCache, installPrefix } = await import(join(root, "test/agents/agents.ts"));

const dash = process.argv.indexOf("--");
const ids = process.argv.slice(2, dash === -1 ? undefined : dash);
const vitestArgs = dash === -1 ? [] : process.argv.slice(dash + 1);
const unknown = ids.filter((id) => !AGENTS.some((a) => a.id === id));
if (unknown.length > 0) {
  console.error(`test:agents: unknown agent ${unknown.join(", ")}; known: ${AGENTS.map((a) => a.id).join(", ")}`);
  process.exit(2);
}
const agents = AGENTS.filter((a) => ids.length === 0 || ids.includes(a.id));
const ci = process.env.CI === "true";

/** Stop here: a failure, or (outside CI) a skip with its reason. */
function cannot(why) {
  if (ci) {
    console.error(`test:agents: FAILED: ${why}`);
    process.exit(1);
  }
  console.error(`test:agents: SKIPPED: ${why}`);
  process.exit(0);
}

// ── 1. the network namespace: can we make one? ──────────────────────────────────────────────────
/** unshare arguments that give a loopback-only namespace in which `ip link set lo up` works, or the reason there are none. */
function namespaceArgs() {
  if (process.platform !== "linux") return { why: `network namespaces are Linux-only (this is ${process.platform})` };
  const tries = process.getuid?.() === 0 ? [["--net"]] : [["--user", "--map-root-user", "--net"]];
  let why = "";
  for (const args of tries) {
    const r = spawnSync("unshare", [...args, "--", "ip", "link", "set", "lo", "up"], { encoding: "utf8" });
    if (r.status === 0) return { args };
    why = r.error ? `unshare: ${r.error.message}` : `unshare ${args.join(" ")} -- ip link set lo up: exit ${r.status}: ${(r.stderr || "").trim()}`;
  }
  return { why: `cannot make a loopback-only network namespace (${why}); run as root, or allow unprivileged user namespaces, and install util-linux and iproute2` };
}
const ns = namespaceArgs();
if (!ns.args) cannot(ns.why);

// ── 2. the pinned CLIs, installed once ──────────────────────────────────────────────────────────
const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ["npm"];

/** Install `agent` into its prefix unless a complete install (the `.installed` marker) is there. */
function ensureInstalled(agent) {
  const prefix = installPrefix(agent);
  const marker = join(prefix, ".installed");
  const want = `${agent.package}@${agent.version}`;
  if (existsSync(marker) && readFileSync(marker, "utf8").trim() === want) {
    console.log(`test:agents: ${want} cached in ${prefix}`);
    return;
  }
  // Into a private directory first, renamed into place when complete: a run that dies half-way leaves
  // no prefix that looks installed.
  const partial = `${prefix}.partial-${process.pid}`;
  try {
    mkdirSync(partial, { recursive: true });
  } catch (err) {
    cannot(`cannot write the agents cache ${agentsCache()} (${err.code ?? err.message}): set VCP_AGENTS_CACHE to a writable directory outside the clone`);
  }
  const started = Date.now();
  console.log(`test:agents: installing ${want} into ${prefix} …`);
  const r = spawnSync(npm[0], [...npm.slice(1), "install", "--prefix", partial, "--no-audit", "--no-fund", "--no-save", "--loglevel", "error", want], { stdio: "inherit" });
  if (r.status !== 0) {
    rmSync(partial, { recursive: true, force: true });
    cannot(`npm install ${want} failed (exit ${r.status}${r.error ? `, ${r.error.message}` : ""}); the registry must be reachable once, then ${agentsCache()} keeps it`);
  }
  rmSync(prefix, { recursive: true, force: true }); // an incomplete earlier install (no marker)
  renameSync(partial, prefix);
  const [exe, ...pre] = agent.command(prefix, process.execPath);
  const version = spawnSync(exe, [...pre, "--version"], { encoding: "utf8", timeout: 120_000, env: { PATH: process.env.PATH, HOME: prefix } });
  if (version.status !== 0 || !version.stdout.includes(agent.version)) {
    cannot(`${want} installed but \`${[exe, ...pre].join(" ")} --version\` answered exit ${version.status}: ${(version.stdout + version.stderr).trim().slice(0, 500)}`);
  }
  writeFileSync(marker, `${want}\n`);
  console.log(`test:agents: ${want} installed in ${((Date.now() - started) / 1000).toFixed(1)} s (${version.stdout.trim()})`);
}
for (const agent of agents) ensureInstalled(agent);

// ── 3. one namespace per agent ──────────────────────────────────────────────────────────────────
const vitest = join(root, "node_modules/vitest/vitest.mjs");
const results = [];
for (const agent of agents) {
  const started = performance.now();
  console.log(`\ntest:agents: ${agent.id} ${agent.version} in its own network namespace …`);
  const r = spawnSync(
    "unshare",
    [...ns.args, "--", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", process.execPath, vitest, "run", "--config", "vitest.agents.config.ts", ...vitestArgs],
    { cwd: root, stdio: "inherit", env: { ...process.env, VCP_AGENT: agent.id } },
  );
  const seconds = (performance.now() - started) / 1000;
  results.push({ agent, ok: r.status === 0, seconds, status: r.status });
  console.log(`test:agents: ${agent.id} ${agent.version}: ${r.status === 0 ? "passed" : `FAILED (exit ${r.status})`} in ${seconds.toFixed(1)} s`);
}

console.log("\ntest:agents summary");
for (const { agent, ok, seconds } of results) console.log(`  ${agent.id.padEnd(14)} ${agent.version.padEnd(10)} ${ok ? "passed" : "FAILED"}  ${seconds.toFixed(1)} s`);
console.log(`  total ${results.reduce((s, r) => s + r.seconds, 0).toFixed(1)} s`);
process.exit(results.every((r) => r.ok) ? 0 : 1);
