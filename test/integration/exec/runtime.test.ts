// Exec hooks installed into a runtime and fired through the real fire path (PROFILES §6): the real
// sandbox process for the sandboxed hooks, the command lane in this process for the scripts. Install
// gate and refusals (coded, audited), exec results marked `sandboxed: false` in results, audit and
// status, a changed script, a script that ignores SIGTERM, an orphan holding stdout, two scripts each
// reading the whole input.
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createRuntime, VcpError, type Runtime } from "../../../src/index.js";
import { createArtifact, signArtifact, type VcpArtifact } from "../../../src/bundle/artifact.js";
import { generateKeyPair, type KeyringInput } from "../../../src/bundle/keys.js";
import { bundleCode } from "../../support/bundles.js";
import { digestOf } from "../../../src/integrity/digest.js";

const FIXTURES = resolve("test/integration/exec/fixtures");
const sha = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

const system = generateKeyPair();
const ops = generateKeyPair();
const KEYRING: KeyringInput = {
  keys: [
    { key_id: "sys", public_key: system.publicKeyPem, max_trust: "system" },
    { key_id: "ops", public_key: ops.publicKeyPem, max_trust: "deployment" },
  ],
};

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "vcp-exec-rt-"));
  dirs.push(d);
  return d;
};

/** A script copied into a temp dir (so a test may change it), executable. */
function script(name: string): string {
  const file = join(tempDir(), name);
  copyFileSync(join(FIXTURES, name), file);
  chmodSync(file, 0o755);
  return file;
}

type Hook = Record<string, unknown> & { name: string };
function execBundle(bundle: string, profile: string, hooks: Hook[], trust = "system"): VcpArtifact {
  return createArtifact({ bundle, version: "1.0.0", profile, trust, hooks }, "");
}
const bySystem = (a: VcpArtifact) => signArtifact(a, system.privateKeyPem, "sys");
const execHook = (name: string, event: string, file: string, extra: Record<string, unknown> = {}): Hook => ({
  name, event, timeout_ms: 10_000, exec: { command: file, sha256: sha(file), ...(extra["args"] !== undefined ? { args: extra["args"] } : {}) },
  ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== "args")),
});
const beforeTool = (command: string, session = "s1") => ({
  session_id: session, transcript_path: "/t", cwd: "/tmp", hook_event_name: "BeforeTool", timestamp: "2026-11-26T00:00:00Z",
  tool_name: "run_shell_command", tool_input: { command },
});

async function refusal(p: Promise<unknown>): Promise<VcpError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(VcpError);
  return err as VcpError;
}

