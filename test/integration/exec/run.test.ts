// The command lane (PROFILES §6) with real scripts: pinning, process groups, timeouts, orphans, caps,
// environment and redaction. No timed assertions beyond generous upper bounds that a hang would break.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, closeSync, constants as fsConstants, copyFileSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, truncateSync, writeFileSync, renameSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { runCommandHook, type CommandSpec } from "../../../src/pool/exec/run.js";
import { runExecHook } from "../../../src/pool/exec/invoker.js";
import { execRecordOf } from "../../../src/chain/contract.js";
import { VcpError } from "../../../src/errors.js";

const FIXTURES = resolve("test/integration/exec/fixtures");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const sha = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

function spec(name: string, over: Partial<CommandSpec> = {}): CommandSpec {
  const command = join(FIXTURES, name);
  return { command, sha256: sha(command), env_allow: ["PATH", "HOME", "LANG"], max_output_bytes: 65536, timeout_ms: 10_000, term_grace_ms: 1000, ...over };
}

async function refusal(p: Promise<unknown>): Promise<VcpError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(VcpError);
  return err as VcpError;
}

/** Running (a zombie left for a container's pid 1 to reap counts as ended). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

async function waitGone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100 && alive(pid); i++) await new Promise((s) => setTimeout(s, 100));
  return !alive(pid);
}

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), "vcp-exec-"));
  dirs.push(dir);
  return dir;
}

/** The pids a fixture wrote into `dir` (`<name>.pid`), by name. */
function pidsIn(dir: string, names: readonly string[]): Record<string, number> {
  return Object.fromEntries(names.map((n) => [n, Number(readFileSync(join(dir, `${n}.pid`), "utf8").trim())]));
}

