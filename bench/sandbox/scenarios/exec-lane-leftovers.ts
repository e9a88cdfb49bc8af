/**
 * The command lane (PROFILES §6) as a deployment runs it: `vcp-hooks serve` started by a supervisor that
 * leaks two descriptors into it (a log on fd 40, a credentials file on fd 300 — Node itself covers only
 * fds 0–15), a signed system-trust exec bundle pushed, and Claude Code PreToolUse events fired over
 * HTTP. One script lists the descriptors it holds and leaves a background child, a `setsid` child and
 * a double-forked `setsid` grandchild behind; another starts the same kind of tree plus a `setsid env -i`
 * child and runs past its timeout. Contained: no script holds the server's files; every process either
 * script started is gone once the hook has answered; the server still serves the guard afterwards.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { createArtifact, serializeArtifact, signArtifact } from "../../../src/bundle/artifact.js";
import { generateKeyPair } from "../../../src/bundle/keys.js";
import { findRepoRoot } from "../corpus.js";
import { runCli } from "../cli-run.js";
import { send } from "../http-tenants.js";
import { Checks, type Scenario } from "../scenario.js";

const SERVE = join(findRepoRoot(), "dist", "src", "cli", "serve.js");
const TOKENS = { operator: "scn-exec-operator-5e1f0a", client: "scn-exec-client-0c93d7" } as const;
/** The descriptors the supervisor leaks into the server: above the 0–15 Node marks close-on-exec itself. */
const LEAKED = { log: 40, credentials: 300 } as const;

const sha256 = (data: string | Buffer): string => createHash("sha256").update(data).digest("hex");

const SCRIPTS = {
  // Lists its descriptors, then leaves three processes behind (output redirected: no pipe keeps the run open).
  "probe.sh": `#!/bin/sh
dir="$1"
for f in /proc/$$/fd/*; do printf '%s %s\\n' "\${f##*/}" "$(readlink "$f")"; done > "$dir/fds.txt"
sleep 300 >/dev/null 2>&1 &
echo $! > "$dir/probe-bg.pid"
setsid sleep 300 >/dev/null 2>&1 &
echo $! > "$dir/probe-setsid.pid"
( setsid sleep 300 >/dev/null 2>&1 & echo $! > "$dir/probe-double.pid" ) &
wait $!
exit 0
`,
  // The same tree plus a child with an emptied environment, then past its timeout.
  "slow.sh": `#!/bin/sh
dir="$1"
sleep 300 >/dev/null 2>&1 &
echo $! > "$dir/slow-bg.pid"
setsid sleep 300 >/dev/null 2>&1 &
echo $! > "$dir/slow-setsid.pid"
setsid env -i sleep 300 >/dev/null 2>&1 &
echo $! > "$dir/slow-bare.pid"
sleep 300
`,
  "guard.sh": `#!/bin/sh
case "$(cat)" in *'rm -rf'*) printf 'rm -rf is not allowed' >&2; exit 2 ;; esac
exit 0
`,
} as const;

const PIDS = ["probe-bg", "probe-setsid", "probe-double", "slow-bg", "slow-setsid", "slow-bare"] as const;

