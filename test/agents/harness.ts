/**
 * The pieces of one real-agent run (issue 26 item 4): the network check, a real `vcp-hooks serve`
 * process, the logging stand-in for `vcp-hooks` on the agent's PATH, and the agent CLI itself. Every
 * process started here is stopped by its PID (the agent by its own process group); every server binds
 * 127.0.0.1 inside the run's network namespace.
 *
 *   agent CLI ─hook cmd: `vcp-hooks hook <Event> --dialect d`─► <run>/bin/vcp-hooks (logs stdin, stdout,
 *       │                                                        stderr, exit code) ─► bin/vcp-hooks
 *       └─model API─► fake-model.ts (in the test process)              └─POST profile route─► serve
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { stringify } from "yaml";
import type { Agent, HooksBlock, RunDirs } from "./agents.js";
import { cli, type CliRun } from "../cli/helpers.js";

export const REPO = resolve(".");
const VCP_BIN = resolve("bin/vcp-hooks");
const SERVE = resolve("dist/src/cli/serve.js");

/** The network interfaces this process sees (/proc/net/dev is per network namespace). */
export function interfaces(): string[] {
  const text = readFileSync("/proc/net/dev", "utf8");
  return text
    .split("\n")
    .slice(2)
    .map((l) => l.split(":")[0]!.trim())
    .filter((n) => n !== "");
}

/** A loopback-only namespace: nothing but `lo`. */
export function isolated(): boolean {
  try {
    const names = interfaces();
    return names.length > 0 && names.every((n) => n === "lo");
  } catch {
    return false;
  }
}

export const token = (prefix: string) => `${prefix}-${randomBytes(18).toString("hex")}`;

/** `vcp-hooks <args>` as a user runs it (the built CLI); throws with its output unless it exits 0. */
export async function vcp(args: string[], cwd: string): Promise<CliRun> {
  const r = await cli(args, { cwd, timeoutMs: 120_000 });
  if (r.code !== 0) throw new Error(`vcp-hooks ${args.join(" ")} exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r;
}

// ── vcp-hooks serve ───────────────────────────────────────────────────────────────────────────────

export interface Serve {
  readonly url: string;
  readonly pid: number;
  /** SIGTERM (drain), SIGKILL after 15 s; resolves once the process has exited. */
  stop(): Promise<void>;
}

/** vcp.yaml for one server of the run: on 127.0.0.1:8787 (the adapter's default), one key up to system trust. */
export function writeServeConfig(dir: string, options: { operator: string; client: string; profile: string; exec: boolean }): string {
  const sha = (t: string) => createHash("sha256").update(t).digest("hex");
  const file = join(dir, "vcp.yaml");
  writeFileSync(
    file,
    stringify({
      listen: { host: "127.0.0.1", port: 8787 },
      data_dir: "./data",
      auth: [
        { id: "ops", role: "operator", token_sha256: sha(options.operator) },
        { id: "agent", role: "client", token_sha256: sha(options.client) },
      ],
      keyring: { keys: [{ key_id: "ops", public_key_file: "../keys/ops.pub.pem", max_trust: "system" }] },
      require_signatures: true,
      profiles: { [options.profile]: { strict: false } },
      pool: { threads: 1 },
      // The command lane, for the migrated user hook (`vcp-hooks import` writes the same in profile.yaml).
      exec: options.exec ? { enabled: true, shell: false } : { enabled: false },
    }),
  );
  return file;
}

/** Start `vcp-hooks serve --config <file>` and wait for "serving at". */
export async function startServe(config: string): Promise<Serve> {
  const child = spawn(process.execPath, ["--no-node-snapshot", SERVE, "--config", config], {
    cwd: dirname(config),
    env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HOME: dirname(config), LANG: "C.UTF-8" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  for (const start = Date.now(); Date.now() - start < 120_000; ) {
    const m = /serving at (http:\/\/[^\s"]+)/.exec(out);
    if (m) return { url: m[1]!.replace(/\/$/, ""), pid: child.pid!, stop: () => stopChild(child, exited) };
    if (child.exitCode !== null) throw new Error(`vcp-hooks serve exited ${child.exitCode}:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  await stopChild(child, exited);
  throw new Error(`vcp-hooks serve did not start in 120 s:\n${out}`);
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const killer = setTimeout(() => child.kill("SIGKILL"), 15_000);
  await exited;
  clearTimeout(killer);
}

// ── the logging stand-in for `vcp-hooks` ─────────────────────────────────────────────────────────

export interface HookCall {
  readonly seq: number;
  readonly event: string;
  readonly args: string[];
  readonly stdin: string;
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number;
}

/**
 * `<binDir>/vcp-hooks`: records each call (arguments, stdin, stdout, stderr, exit code) under `logDir`,
 * then answers exactly what the real bin/vcp-hooks answered. So the agent's settings carry the README's
 * own lines (`vcp-hooks hook PreToolUse --dialect claude`) and the test still sees every call.
 */
export function writeHookRecorder(binDir: string, logDir: string): void {
  mkdirSync(binDir, { recursive: true });
  mkdirSync(logDir, { recursive: true });
  const file = join(binDir, "vcp-hooks");
  writeFileSync(
    file,
    `#!/bin/sh
# Test stand-in: logs one vcp-hooks call, then answers exactly as bin/vcp-hooks did.
call=$(mktemp -d ${shq(logDir)}/call-$(date +%s%N)-XXXXXX)
printf '%s\\n' "$@" > "$call/args"
cat > "$call/stdin"
${shq(VCP_BIN)} "$@" < "$call/stdin" > "$call/stdout" 2> "$call/stderr"
rc=$?
echo "$rc" > "$call/rc"
cat "$call/stdout"
cat "$call/stderr" >&2
exit "$rc"
`,
  );
  chmodSync(file, 0o755);
}

/** The calls the recorder logged, in the order they started. */
export function readHookCalls(logDir: string): HookCall[] {
  if (!existsSync(logDir)) return [];
  return readdirSync(logDir)
    .filter((d) => d.startsWith("call-"))
    .sort((a, b) => Number(a.split("-")[1]) - Number(b.split("-")[1]))
    .map((d, seq) => {
      const read = (f: string) => (existsSync(join(logDir, d, f)) ? readFileSync(join(logDir, d, f), "utf8") : "");
      const args = read("args").split("\n").filter((a) => a !== "");
      const rc = read("rc").trim();
      return { seq, event: args[1] ?? "", args, stdin: read("stdin"), stdout: read("stdout"), stderr: read("stderr"), exitCode: rc === "" ? -1 : Number(rc) };
    });
}

/** Single-quote for sh. */
export const shq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

// ── the agent ─────────────────────────────────────────────────────────────────────────────────────

export interface AgentRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
  /** Every `vcp-hooks` call of the run (through the recorder). */
  readonly calls: HookCall[];
  readonly dirs: RunDirs;
}