/** Which of the named pids are still running a few seconds after the hook answered (none may be). */
async function survivors(pids: Record<string, number>): Promise<string[]> {
  // Poll rather than assert at once: a SIGKILL is delivered asynchronously. A test that fails here
  // leaves the `sleep 300`s behind; end them so they do not outlive the test run.
  const left: string[] = [];
  for (const [name, pid] of Object.entries(pids)) {
    if (await waitGone(pid)) continue;
    left.push(name);
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  return left;
}

describe("runCommandHook", () => {
  test("stdin is written once and closed; stdout, stderr and the exit code come back; sandboxed: false", async () => {
    const input = JSON.stringify({ tool_name: "run_shell_command", tool_input: { command: "ls" } });
    const r = await runCommandHook(spec("echo-stdin.sh"), input);
    expect(r).toMatchObject({ exitCode: 0, signal: null, stdout: input, stderr: `read ${input.length} bytes`, timedOut: false, truncated: false, sandboxed: false });
    expect(r.sha256).toBe(sha(join(FIXTURES, "echo-stdin.sh")));
  });

  test("exit codes and texts are reported as the script left them", async () => {
    const r = await runCommandHook(spec("exit-code.sh", { args: ["2", "", "rm -rf is not allowed"] }), "{}");
    expect(r).toMatchObject({ exitCode: 2, signal: null, stdout: "", stderr: "rm -rf is not allowed" });
  });

  test("a script that never reads stdin does not fail the run (EPIPE ignored)", async () => {
    const r = await runCommandHook(spec("no-read.sh"), "x".repeat(1024 * 1024));
    expect(r).toMatchObject({ exitCode: 0, stdout: "ok\n" });
  });

  test("a changed script is refused with EXEC_HASH_MISMATCH and not run", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vcp-exec-"));
    dirs.push(dir);
    const file = join(dir, "hook.sh");
    const marker = join(dir, "ran");
    writeFileSync(file, `#!/bin/sh\necho first\n`, { mode: 0o755 });
    const pinned = sha(file);
    writeFileSync(file, `#!/bin/sh\ntouch ${marker}\necho swapped\n`, { mode: 0o755 });
    const err = await refusal(runCommandHook({ ...spec("echo-stdin.sh"), command: file, sha256: pinned }, "{}"));
    expect(err.code).toBe("EXEC_HASH_MISMATCH");
    expect(err.message).toContain(file);
    expect(err.details).toMatchObject({ pinned, actual: sha(file) });
    expect(() => readFileSync(marker)).toThrow();
  });

  test("a script swapped by rename after pinning is refused; the pinned one runs again once restored", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vcp-exec-"));
    dirs.push(dir);
    const file = join(dir, "hook.sh");
    copyFileSync(join(FIXTURES, "no-read.sh"), file);
    chmodSync(file, 0o755);
    const pinned = sha(file);
    writeFileSync(join(dir, "evil.sh"), "#!/bin/sh\necho evil\n", { mode: 0o755 });
    renameSync(join(dir, "evil.sh"), file);
    expect((await refusal(runCommandHook({ ...spec("no-read.sh"), command: file, sha256: pinned }, ""))).code).toBe("EXEC_HASH_MISMATCH");
    copyFileSync(join(FIXTURES, "no-read.sh"), file);
    expect((await runCommandHook({ ...spec("no-read.sh"), command: file, sha256: pinned }, "")).stdout).toBe("ok\n");
  });

  test("a shell string needs exec.shell (EXEC_SHELL_DISABLED), and then runs pinned by its text", async () => {
    const command = "printf '%s' \"$(cat)\" | tr a-z A-Z";
    const s: CommandSpec = { ...spec("no-read.sh"), command, sha256: createHash("sha256").update(command).digest("hex"), shell: true };
    const err = await refusal(runCommandHook(s, "abc"));
    expect(err.code).toBe("EXEC_SHELL_DISABLED");
    expect((await runCommandHook(s, "abc", { shellAllowed: true })).stdout).toBe("ABC");
    expect((await refusal(runCommandHook({ ...s, command: `${command} ; true` }, "abc", { shellAllowed: true }))).code).toBe("EXEC_HASH_MISMATCH");
  });

  test("a missing executable or a relative path is EXEC_SPAWN_FAILED naming it", async () => {
    const err = await refusal(runCommandHook({ ...spec("no-read.sh"), command: join(FIXTURES, "nope.sh") }, ""));
    expect(err.code).toBe("EXEC_SPAWN_FAILED");
    expect(err.message).toContain("nope.sh");
    expect((await refusal(runCommandHook({ ...spec("no-read.sh"), command: "no-read.sh" }, ""))).code).toBe("EXEC_SPAWN_FAILED");
  });

  test("wrapper: the argv prefix runs the pinned file (here /usr/bin/env as a stand-in for bwrap)", async () => {
    const r = await runCommandHook(spec("echo-stdin.sh", { wrapper: ["/usr/bin/env", "VCP_WRAPPED=1"] }), "via wrapper");
    expect(r).toMatchObject({ exitCode: 0, stdout: "via wrapper" });
    const missing = await refusal(runCommandHook(spec("echo-stdin.sh", { wrapper: ["/nonexistent/bwrap"] }), ""));
    expect(missing.code).toBe("EXEC_SPAWN_FAILED");
    expect(missing.message).toContain("could not be started");
  });

  test("a pinned file without the execute bit is EXEC_SPAWN_FAILED, not run", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vcp-exec-"));
    dirs.push(dir);
    const file = join(dir, "plain.sh");
    writeFileSync(file, "#!/bin/sh\necho ran\n", { mode: 0o644 });
    const err = await refusal(runCommandHook({ ...spec("no-read.sh"), command: file, sha256: sha(file) }, ""));
    expect(err.code).toBe("EXEC_SPAWN_FAILED");
  });

  test("only env_allow variables reach the script, and the run's own mark (VCP_EXEC_RUN)", async () => {
    const run = () => runCommandHook(spec("env.sh", { env_allow: ["PATH", "VCP_TEST_OK"] }), "", {
      env: { PATH: process.env["PATH"], VCP_TEST_OK: "yes", VCP_CLIENT_TOKEN: "secret-token", HOME: "/root" },
    });
    const r = await run();
    const vars = new Map(r.stdout.trim().split("\n").map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]));
    for (const shellOwn of ["PWD", "SHLVL", "_"]) vars.delete(shellOwn);
    expect([...vars.keys()].sort()).toEqual(["PATH", "VCP_EXEC_RUN", "VCP_TEST_OK"]);
    expect(r.stdout).not.toContain("secret-token");
    // A random id per run: what the lane finds the run's processes by when it ends (tree.ts).
    expect(vars.get("VCP_EXEC_RUN")).toMatch(/^[0-9a-f]{32}$/);
    expect((await run()).stdout).not.toContain(`VCP_EXEC_RUN=${vars.get("VCP_EXEC_RUN")}`);
  });

  test("output over max_output_bytes is cut and marked truncated; the script still ends normally", async () => {
    const r = await runCommandHook(spec("flood.sh", { max_output_bytes: 4096 }), "");
    expect(r.exitCode).toBe(0);
    expect(r.truncated).toBe(true);
    expect(r.stdout).toBe("a".repeat(4096));
    expect(r.stderr).toBe("b".repeat(4096));
  });

  test("stderr is redacted (bearer tokens, sk- keys)", async () => {
    const r = await runCommandHook(spec("secret.sh"), "");
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("Bearer [REDACTED]");
    expect(r.stderr).toContain("[REDACTED:api-key]");
    expect(r.stderr).not.toContain("abcdefghijklmnop");
  });

  test("`trap '' TERM; sleep 60` ends by timeout + grace + 1 s, killed with SIGKILL, group included", async () => {
    const started = Date.now();
    const r = await runCommandHook(spec("trap-term.sh", { timeout_ms: 300, term_grace_ms: 300 }), "");
    const took = Date.now() - started;
    expect(r.timedOut).toBe(true);
    expect(r.signal).toBe("SIGKILL");
    expect(r.exitCode).toBeNull();
    // An upper bound a hang (60 s) would break by far; the contract is 300 + 300 + 1000 ms plus spawn.
    expect(took).toBeLessThan(15_000);
  });

  test("with term_grace_ms 0 (ai-memory's wire) a timeout kills at once", async () => {
    const r = await runCommandHook(spec("trap-term.sh", { timeout_ms: 200, term_grace_ms: 0 }), "");
    expect(r).toMatchObject({ timedOut: true, signal: "SIGKILL" });
  });

  test("an orphan holding stdout does not hang the run, and is ended with its group", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vcp-exec-"));
    dirs.push(dir);
    const pidFile = join(dir, "orphan.pid");
    const started = Date.now();
    const r = await runCommandHook(spec("orphan.sh", { args: [pidFile] }), "");
    expect(r).toMatchObject({ exitCode: 0, stdout: "started\n", timedOut: false });
    expect(Date.now() - started).toBeLessThan(15_000);
    // The orphan `sleep 60` got the group's SIGKILL: nothing the hook left behind keeps running.
    expect(await waitGone(Number(readFileSync(pidFile, "utf8").trim()))).toBe(true);
  });

  test("two exec hooks on one event each read the full stdin", async () => {
    const input = JSON.stringify({ prompt: "p".repeat(200_000) });
    const runs = await Promise.all(["a", "b"].map((name) => runExecHook(name, spec("echo-stdin.sh", { max_output_bytes: 1 << 20 }), input)));
    expect(runs.map((r) => [r.run?.stdout.length, r.run?.exitCode])).toEqual([[input.length, 0], [input.length, 0]]);
    expect(runs.map(execRecordOf)).toMatchObject([{ exit_code: 0, timed_out: false }, { exit_code: 0, timed_out: false }]);
  });

  test("runExecHook: a refusal, a non-zero exit and a timeout, each as the one exec record results and audit carry", async () => {
    const [changed, two, slow] = await Promise.all([
      runExecHook("changed", { ...spec("no-read.sh"), sha256: "0".repeat(64) }, "{}"),
      runExecHook("two", spec("exit-code.sh", { args: ["2", "", "no"] }), "{}"),
      runExecHook("slow", spec("trap-term.sh", { timeout_ms: 200, term_grace_ms: 100 }), "{}"),
    ]);
    expect(changed).toMatchObject({ kind: "command", sha256: "0".repeat(64), refused: { code: "EXEC_HASH_MISMATCH" } });
    expect(changed.run).toBeUndefined();
    expect(execRecordOf(changed)).toEqual({ command_sha256: "0".repeat(64), exit_code: null, signal: null, duration_ms: 0, timed_out: false, truncated: false, error_code: "EXEC_HASH_MISMATCH" });
    expect(two.run).toMatchObject({ exitCode: 2, stderr: "no" });
    expect(execRecordOf(two)).toMatchObject({ command_sha256: sha(join(FIXTURES, "exit-code.sh")), exit_code: 2, signal: null, timed_out: false });
    expect(execRecordOf(two)).not.toHaveProperty("error_code");
    expect(execRecordOf(slow)).toMatchObject({ exit_code: null, signal: "SIGKILL", timed_out: true });
  });
});