let runtime: Runtime;
let dataDir: string;
beforeAll(async () => {
  dataDir = tempDir();
  runtime = await createRuntime({ dataDir, keyring: KEYRING, exec: { enabled: true }, sandbox: { threads: 1 } });
}, 60_000);
afterAll(async () => {
  await runtime?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("exec hooks through runtime.fireProfile", () => {
  test("a guard script and a sandboxed hook on one event: the script's decision, merged by the profile's rules; sandboxed: false in results, audit and status", async () => {
    const guard = script("guard.sh");
    await runtime.bundles.install(bySystem(execBundle("guard-exec", "gemini-cli", [execHook("guard", "BeforeTool", guard, { priority: 60 })])));
    const sandboxed = signArtifact(
      createArtifact(
        { bundle: "note", version: "1.0.0", profile: "gemini-cli", trust: "deployment", hooks: [{ name: "note", event: "BeforeTool", action: "note", priority: 40 }] },
        bundleCode({ note: "(input) => ({ systemMessage: 'note saw ' + input.tool_input.command })" }),
      ),
      ops.privateKeyPem,
      "ops",
    );
    await runtime.bundles.install(sandboxed);
    try {
      const out = await runtime.fireProfile("gemini-cli", "BeforeTool", { input: beforeTool("rm -rf /") });
      expect(out.native).toMatchObject({ decision: "deny", reason: "blocked by guard.sh: rm -rf", systemMessage: "note saw rm -rf /" });
      const [g, n] = out.result.hook_results;
      expect(g).toMatchObject({ hook: "guard", outcome: "ok", verdict: "block", sandboxed: false, exec: { command_sha256: sha(guard), exit_code: 2, signal: null, timed_out: false } });
      expect(g!.exec!.duration_ms).toBeGreaterThan(0);
      expect(n).toMatchObject({ hook: "note", outcome: "ok", verdict: "allow" });
      expect(n).not.toHaveProperty("sandboxed");

      const allowed = await runtime.fireProfile("gemini-cli", "BeforeTool", { input: beforeTool("ls") });
      expect(allowed.native).toMatchObject({ systemMessage: "note saw ls" });
      expect(allowed.native["decision"]).not.toBe("deny");
      expect(allowed.result.hook_results[0]).toMatchObject({ hook: "guard", outcome: "ok", exec: { exit_code: 0 } });

      const records = await runtime.audit.query({ limit: 10_000 });
      const guardRecord = records.find((r) => r.kind === "hook" && r.hook === "guard" && r.chain_id === out.result.chain_id);
      expect(guardRecord).toMatchObject({ sandboxed: false, profile: "gemini-cli", profile_event: "BeforeTool", exec: { command_sha256: sha(guard), exit_code: 2, signal: null } });
      expect(records.find((r) => r.kind === "hook" && r.hook === "note" && r.chain_id === out.result.chain_id)).not.toHaveProperty("sandboxed");

      const hooks = runtime.status().hooks;
      expect(hooks[0]).toMatchObject({ hook: "guard", profile: "gemini-cli", event: "BeforeTool", sandboxed: false, exec: { command: guard, sha256: sha(guard) } });
      expect(hooks.find((h) => h.hook === "note")).toMatchObject({ profile: "gemini-cli", calls: 2 });
      expect(hooks[0]!.calls).toBe(2);
    } finally {
      await runtime.bundles.remove("guard-exec");
      await runtime.bundles.remove("note");
    }
  }, 60_000);

  test("two exec hooks on one event each read the whole input", async () => {
    const count = script("count-stdin.sh");
    await runtime.bundles.install(bySystem(execBundle("two", "gemini-cli", [
      execHook("first", "BeforeAgent", count, { args: ["first"] }),
      execHook("second", "BeforeAgent", count, { args: ["second"] }),
    ])));
    try {
      const input = { session_id: "s2", transcript_path: "/t", cwd: "/tmp", hook_event_name: "BeforeAgent", timestamp: "2026-11-26T00:00:00Z", prompt: "x".repeat(200_000) };
      const bytes = Buffer.byteLength(JSON.stringify(input));
      const out = await runtime.fireProfile("gemini-cli", "BeforeAgent", { input });
      expect(out.native["systemMessage"]).toBe(`first read ${bytes} bytes\nsecond read ${bytes} bytes`);
      expect(out.result.hook_results.map((h) => [h.hook, h.outcome, h.sandboxed])).toEqual([["first", "ok", false], ["second", "ok", false]]);
    } finally {
      await runtime.bundles.remove("two");
    }
  }, 60_000);

  // Issue 26 item 3: a migrated script reads the agent's hook environment as natively; nothing of the
  // server's own environment beyond exec.env_allow, and only the profile's documented names.
  test("the agent's hook environment reaches the script, and nothing else of the caller's or the server's", async () => {
    const report = script("hook-env.sh");
    process.env["VCP_TEST_SERVER_SECRET"] = "server-secret";
    await runtime.bundles.install(bySystem(execBundle("env", "gemini-cli", [execHook("env", "BeforeAgent", report)])));
    try {
      const input = { session_id: "s-env", transcript_path: "/t", cwd: "/tmp", hook_event_name: "BeforeAgent", timestamp: "2026-11-26T00:00:00Z", prompt: "hi" };
      const env = { GEMINI_PROJECT_DIR: "/home/dev/my app", GEMINI_SESSION_ID: "s-env", CLAUDE_PROJECT_DIR: "/home/dev/my app" };
      const out = await runtime.fireProfile("gemini-cli", "BeforeAgent", { input, env });
      expect(out.native["systemMessage"]).toBe("project=/home/dev/my app session=s-env claude=/home/dev/my app secret=unset path=set");
      // Without it (a caller that sends none): unset, as before.
      const without = await runtime.fireProfile("gemini-cli", "BeforeAgent", { input });
      expect(without.native["systemMessage"]).toBe("project=unset session=unset claude=unset secret=unset path=set");
      // A name the profile does not document, or a value over its bound: refused before any work, naming it.
      const refused = await refusal(runtime.fireProfile("gemini-cli", "BeforeAgent", { input, env: { ...env, LD_PRELOAD: "/tmp/x.so" } }));
      expect(refused.code).toBe("INVALID_INPUT");
      expect(refused.message).toContain("hook environment: LD_PRELOAD is not a gemini-cli hook variable");
      const long = await refusal(runtime.fireProfile("gemini-cli", "BeforeAgent", { input, env: { GEMINI_CWD: "x".repeat(5000) } }));
      expect(long).toMatchObject({ code: "INVALID_INPUT", details: { field: "env", rule: "GEMINI_CWD is 5000 bytes, more than 4096" } });
    } finally {
      delete process.env["VCP_TEST_SERVER_SECRET"];
      await runtime.bundles.remove("env");
    }
  }, 60_000);

  test("a parallel group's scripts run at once (their own clocks overlap), folded in definition order; a sequential group runs one after another", async () => {
    const timed = script("timed.sh");
    const log = join(tempDir(), "times.log");
    const spans = () => {
      const lines = readFileSync(log, "utf8").trim().split("\n").map((l) => l.split(" "));
      const at = (name: string, edge: string) => BigInt(lines.find(([n, e]) => n === name && e === edge)![2]!);
      return (names: string[]) => names.map((n) => ({ start: at(n, "start"), end: at(n, "end") }));
    };
    // The first defined sleeps longest, so the scripts end in the reverse of definition order.
    const names = ["a", "b", "c", "d"];
    await runtime.bundles.install(bySystem(execBundle("group", "gemini-cli", names.map((n, i) => execHook(n, "BeforeAgent", timed, { args: [n, String(2 - i * 0.5), log] })))));
    const input = { session_id: "s3", transcript_path: "/t", cwd: "/tmp", hook_event_name: "BeforeAgent", timestamp: "2026-11-26T00:00:00Z", prompt: "p" };
    try {
      const out = await runtime.fireProfile("gemini-cli", "BeforeAgent", { input });
      expect(out.result.mode).toBe("parallel");
      const s = spans()(names);
      // Every script started before any ended: all four ran at the same time.
      const lastStart = s.reduce((m, x) => (x.start > m ? x.start : m), 0n);
      for (const x of s) expect(lastStart).toBeLessThan(x.end);
      expect(out.native["systemMessage"]).toBe("a\nb\nc\nd");
      expect(out.result.hook_results.map((h) => [h.hook, h.outcome])).toEqual(names.map((n) => [n, "ok"]));
    } finally {
      await runtime.bundles.remove("group");
    }

    rmSync(log, { force: true });
    const seq = ["p", "q", "r"];
    await runtime.bundles.install(bySystem(execBundle("chained", "gemini-cli", seq.map((n) => execHook(n, "BeforeAgent", timed, { args: [n, "0.2", log], sequential: true })))));
    try {
      const out = await runtime.fireProfile("gemini-cli", "BeforeAgent", { input });
      expect(out.result.mode).toBe("sequential");
      const s = spans()(seq);
      for (let i = 1; i < s.length; i++) expect(s[i - 1]!.end).toBeLessThanOrEqual(s[i]!.start);
      expect(out.native["systemMessage"]).toBe("p\nq\nr");
    } finally {
      await runtime.bundles.remove("chained");
    }
  }, 60_000);

  test("runtime.on: a profile chain's hook events and chain.completed carry profile and event (no type), in plan order", async () => {
    const failing = script("exit-code.sh");
    await runtime.bundles.install(bySystem(execBundle("ev-exec", "gemini-cli", [execHook("ev-script", "BeforeTool", failing, { args: ["1", "", "bad"], priority: 90 })])));
    await runtime.bundles.install(signArtifact(
      createArtifact(
        { bundle: "ev-box", version: "1.0.0", profile: "gemini-cli", trust: "deployment", hooks: [
          { name: "ev-spin", event: "BeforeTool", action: "spin", priority: 80, timeout_ms: 200 },
          { name: "ev-other-tool", event: "BeforeTool", action: "ok", priority: 70, matcher: "^write_file$" },
          { name: "ev-ok", event: "BeforeTool", action: "ok", priority: 60 },
        ] },
        bundleCode({ spin: "() => { for (;;) {} }", ok: "() => ({})" }),
      ),
      ops.privateKeyPem,
      "ops",
    ));
    const seen: Array<[string, Record<string, unknown>]> = [];
    const offs = (["hook.skipped", "hook.fired", "hook.timeout", "hook.error", "hook.completed", "chain.completed"] as const)
      .map((name) => runtime.on(name, (p) => void seen.push([name, p as unknown as Record<string, unknown>])));
    try {
      const out = await runtime.fireProfile("gemini-cli", "BeforeTool", { input: beforeTool("ls", "s-ev") });
      const mine = seen.filter(([, p]) => p["chain_id"] === out.result.chain_id);
      expect(mine.map(([name, p]) => `${name}:${String(p["hook"] ?? "")}`)).toEqual([
        "hook.fired:ev-script", "hook.error:ev-script", "hook.completed:ev-script",
        "hook.fired:ev-spin", "hook.timeout:ev-spin", "hook.completed:ev-spin",
        "hook.fired:ev-ok", "hook.completed:ev-ok",
        "chain.completed:",
      ]);
      for (const [, p] of mine) {
        expect(p).toMatchObject({ profile: "gemini-cli", event: "BeforeTool" });
        expect(p).not.toHaveProperty("type");
      }
      expect(mine[1]![1]).toMatchObject({ outcome: "exec_nonzero", input_summary: { session_id: "s-ev", input_bytes: Buffer.byteLength(JSON.stringify(beforeTool("ls", "s-ev"))) } });
      expect(mine[4]![1]).toMatchObject({ timeout_ms: 200 });
      expect(mine[8]![1]).toMatchObject({ session_id: "s-ev", hooks: [{ hook: "ev-script", outcome: "exec_nonzero" }, { hook: "ev-spin", outcome: "timeout" }, { hook: "ev-other-tool", outcome: "skipped_matcher" }, { hook: "ev-ok", outcome: "ok" }] });

      // Without the script the chain is one sandbox task again: the same events.
      await runtime.bundles.remove("ev-exec");
      const boxed = await runtime.fireProfile("gemini-cli", "BeforeTool", { input: beforeTool("ls", "s-ev") });
      expect(seen.filter(([, p]) => p["chain_id"] === boxed.result.chain_id).map(([name, p]) => `${name}:${String(p["hook"] ?? p["profile"])}`)).toEqual([
        "hook.fired:ev-spin", "hook.timeout:ev-spin", "hook.completed:ev-spin", "hook.fired:ev-ok", "hook.completed:ev-ok", "chain.completed:gemini-cli",
      ]);
    } finally {
      for (const off of offs) off();
      await runtime.bundles.remove("ev-exec").catch(() => undefined);
      await runtime.bundles.remove("ev-box");
    }
  }, 60_000);

  test("a script changed after install is not run: EXEC_HASH_MISMATCH in the result and the audit; fail-open warns, fail_closed blocks", async () => {
    const guard = script("guard.sh");
    await runtime.bundles.install(bySystem(execBundle("pinned", "gemini-cli", [execHook("pinned", "BeforeTool", guard)])));
    const closedFile = script("guard.sh");
    await runtime.bundles.install(bySystem(execBundle("pinned-closed", "llxprt", [execHook("pinned-closed", "BeforeTool", closedFile, { fail_closed: true })])));
    try {
      writeFileSync(guard, "#!/bin/sh\necho '{\"decision\":\"allow\"}'\n");
      writeFileSync(closedFile, "#!/bin/sh\nexit 0\n");
      const open = await runtime.fireProfile("gemini-cli", "BeforeTool", { input: beforeTool("rm -rf /") });
      const [h] = open.result.hook_results;
      expect(h).toMatchObject({ hook: "pinned", outcome: "error", sandboxed: false, exec: { error_code: "EXEC_HASH_MISMATCH", exit_code: null } });
      expect(h!.error).toContain("EXEC_HASH_MISMATCH");
      expect(open.native["decision"]).not.toBe("deny");
      expect(String(open.native["systemMessage"])).toContain("Warning: pinned: EXEC_HASH_MISMATCH");

      const closed = await runtime.fireProfile("llxprt", "BeforeTool", { input: beforeTool("ls") });
      expect(closed.native).toMatchObject({ decision: "block" });
      expect(String(closed.native["reason"])).toContain("fail-closed: pinned-closed: EXEC_HASH_MISMATCH");

      const records = await runtime.audit.query({ limit: 10_000 });
      expect(records.find((r) => r.kind === "hook" && r.chain_id === open.result.chain_id)).toMatchObject({ outcome: "error", sandboxed: false, exec: { error_code: "EXEC_HASH_MISMATCH" } });
    } finally {
      await runtime.bundles.remove("pinned");
      await runtime.bundles.remove("pinned-closed");
    }
  }, 60_000);

  test("a script that ignores SIGTERM ends by timeout + grace + 1 s through the fire path (timeout, SIGKILL)", async () => {
    const trap = script("trap-term.sh");
    await runtime.bundles.install(bySystem(execBundle("trap", "gemini-cli", [execHook("trap", "BeforeTool", trap, { timeout_ms: 1000 })])));
    try {
      const started = performance.now();
      const out = await runtime.fireProfile("gemini-cli", "BeforeTool", { input: beforeTool("ls") });
      const elapsed = performance.now() - started;
      const [h] = out.result.hook_results;
      expect(h).toMatchObject({ hook: "trap", outcome: "timeout", sandboxed: false, exec: { timed_out: true, signal: "SIGKILL", exit_code: null } });
      expect(String(out.native["systemMessage"])).toContain("Warning: trap:");
      // Gemini's grace is 5 s: 1 s + 5 s + 1 s at most by the lane; the script itself sleeps 60 s.
      expect(elapsed).toBeLessThan(1000 + 5000 + 1000 + 8000);
    } finally {
      await runtime.bundles.remove("trap");
    }
  }, 60_000);

  test("an orphan holding stdout does not hang the chain", async () => {
    const orphan = script("orphan.sh");
    const pidFile = join(tempDir(), "pid");
    await runtime.bundles.install(bySystem(execBundle("orphan", "gemini-cli", [execHook("orphan", "BeforeTool", orphan, { args: [pidFile] })])));
    try {
      const started = performance.now();
      const out = await runtime.fireProfile("gemini-cli", "BeforeTool", { input: beforeTool("ls") });
      expect(performance.now() - started).toBeLessThan(30_000);
      expect(out.result.hook_results[0]).toMatchObject({ hook: "orphan", outcome: "ok", exec: { exit_code: 0 } });
      expect(out.native["systemMessage"]).toBe("started");
    } finally {
      await runtime.bundles.remove("orphan");
    }
  }, 60_000);

  test("ai-memory: the script's last stdout line decides (one envelope line on stdin)", async () => {
    const file = join(tempDir(), "mem.sh");
    writeFileSync(file, "#!/bin/sh\nread -r line\ncase \"$line\" in *secret*) echo debug; echo '{\"action\":\"deny\",\"reason\":\"no secrets\",\"code\":451}';; *) echo '{\"action\":\"allow\"}';; esac\n");
    chmodSync(file, 0o755);
    await runtime.bundles.install(bySystem(execBundle("mem", "ai-memory", [execHook("mem", "pre_store", file, { timeout_ms: 2000 })])));
    try {
      const denied = await runtime.fireProfile("ai-memory", "pre_store", { input: { event: "pre_store", payload: { content: "a secret" } } });
      expect(denied.native).toEqual({ action: "deny", reason: "no secrets", code: 451 });
      expect(denied.result.hook_results[0]).toMatchObject({ sandboxed: false, outcome: "ok" });
      const allowed = await runtime.fireProfile("ai-memory", "pre_store", { input: { event: "pre_store", payload: { content: "fine" } } });
      expect(allowed.native).toMatchObject({ action: "allow" });
    } finally {
      await runtime.bundles.remove("mem");
    }
  }, 60_000);

  test("repo-yaml: a script handler's JSON is folded; a failing blocking script blocks (exit code 2)", async () => {
    const file = join(tempDir(), "track.sh");
    writeFileSync(file, "#!/bin/sh\ncat >/dev/null\nprintf '%s' '{\"messages_to_user\":[\"tracked\"]}'\n");
    chmodSync(file, 0o755);
    const failing = join(tempDir(), "fail.sh");
    writeFileSync(failing, "#!/bin/sh\necho broken >&2\nexit 1\n");
    chmodSync(failing, 0o755);
    await runtime.bundles.install(bySystem(execBundle("repo", "repo-yaml", [execHook("track", "PreAbilityCall", file), execHook("gate", "PreAbilityCall", failing, { blocking: true })])));
    try {
      const out = await runtime.fireProfile("repo-yaml", "PreAbilityCall", { input: { event_type: "PreAbilityCall", session_id: "r1", ability_id: "billing.regression" } });
      expect(out.native).toMatchObject({ messages_to_user: ["tracked"], error: "blocked_by_policy" });
      expect(out.exit_code).toBe(2);
      expect(out.result.hook_results.map((h) => [h.hook, h.outcome, h.sandboxed])).toEqual([["track", "ok", false], ["gate", "exec_nonzero", false]]);
    } finally {
      await runtime.bundles.remove("repo");
    }
  }, 60_000);
});

describe("install refusals are coded and audited", () => {
  const guardFile = () => script("guard.sh");
  async function refusedAndAudited(rt: Runtime, p: Promise<unknown>, code: string, bundle: string): Promise<void> {
    const err = await refusal(p);
    expect(err.code).toBe(code);
    const records = await rt.audit.query({ limit: 10_000 });
    expect(records.filter((r) => r.kind === "bundle" && r.event === "bundle.refused" && r.bundle === bundle).at(-1)).toMatchObject({ status: "refused", details: { code } });
    expect(rt.bundles.get(bundle)).toBeUndefined();
  }

  test("exec.enabled off ⇒ EXEC_DISABLED", async () => {
    const rt = await createRuntime({ dataDir: tempDir(), keyring: KEYRING, sandbox: { threads: 1 } });
    try {
      await refusedAndAudited(rt, rt.bundles.install(bySystem(execBundle("off", "gemini-cli", [execHook("g", "BeforeTool", guardFile())]))), "EXEC_DISABLED", "off");
    } finally {
      await rt.close();
    }
  }, 60_000);

  test("below system trust, or unsigned ⇒ EXEC_NOT_ALLOWED", async () => {
    const deployment = signArtifact(execBundle("low", "gemini-cli", [execHook("g", "BeforeTool", guardFile())], "deployment"), ops.privateKeyPem, "ops");
    await refusedAndAudited(runtime, runtime.bundles.install(deployment), "EXEC_NOT_ALLOWED", "low");
    const rt = await createRuntime({ dataDir: tempDir(), requireSignatures: false, exec: { enabled: true }, sandbox: { threads: 1 } });
    try {
      await refusedAndAudited(rt, rt.bundles.install(execBundle("unsigned", "gemini-cli", [execHook("g", "BeforeTool", guardFile())])), "EXEC_NOT_ALLOWED", "unsigned");
    } finally {
      await rt.close();
    }
  }, 60_000);

  test("session scope ⇒ EXEC_NOT_ALLOWED; a shell string without exec.shell ⇒ EXEC_SHELL_DISABLED", async () => {
    const file = guardFile();
    // Built by hand: createArtifact itself refuses the manifest (build, sign, verify and install share its rules).
    const manifest = { bundle: "per-session", version: "1.0.0", profile: "gemini-cli", trust: "system", hooks: [{ ...execHook("g", "BeforeTool", file), scope: "session" }] };
    const session = bySystem({ format: "vcp-bundle/1", manifest, code: "", digest: digestOf({ manifest, code: "" }), signatures: [] } as unknown as VcpArtifact);
    await refusedAndAudited(runtime, runtime.bundles.install(session), "EXEC_NOT_ALLOWED", "per-session");
    const shellCommand = "cat >/dev/null; echo '{}'";
    const shell = bySystem(execBundle("shell", "gemini-cli", [{ name: "sh", event: "BeforeTool", exec: { command: shellCommand, sha256: createHash("sha256").update(shellCommand).digest("hex"), shell: true } }]));
    await refusedAndAudited(runtime, runtime.bundles.install(shell), "EXEC_SHELL_DISABLED", "shell");
  }, 60_000);
});