export interface RunSpec {
  readonly agent: Agent;
  /** The installed CLI's prefix (agents.ts installPrefix). */
  readonly prefix: string;
  readonly dirs: RunDirs;
  /** The `hooks` of the agent's user settings. */
  readonly hooks: HooksBlock;
  readonly modelUrl: string;
  /** Extra environment (the client token, XDG_CACHE_HOME for the adapter's guard file). */
  readonly env: Readonly<Record<string, string>>;
  readonly prompt?: string;
  readonly timeoutMs?: number;
}

/** Directories of one run under `root/<name>`; `project` may be shared with another run. */
export function runDirs(root: string, name: string, project?: string): RunDirs & { readonly bin: string; readonly log: string } {
  const base = join(root, name);
  const dirs = { home: join(base, "home"), project: project ?? join(base, "project"), outside: [join(base, "outside")], bin: join(base, "bin"), log: join(base, "hook-calls") };
  for (const d of [dirs.home, dirs.project, ...dirs.outside]) mkdirSync(d, { recursive: true });
  writeHookRecorder(dirs.bin, dirs.log);
  return dirs;
}

/**
 * Run the agent once, non-interactively, with its user settings holding `hooks`. Its environment is
 * built here, not inherited: PATH (the recorder first), HOME, the agent's model knobs and `env`.
 */
export async function runAgent(spec: RunSpec & { dirs: ReturnType<typeof runDirs> }): Promise<AgentRun> {
  const { agent, dirs } = spec;
  const settings = agent.settings(spec.hooks);
  mkdirSync(dirname(join(dirs.home, settings.path)), { recursive: true });
  writeFileSync(join(dirs.home, settings.path), `${JSON.stringify(settings.json, null, 2)}\n`);
  const env = {
    PATH: [dirs.bin, dirname(process.execPath), "/usr/local/bin", "/usr/bin", "/bin"].join(":"),
    HOME: dirs.home,
    LANG: "C.UTF-8",
    TERM: "dumb",
    ...agent.env(spec.modelUrl, spec.prefix),
    ...spec.env,
  };
  const [exe, ...pre] = agent.command(spec.prefix, process.execPath);
  const started = performance.now();
  // Its own process group, so a timeout ends the agent and whatever it started, by that group's id.
  const child = spawn(exe!, [...pre, ...agent.args(spec.prompt ?? "Run the command I need.", dirs, spec.modelUrl)], { cwd: dirs.project, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d) => (stdout += d));
  child.stderr!.on("data", (d) => (stderr += d));
  const timer = setTimeout(() => {
    stderr += `\n[test] killed after ${spec.timeoutMs ?? 150_000} ms`;
    killGroup(child.pid!);
  }, spec.timeoutMs ?? 150_000);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((done, fail) => {
    child.once("error", fail);
    child.once("close", (c, s) => done([c, s]));
  });
  clearTimeout(timer);
  killGroup(child.pid!); // anything the agent left running in its group
  return { code, signal, stdout, stderr, ms: performance.now() - started, calls: readHookCalls(dirs.log), dirs };
}

function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // already gone
  }
}

/** A short account of a run for assertion messages. */
export function describeRun(run: AgentRun): string {
  const calls = run.calls.map((c) => `  ${c.event} → exit ${c.exitCode}${c.stderr ? ` stderr: ${c.stderr.trim().slice(0, 300)}` : ""}`).join("\n");
  return `agent exit ${run.code}${run.signal ? ` (${run.signal})` : ""} in ${Math.round(run.ms)} ms\nstdout: ${run.stdout.slice(0, 2000)}\nstderr: ${run.stderr.slice(-2000)}\nhook calls:\n${calls}`;
}