describe("process group", () => {
  test("a timeout reaches the script's children", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vcp-exec-"));
    dirs.push(dir);
    const pidFile = join(dir, "child.pid");
    const file = join(dir, "tree.sh");
    writeFileSync(file, `#!/bin/sh\nsleep 60 >/dev/null 2>&1 &\necho $! > ${pidFile}\nwait\n`, { mode: 0o755 });
    const r = await runCommandHook({ ...spec("no-read.sh"), command: file, sha256: sha(file), timeout_ms: 500, term_grace_ms: 500 }, "");
    expect(r.timedOut).toBe(true);
    const pid = Number(readFileSync(pidFile, "utf8").trim());
    expect(await waitGone(pid)).toBe(true);
  });
});

describe("what a hook leaves behind", () => {
  test("a background child, a `setsid` child and a double-forked `setsid` grandchild are gone once the hook answers", { timeout: 60_000 }, async () => {
    const dir = scratch();
    const r = await runCommandHook(spec("leave-behind.sh", { args: [dir] }), "");
    expect(r).toMatchObject({ exitCode: 0, stdout: "left\n", timedOut: false });
    const pids = pidsIn(dir, ["bg", "setsid", "double"]);
    // The setsid ones really led their own sessions, out of the hook's group (else this proves nothing).
    for (const name of ["setsid", "double"]) expect(Number(readFileSync(join(dir, `${name}.sid`), "utf8")), name).toBe(pids[name]);
    expect(await survivors(pids)).toEqual([]);
  });

  test("a hook that times out: its background, `setsid` and environment-less `setsid` children are gone", { timeout: 60_000 }, async () => {
    const dir = scratch();
    const r = await runCommandHook(spec("tree-timeout.sh", { args: [dir], timeout_ms: 1500, term_grace_ms: 200 }), "");
    expect(r).toMatchObject({ timedOut: true, stdout: "started\n" });
    expect(await survivors(pidsIn(dir, ["bg", "setsid", "bare"]))).toEqual([]);
  });
});

