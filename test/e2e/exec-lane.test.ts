// The command lane end to end (PROFILES §6, §7), as a user migrates: `vcp-hooks import` a Claude Code
// settings.json with its hook scripts, `vcp-hooks build` the pinned exec bundle, `keygen` + `sign` it
// with a system-trust key, `vcp-hooks serve --config vcp.yaml` with `exec.enabled: true` (a real server
// process), `vcp-hooks push`, then fire the events over HTTP and through the `vcp-hooks hook` adapter and
// see the scripts' decisions. Refusals on the way (a shell string while exec.shell is off; the lane
// switched off under an installed exec bundle) are coded, printed and audited. The other refusals
// (below system trust, unsigned, session scope, a changed script) are in test/integration/exec/.
import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { parse, stringify } from "yaml";
import { cli } from "../cli/helpers.js";
import { hook } from "../cli/hook/stand-in.js";
import { call, sha256 } from "./helpers.js";

const SERVE = resolve("dist/src/cli/serve.js");
const FIXTURE = resolve("test/e2e/fixtures/exec-claude");
const TOKENS = { operator: "op-exec-e2e-0123456789", client: "cl-exec-e2e-0123456789" };
const children: ChildProcess[] = [];
const dirs: string[] = [];

afterAll(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function scratch(): string {
  const d = mkdtempSync(join(tmpdir(), "vcp-exec-e2e-"));
  dirs.push(d);
  return d;
}

interface Server {
  url: string;
  stop(): Promise<void>;
}

async function serve(cwd: string, config: string): Promise<Server> {
  const child = spawn(process.execPath, ["--no-node-snapshot", SERVE, "--config", config], { cwd, env: { ...process.env, VCP_OPERATOR_TOKEN: "", VCP_CLIENT_TOKEN: "" }, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<void>((r) => child.on("exit", () => r()));
  for (const start = Date.now(); Date.now() - start < 60_000; ) {
    const m = /serving at (http:\/\/[^\s"]+)/.exec(out);
    if (m) return { url: m[1]!, stop: async () => { child.kill("SIGTERM"); await exited; } };
    if (child.exitCode !== null) throw new Error(`serve exited ${child.exitCode}:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`serve did not start:\n${out}`);
}

function writeConfig(dir: string, exec: Record<string, unknown>): string {
  const file = join(dir, "vcp.yaml");
  writeFileSync(
    file,
    stringify({
      listen: { host: "127.0.0.1", port: 0 },
      data_dir: "./data",
      auth: [
        { id: "ops", role: "operator", token_sha256: sha256(TOKENS.operator) },
        { id: "app", role: "client", token_sha256: sha256(TOKENS.client) },
      ],
      keyring: { keys: [{ key_id: "sys", public_key_file: "keys/sys.pub.pem", max_trust: "system" }, { key_id: "ops", public_key_file: "keys/ops.pub.pem", max_trust: "deployment" }] },
      require_signatures: true,
      profiles: { "claude-code": { strict: false } },
      pool: { threads: 1 },
      exec,
    }),
  );
  return file;
}

const preToolUse = (command: string) =>
  JSON.stringify({ session_id: "exec-e2e", transcript_path: "/tmp/t.jsonl", cwd: "/home/dev/app", permission_mode: "default", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command }, tool_use_id: "toolu_1" });

async function ok(args: string[], cwd: string): Promise<string> {
  const r = await cli(args, { cwd });
  expect(r.code, `vcp-hooks ${args.join(" ")}\n${r.stdout}\n${r.stderr}`).toBe(0);
  return r.stdout;
}

describe("import → build → sign → serve with exec.enabled → push → fire", () => {
  test("a Claude Code settings.json's scripts decide over HTTP and through the adapter; refusals are coded and audited", async () => {
    const dir = scratch();
    const project = join(dir, "project");
    cpSync(FIXTURE, project, { recursive: true });

    // import: pinned exec hooks, nothing executed; build, a system key, sign.
    await ok(["import", "claude", join(project, ".claude/settings.json"), "-o", "imported", "--project-dir", project], dir);
    const policy = parse(readFileSync(join(dir, "imported/exec/policy.yaml"), "utf8")) as { hooks: Array<{ name: string; exec: { shell?: boolean } }> };
    expect(policy.hooks.map((h) => h.name)).toEqual(["pretooluse-bash", "posttooluse-write-edit", "userpromptsubmit-all"]);
    await ok(["build", "imported/exec", "-o", "exec.vcpb"], dir);
    mkdirSync(join(dir, "keys"));
    await ok(["keygen", "--out", "keys/sys"], dir);
    await ok(["keygen", "--out", "keys/ops"], dir);
    await ok(["sign", "exec.vcpb", "--key", "keys/sys.pem", "--key-id", "sys"], dir);

    // A deployment whose lane is on but without exec.shell: the imported shell-string hook is refused.
    const config = writeConfig(dir, { enabled: true, shell: false });
    let server = await serve(dir, config);
    try {
      const refused = await cli(["push", "exec.vcpb", "--server", server.url, "--token", TOKENS.operator], { cwd: dir });
      expect(refused.code).toBe(1);
      expect(refused.stderr + refused.stdout).toContain("EXEC_SHELL_DISABLED");
      const audit = await call(server.url, "GET", "/v1/audit?limit=10000", { token: TOKENS.operator });
      const refusals = (audit.body as { records: Array<Record<string, any>> }).records.filter((r) => r.kind === "bundle" && r.event === "bundle.refused");
      expect(refusals.at(-1)).toMatchObject({ bundle: "imported-claude-exec", status: "refused", details: { code: "EXEC_SHELL_DISABLED" } });
    } finally {
      await server.stop();
    }

    // The operator allows shell strings (as the import's profile.yaml says) and restarts.
    writeConfig(dir, { enabled: true, shell: true });
    server = await serve(dir, config);
    try {
      const pushed = await ok(["push", "exec.vcpb", "--server", server.url, "--token", TOKENS.operator], dir);
      expect(pushed).toContain("imported-claude-exec");

      // HTTP: the envelope, with the script's decision and the exec record.
      const denied = await call(server.url, "POST", "/v1/profiles/claude-code/events/PreToolUse", { token: TOKENS.client, body: JSON.parse(preToolUse("rm -rf build")) });
      expect(denied.status, JSON.stringify(denied.body)).toBe(200);
      const body = denied.body as Record<string, any>;
      expect(body.native.hookSpecificOutput).toMatchObject({ permissionDecision: "deny", permissionDecisionReason: "rm -rf is not allowed in this project" });
      expect(body.result.hook_results[0]).toMatchObject({ hook: "pretooluse-bash", outcome: "ok", sandboxed: false, exec: { exit_code: 2, signal: null, command_sha256: sha256(readFileSync(join(project, ".claude/hooks/block-rm.sh"), "utf8")) } });

      // ?answer=native (the Claude Code http hook form): the native JSON alone.
      const native = await call(server.url, "POST", "/v1/profiles/claude-code/events/PreToolUse?answer=native", { token: TOKENS.client, body: JSON.parse(preToolUse("npm test")) });
      expect(native.status).toBe(200);
      expect((native.body as Record<string, any>).hookSpecificOutput?.permissionDecision).not.toBe("deny");

      // The drop-in adapter, as Claude Code would spawn it.
      const viaAdapter = await hook({ url: server.url, token: TOKENS.client }, ["PreToolUse", "--dialect", "claude", "--timeout-ms", "30000"], preToolUse("rm -rf /"));
      expect(viaAdapter.code, viaAdapter.stderr).toBe(0);
      expect(JSON.parse(viaAdapter.stdout).hookSpecificOutput).toMatchObject({ permissionDecision: "deny", permissionDecisionReason: "rm -rf is not allowed in this project" });
      const prompt = await hook(
        { url: server.url, token: TOKENS.client },
        ["UserPromptSubmit", "--dialect", "claude", "--timeout-ms", "30000"],
        JSON.stringify({ session_id: "exec-e2e", transcript_path: "/tmp/t.jsonl", cwd: "/home/dev/app", permission_mode: "default", hook_event_name: "UserPromptSubmit", prompt: "ship it" }),
      );
      expect(prompt.code, prompt.stderr).toBe(0);
      expect(JSON.stringify(JSON.parse(prompt.stdout))).toContain("Project rule: run npm test before committing.");

      // Status lists the exec hooks first, marked; `vcp-hooks status` says so too.
      const status = await call(server.url, "GET", "/v1/status", { token: TOKENS.operator });
      const hooks = (status.body as Record<string, any>).hooks as Array<Record<string, any>>;
      expect(hooks.slice(0, 3).map((h) => [h.hook, h.sandboxed])).toEqual([["pretooluse-bash", false], ["posttooluse-write-edit", false], ["userpromptsubmit-all", false]]);
      expect(hooks[0]).toMatchObject({ profile: "claude-code", event: "PreToolUse", calls: 3 });
      const human = await ok(["status", "--server", server.url, "--token", TOKENS.operator], dir);
      expect(human).toContain("exec hooks (3, NOT sandboxed):");
      expect(human).toContain("imported-claude-exec/pretooluse-bash");

      // Audit: the exec hook's record says it ran outside the sandbox.
      const audit = await call(server.url, "GET", "/v1/audit?limit=10000", { token: TOKENS.operator });
      const records = (audit.body as { records: Array<Record<string, any>> }).records;
      expect(records.find((r) => r.kind === "hook" && r.chain_id === body.result.chain_id)).toMatchObject({ sandboxed: false, exec: { exit_code: 2 }, profile: "claude-code" });
    } finally {
      await server.stop();
    }

    // The lane off: the installed bundle no longer starts (a policy the operator installed is never
    // dropped silently): the server refuses to start and names the code.
    writeConfig(dir, { enabled: false });
    const refusedStart = await serve(dir, config).then(
      async (s) => {
        await s.stop();
        return "";
      },
      (err: Error) => err.message,
    );
    expect(refusedStart).toContain("EXEC_DISABLED");
  }, 240_000);
});