/** Running (a zombie waiting for its reaper is dead). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

const preToolUse = (tool: string, input: Record<string, unknown>) => ({
  session_id: "exec-leftovers", transcript_path: "/tmp/t.jsonl", cwd: "/tmp", permission_mode: "default",
  hook_event_name: "PreToolUse", tool_name: tool, tool_input: input, tool_use_id: `toolu_${tool}`,
});

export const scenario: Scenario = {
  id: "exec-lane-leftovers",
  category: "profile-boundary",
  title: "exec hook scripts under a server holding leaked descriptors leave background, setsid and double-forked children behind, on answer and on timeout",
  expected: "no script holds a descriptor the server inherited; every process a script started is gone once its hook answered; the guard still blocks afterwards",
  async run() {
    const checks = new Checks();
    const root = mkdtempSync(join(tmpdir(), "vcp-exec-leftovers-"));
    const observed: string[] = [];
    let server: ChildProcess | undefined;
    let servedAfter = false;
    const pids = new Map<string, number>();
    try {
      const scripts = Object.fromEntries(
        Object.entries(SCRIPTS).map(([name, text]) => {
          const file = join(root, name);
          writeFileSync(file, text, { mode: 0o755 });
          return [name, { file, sha256: sha256(text) }];
        }),
      );
      const hook = (name: string, script: keyof typeof SCRIPTS, matcher: string, timeout_ms: number, args: string[] = []) => ({
        name, event: "PreToolUse", matcher, timeout_ms, exec: { command: scripts[script]!.file, sha256: scripts[script]!.sha256, ...(args.length > 0 ? { args } : {}) },
      });
      const key = generateKeyPair();
      writeFileSync(join(root, "sys.pub.pem"), key.publicKeyPem);
      const artifact = signArtifact(
        createArtifact({
          bundle: "leftovers", version: "1.0.0", profile: "claude-code", trust: "system",
          hooks: [hook("probe", "probe.sh", "Read", 10_000, [root]), hook("slow", "slow.sh", "Glob", 1000, [root]), hook("guard", "guard.sh", "Bash", 10_000)],
        }, ""),
        key.privateKeyPem, "sys",
      );
      writeFileSync(join(root, "leftovers.vcpb"), serializeArtifact(artifact));
      writeFileSync(join(root, "vcp.yaml"), stringify({
        listen: { host: "127.0.0.1", port: 0 },
        data_dir: "./data",
        auth: [{ id: "ops", role: "operator", token_sha256: sha256(TOKENS.operator) }, { id: "app", role: "client", token_sha256: sha256(TOKENS.client) }],
        keyring: { keys: [{ key_id: "sys", public_key_file: "sys.pub.pem", max_trust: "system" }] },
        require_signatures: true,
        profiles: { "claude-code": { strict: false } },
        pool: { threads: 1 },
        exec: { enabled: true },
      }));

      // The supervisor's leak: two files the server never asked for, open without close-on-exec.
      writeFileSync(join(root, "credentials"), "supervisor-credentials\n");
      const logFd = openSync(join(root, "supervisor.log"), "a");
      const credentialsFd = openSync(join(root, "credentials"), "r");
      const stdio: Array<"ignore" | "pipe" | number> = ["ignore", "pipe", "pipe"];
      for (const [at, fd] of [[LEAKED.log, logFd], [LEAKED.credentials, credentialsFd]] as const) {
        while (stdio.length < at) stdio.push("ignore");
        stdio[at] = fd;
      }
      let out = "";
      try {
        server = spawn(process.execPath, ["--no-node-snapshot", SERVE, "--config", join(root, "vcp.yaml")], { cwd: root, stdio, env: { ...process.env, VCP_OPERATOR_TOKEN: "", VCP_CLIENT_TOKEN: "" } });
      } finally {
        closeSync(logFd);
        closeSync(credentialsFd);
      }
      server.stdout!.on("data", (d: Buffer) => (out += d.toString("utf8")));
      server.stderr!.on("data", (d: Buffer) => (out += d.toString("utf8")));
      let url: string | undefined;
      for (const started = Date.now(); url === undefined && Date.now() - started < 60_000 && server.exitCode === null; ) {
        url = /serving at (http:\/\/[^\s"]+)/.exec(out)?.[1];
        if (url === undefined) await new Promise((r) => setTimeout(r, 50));
      }
      if (url === undefined) throw new Error(`serve did not start:\n${out.slice(-2000)}`);
      const pushed = await runCli(["push", join(root, "leftovers.vcpb"), "--server", url, "--token", TOKENS.operator], { cwd: root });
      if (pushed.code !== 0) throw new Error(`push failed (${pushed.code}): ${pushed.stderr.toString("utf8")}${pushed.stdout.toString("utf8")}`);

      const fire = (tool: string, input: Record<string, unknown>) => send(url, "POST", "/v1/profiles/claude-code/events/PreToolUse", TOKENS.client, preToolUse(tool, input));
      const resultOf = (body: unknown, name: string) => (body as { result?: { hook_results?: Array<Record<string, unknown>> } }).result?.hook_results?.find((h) => h["hook"] === name);
      const probe = await fire("Read", { file_path: "/etc/hostname" });
      const probeRun = resultOf(probe.body, "probe");
      checks.check(probe.status === 200 && probeRun?.["outcome"] === "ok", `the probe hook answered ${probe.status} ${JSON.stringify(probeRun ?? probe.body).slice(0, 200)}`);
      const slow = await fire("Glob", { pattern: "**" });
      const slowRun = resultOf(slow.body, "slow");
      checks.check(slow.status === 200 && slowRun?.["outcome"] === "timeout", `the slow hook answered ${slow.status} ${JSON.stringify(slowRun ?? slow.body).slice(0, 200)}`);

      const fds = existsSync(join(root, "fds.txt")) ? readFileSync(join(root, "fds.txt"), "utf8").trim().split("\n") : [];
      checks.check(fds.length > 0, "the probe did not list its descriptors");
      const reached = fds.filter((line) => line.includes("supervisor.log") || line.includes("credentials"));
      checks.check(reached.length === 0, `a script held descriptors the server inherited: ${reached.join("; ")}`);
      observed.push(`probe held fds ${fds.map((l) => l.split(" ")[0]).join(",")}`);

      for (const name of PIDS) {
        const file = join(root, `${name}.pid`);
        if (existsSync(file)) pids.set(name, Number(readFileSync(file, "utf8").trim()));
        else checks.check(false, `${name}.pid was not written`);
      }
      // A SIGKILL is delivered asynchronously: give the kernel a few seconds before calling one a survivor.
      for (let i = 0; i < 50 && [...pids.values()].some(alive); i++) await new Promise((r) => setTimeout(r, 100));
      const left = [...pids].filter(([, pid]) => alive(pid)).map(([name]) => name);
      checks.check(left.length === 0, `still running after the hooks answered: ${left.join(", ")}`);
      observed.push(left.length === 0 ? `all ${pids.size} left-behind processes gone` : `${left.length} of ${pids.size} survived (${left.join(", ")})`);

      const guarded = await fire("Bash", { command: "rm -rf ~" });
      const decision = (guarded.body as { native?: { hookSpecificOutput?: { permissionDecision?: string } } }).native?.hookSpecificOutput?.permissionDecision;
      servedAfter = guarded.status === 200 && decision === "deny";
    } finally {
      // A failed run must not leave its sleeps behind for the rest of the suite.
      for (const pid of pids.values()) {
        try {
          if (alive(pid)) process.kill(pid, "SIGKILL");
        } catch {
          // Gone.
        }
      }
      if (server !== undefined && server.exitCode === null) {
        const exited = new Promise((r) => server!.once("exit", r));
        server.kill("SIGTERM");
        await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
        if (server.exitCode === null) server.kill("SIGKILL");
      }
      rmSync(root, { recursive: true, force: true });
    }
    return checks.outcome(observed.join("; "), servedAfter);
  },
};