describe("descriptors", () => {
  const RUN_JS = resolve("dist/src/pool/exec/run.js");

  /** Runs list-fds.sh through the built lane in a fresh Node process holding `secret` at each of `at`. */
  async function fdsSeenByScript(secret: string, at: readonly number[]): Promise<string[]> {
    expect(existsSync(RUN_JS), `${RUN_JS} is missing: npm run build first`).toBe(true);
    const fd = openSync(secret, "w");
    try {
      const stdio: Array<"pipe" | "ignore" | number> = ["pipe", "pipe", "pipe"];
      for (const n of at) {
        while (stdio.length < n) stdio.push("ignore");
        stdio[n] = fd;
      }
      const child = spawn(process.execPath, [join(FIXTURES, "run-in-child.mjs"), RUN_JS, JSON.stringify(spec("list-fds.sh"))], { stdio });
      let out = "";
      let err = "";
      child.stdout!.on("data", (d: Buffer) => (out += d));
      child.stderr!.on("data", (d: Buffer) => (err += d));
      const code = await new Promise<number | null>((done) => child.on("close", done));
      expect(code, err).toBe(0);
      const result = JSON.parse(out) as { exitCode: number; stdout: string };
      expect(result.exitCode).toBe(0);
      return result.stdout.trim().split("\n");
    } finally {
      closeSync(fd);
    }
  }

  test("descriptors the server inherited without close-on-exec never reach a script", async () => {
    const secret = join(scratch(), "server-secret.log");
    // 7: Node itself marks fds 0–15 close-on-exec at startup (libuv uv_disable_stdio_inheritance);
    // 40 and 300: above that run, left as inherited — the lane must keep them from the script.
    const seen = await fdsSeenByScript(secret, [7, 40, 300]);
    expect(seen.filter((line) => line.includes("server-secret")), seen.join("\n")).toEqual([]);
    // What the script holds: stdin, stdout, stderr (the lane's pipes) and its own pinned file on 3.
    const byFd = new Map(seen.map((line) => [Number(line.split(" ")[0]), line.slice(line.indexOf(" ") + 1)]));
    expect(byFd.get(3)).toBe(join(FIXTURES, "list-fds.sh"));
    for (const n of [0, 1, 2]) expect(byFd.get(n)).toMatch(/^(pipe|socket):/);
  });
});

describe("limits apply before work", () => {
  test("a FIFO at the command path is refused at once (opening it does not wait for a writer)", async () => {
    const dir = scratch();
    const fifo = join(dir, "hook.sh");
    await new Promise<void>((done, fail) => spawn("mkfifo", [fifo]).on("exit", (c) => (c === 0 ? done() : fail(new Error(`mkfifo ${c}`)))));
    const run = runCommandHook({ ...spec("no-read.sh"), command: fifo, sha256: "0".repeat(64), timeout_ms: 500 }, "");
    const settled = await Promise.race([run.then(() => "ran", (e: unknown) => e), new Promise((s) => setTimeout(() => s("hung"), 8000))]);
    if (settled === "hung") {
      // Release the lane's blocked open so the thread it holds is not lost for the rest of the file.
      try {
        closeSync(openSync(fifo, fsConstants.O_WRONLY | fsConstants.O_NONBLOCK));
      } catch {
        // Nobody is waiting.
      }
    }
    expect(settled).toBeInstanceOf(VcpError);
    expect((settled as VcpError).code).toBe("EXEC_SPAWN_FAILED");
    expect((settled as VcpError).message).toContain("not a regular file");
  });

  test("hashing a huge executable counts against timeout_ms: the hook times out, it does not hash on", async () => {
    const file = join(scratch(), "huge.bin");
    writeFileSync(file, "#!/bin/sh\n", { mode: 0o755 });
    truncateSync(file, 8 * 1024 ** 3); // sparse: 8 GiB of zeros, no disk used
    const r = await runCommandHook({ ...spec("no-read.sh"), command: file, sha256: "0".repeat(64), timeout_ms: 200 }, "");
    expect(r).toMatchObject({ timedOut: true, exitCode: null, stdout: "" });
  }, 120_000);
});
