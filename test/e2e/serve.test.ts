// `vcp-hooks serve` as a process: `node dist/src/cli/serve.js` in a scratch directory. Embedded
// default (dev key persisted, tokens printed once), config validation, SIGHUP reload, SIGTERM drain.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { GUARD_CODE, call, constitution, events, guardManifest, keys, sha256, signed } from "./helpers.js";
import { cli } from "../cli/helpers.js";

const SERVE = resolve("dist/src/cli/serve.js");
const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function scratch(): string {
  const d = mkdtempSync(join(tmpdir(), "vcp-serve-"));
  dirs.push(d);
  return d;
}

interface Proc {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
  waitFor(pattern: RegExp, ms?: number): Promise<string>;
}

async function serve(cwd: string, args: string[], env: Record<string, string> = {}): Promise<Proc> {
  const child = spawn(process.execPath, [SERVE, ...args], { cwd, env: { ...process.env, VCP_OPERATOR_TOKEN: "", VCP_CLIENT_TOKEN: "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  const waitFor = async (pattern: RegExp, ms = 20_000) => {
    const start = Date.now();
    while (Date.now() - start < ms) {
      const m = pattern.exec(out);
      if (m) return m[1] ?? m[0];
      if (child.exitCode !== null) throw new Error(`serve exited ${child.exitCode}:\n${out}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`timed out waiting for ${pattern}:\n${out}`);
  };
  const url = await waitFor(/serving at (http:\/\/[^\s"]+)/);
  return { child, url, output: () => out, exited, waitFor };
}

function vcpYaml(dir: string, opts: { operator: string; client: string; port?: number; extra?: string }) {
  writeFileSync(
    join(dir, "vcp.yaml"),
    [
      `listen: { host: 127.0.0.1, port: ${opts.port ?? 0} }`,
      "data_dir: ./data",
      "auth:",
      `  - { id: ops, role: operator, token_sha256: "${sha256(opts.operator)}" }`,
      `  - { id: app, role: client, token_sha256: "${sha256(opts.client)}" }`,
      "keyring:",
      "  keys:",
      `    - { key_id: ops, public_key_file: ops.pub.pem, max_trust: deployment }`,
      "require_signatures: true",
      opts.extra ?? "",
    ].join("\n"),
  );
  writeFileSync(join(dir, "ops.pub.pem"), keys.ops.publicKeyPem);
}

describe("vcp-hooks serve", () => {
  it("embedded default without policies/: serves, prints the tokens once, persists the dev key, stops on SIGTERM", async () => {
    const dir = scratch();
    const p = await serve(dir, ["--port", "0"]);
    const operator = await p.waitFor(/VCP_OPERATOR_TOKEN=([^\s"]+)/);
    const client = await p.waitFor(/VCP_CLIENT_TOKEN=([^\s"]+)/);
    expect(p.output()).toMatch(/no policies\/ directory/);
    const keyFile = join(dir, ".vcp", "dev-key.pem");
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const pem = readFileSync(keyFile, "utf8");

    expect((await call(p.url, "GET", "/healthz")).status).toBe(200);
    const bundles = await call(p.url, "GET", "/v1/bundles", { token: operator });
    expect(bundles.status).toBe(200);
    expect(bundles.body.bundles).toEqual([]);
    expect((await call(p.url, "GET", "/v1/bundles", { token: client })).status).toBe(403);
    expect((await call(p.url, "GET", "/v1/bundles", { token: "guess" })).status).toBe(401);

    p.child.kill("SIGTERM");
    expect(await p.exited).toBe(0);
    // tokens appear exactly once in everything the process wrote
    expect(p.output().split(operator).length - 1).toBe(1);
    expect(p.output().split(client).length - 1).toBe(1);

    const again = await serve(dir, ["--port", "0"]);
    expect(readFileSync(keyFile, "utf8")).toBe(pem);
    const operator2 = await again.waitFor(/VCP_OPERATOR_TOKEN=([^\s"]+)/);
    expect(operator2).not.toBe(operator);
    expect((await call(again.url, "GET", "/v1/bundles", { token: operator })).status).toBe(401);
    again.child.kill("SIGINT");
    expect(await again.exited).toBe(0);
  });

  it("embedded default builds and installs the bundles under policies/", async () => {
    const dir = scratch();
    mkdirSync(join(dir, "policies", "hello", "src"), { recursive: true });
    writeFileSync(
      join(dir, "policies", "hello", "policy.yaml"),
      ["bundle: hello", "version: 1.0.0", "trust: deployment", "entry: src/index.ts", "hooks:", "  - { name: say_hello, type: pre_inject, action: sayHello, priority: 50, timeout_ms: 1000 }"].join("\n"),
    );
    writeFileSync(join(dir, "policies", "hello", "src", "index.ts"), 'export function sayHello(_input: unknown) { return { status: "continue", annotations: { hello: "world" } }; }\n');
    const p = await serve(dir, ["--port", "0"], { VCP_OPERATOR_TOKEN: "op-env-token", VCP_CLIENT_TOKEN: "cl-env-token" });
    expect(p.output()).toMatch(/bundles: hello@1\.0\.0/);
    expect(p.output()).not.toMatch(/op-env-token/);
    const list = await call(p.url, "GET", "/v1/bundles", { token: "op-env-token" });
    expect(list.body.bundles).toEqual([expect.objectContaining({ bundle: "hello", signed_by: "dev" })]);
    const open = await call(p.url, "POST", "/v1/sessions", { token: "cl-env-token", body: { session_id: "demo", context: { user: "ana" }, constitution } });
    if (open.status === 201) {
      const fired = await call(p.url, "POST", "/v1/sessions/demo/chains/pre_inject", { token: "cl-env-token", body: { event: events.pre_inject } });
      expect(fired.status).toBe(200);
      expect(fired.body.hook_results[0]).toMatchObject({ hook: "say_hello", outcome: "ok", annotations: { hello: "world" } });
    }
    p.child.kill("SIGTERM");
    expect(await p.exited).toBe(0);
  });

  it("--trust-key adds the operator's own key to the embedded default: bundles it signs upload, its max_trust holds", async () => {
    const dir = scratch();
    writeFileSync(join(dir, "ops.pub.pem"), keys.ops.publicKeyPem);
    const tokens = { VCP_OPERATOR_TOKEN: "op-trust-token", VCP_CLIENT_TOKEN: "cl-trust-token" };
    const p = await serve(dir, ["--port", "0", "--trust-key", "ops.pub.pem", "--key-id", "ops", "--max-trust", "session"], tokens);
    expect(p.output()).toMatch(/trusted key 'ops' from .*ops\.pub\.pem \(max_trust session\)/);
    const ok = await call(p.url, "PUT", "/v1/bundles/guard", { token: "op-trust-token", body: signed(guardManifest({ trust: "session" }), GUARD_CODE) });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ bundle: "guard", signed_by: "ops" });
    // The key may grant at most `session`: a deployment-trust bundle it signed is refused.
    const over = await call(p.url, "PUT", "/v1/bundles/guard", { token: "op-trust-token", body: signed(guardManifest({ version: "1.1.0" }), GUARD_CODE) });
    expect(over.status).toBe(403);
    expect(over.body.error.code).toBe("TRUST_EXCEEDS_KEY");
    // A key the server was not told about is still refused.
    const stranger = await call(p.url, "PUT", "/v1/bundles/guard", { token: "op-trust-token", body: signed(guardManifest({ version: "1.2.0", trust: "session" }), GUARD_CODE, keys.stranger, "stranger") });
    expect(stranger.status).toBe(403);
    p.child.kill("SIGTERM");
    expect(await p.exited).toBe(0);

    const usage = (args: string[]) => {
      // Off a terminal a usage error is a JSON log line on stdout, like every line serve writes.
      const child = spawn(process.execPath, [SERVE, ...args], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
      let err = "";
      child.stdout.on("data", (d) => (err += d));
      child.stderr.on("data", (d) => (err += d));
      return new Promise<{ code: number | null; err: string }>((r) => child.on("exit", (code) => r({ code, err })));
    };
    const unpaired = await usage(["--trust-key", "ops.pub.pem"]);
    expect(unpaired.code).toBe(2);
    expect(unpaired.err).toMatch(/--trust-key and --key-id go in pairs/);
    const missing = await usage(["--trust-key", "nope.pem", "--key-id", "x"]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/nope\.pem does not exist/);
  });

  it("vcp-hooks push uploads a signed .vcpb and status reads the server; refusals print the server's code", async () => {
    const dir = scratch();
    writeFileSync(join(dir, "ops.pub.pem"), keys.ops.publicKeyPem);
    const p = await serve(dir, ["--port", "0", "--trust-key", "ops.pub.pem", "--key-id", "ops"], { VCP_OPERATOR_TOKEN: "op-push", VCP_CLIENT_TOKEN: "cl-push" });
    writeFileSync(join(dir, "guard.vcpb"), JSON.stringify(signed(guardManifest(), GUARD_CODE)));
    writeFileSync(join(dir, "stranger.vcpb"), JSON.stringify(signed(guardManifest({ version: "2.0.0" }), GUARD_CODE, keys.stranger, "stranger")));

    const pushed = await cli(["push", "guard.vcpb", "--server", p.url, "--token", "op-push"], { cwd: dir });
    expect(pushed.code).toBe(0);
    expect(pushed.stdout).toMatch(/installed guard@1\.0\.0 .*signed by ops/);
    expect((await call(p.url, "GET", "/v1/bundles/guard", { token: "op-push" })).body).toMatchObject({ version: "1.0.0", signed_by: "ops" });
    // The same file again: nothing changes, and push says so (200 unchanged: true).
    const again = await cli(["push", "guard.vcpb", "--server", p.url, "--token", "op-push"], { cwd: dir });
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^already installed \(nothing changed\): guard@1\.0\.0 /);

    const refused = await cli(["push", "stranger.vcpb", "--server", p.url, "--token", "op-push"], { cwd: dir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/403 SIGNATURE_INVALID/);
    const badToken = await cli(["push", "guard.vcpb", "--server", p.url, "--token", "nope"], { cwd: dir });
    expect(badToken.code).toBe(1);
    expect(badToken.stderr).toMatch(/401 UNAUTHENTICATED/);

    const status = await cli(["status", "--server", p.url, "--token", "op-push", "--json"], { cwd: dir });
    expect(status.code).toBe(0);
    expect((JSON.parse(status.stdout) as { bundles: Array<{ bundle: string }> }).bundles.map((b) => b.bundle)).toEqual(["guard"]);
    const human = await cli(["status", "--server", p.url, "--token", "op-push"], { cwd: dir });
    expect(human.stdout).toMatch(/bundles \(1\):\n {2}guard@1\.0\.0/);
    p.child.kill("SIGTERM");
    expect(await p.exited).toBe(0);
    const down = await cli(["status", "--server", p.url, "--token", "op-push"], { cwd: dir });
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1:\d+ \(fetch failed: connect ECONNREFUSED 127\.0\.0\.1:\d+\)/); // the cause, not only "fetch failed"
  }, 60_000); // a server start and seven CLI processes: 17 s at a load of 16 on 2 cores

  it("an invalid config fails at start naming the field (exit 1); a bad flag is a usage error (exit 2)", async () => {
    const dir = scratch();
    writeFileSync(join(dir, "vcp.yaml"), "listen: { host: 127.0.0.1, port: 99999 }\nlimits: { body_bytes: 12 }\n");
    const child = spawn(process.execPath, [SERVE, "--config", "vcp.yaml"], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    let err = "";
    child.stdout.on("data", (d) => (err += d));
    child.stderr.on("data", (d) => (err += d));
    const code = await new Promise((r) => child.on("exit", r));
    expect(code).toBe(1);
    // The refusal is a JSON log line like every other (the log stream is JSON from its first line).
    expect(err.split("\n").filter(Boolean).map((line) => JSON.parse(line) as { level: number })).toEqual([expect.objectContaining({ level: 60, code: "INVALID_CONFIG" })]);
    expect(err).toMatch(/INVALID_CONFIG/);
    expect(err).toMatch(/listen\.port/);
    expect(err).toMatch(/limits\.body_bytes/);
    const usage = spawn(process.execPath, [SERVE, "--bogus"], { cwd: dir, stdio: "ignore" });
    expect(await new Promise((r) => usage.on("exit", r))).toBe(2);
  });

  it("a second serve on the same data_dir exits 1 with DATA_DIR_LOCKED naming the first's pid; the first keeps serving", async () => {
    const dir = scratch();
    vcpYaml(dir, { operator: "op-lock-0123456789", client: "cl-lock-0123456789" });
    const first = await serve(dir, ["--config", "vcp.yaml"]);
    const child = spawn(process.execPath, [SERVE, "--config", "vcp.yaml"], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    children.push(child);
    let err = "";
    child.stdout.on("data", (d) => (err += d));
    child.stderr.on("data", (d) => (err += d));
    expect(await new Promise((r) => child.on("exit", r))).toBe(1);
    expect(err).toMatch(/DATA_DIR_LOCKED/);
    expect(err).toContain(`pid ${first.child.pid}`);
    expect(err).toContain(join(dir, "data"));
    expect((await call(first.url, "GET", "/v1/audit/head", { token: "op-lock-0123456789" })).status).toBe(200);
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    // Released on a clean stop: the next start works.
    const again = await serve(dir, ["--config", "vcp.yaml"]);
    again.child.kill("SIGTERM");
    expect(await again.exited).toBe(0);
  });

  it("audit.sink ships the audit records of served chains to the receiver, with the receiver's own headers; status shows it", async () => {
    const received: Array<{ seq: number; kind: string }> = [];
    const auths: Array<string | undefined> = [];
    const { createServer: createHttpServer } = await import("node:http");
    const rx = createHttpServer((req, res) => {
      let body = "";
      req.on("data", (d) => (body += d));
      req.on("end", () => {
        auths.push(req.headers.authorization);
        for (const line of body.split("\n").filter(Boolean)) received.push(JSON.parse(line) as { seq: number; kind: string });
        res.end("ok");
      });
    });
    await new Promise<void>((r) => rx.listen(0, "127.0.0.1", r));
    try {
      const rxUrl = `http://127.0.0.1:${(rx.address() as { port: number }).port}/logs`;
      const dir = scratch();
      vcpYaml(dir, { operator: "op-S", client: "cl-S", extra: `audit: { sink: { url: "${rxUrl}", interval_ms: 50, headers: { Authorization: "Bearer rx-secret" } } }` });
      const p = await serve(dir, ["--config", "vcp.yaml"]);
      expect((await call(p.url, "PUT", "/v1/bundles/guard", { token: "op-S", body: signed(guardManifest(), GUARD_CODE) })).status).toBe(201);
      const open = await call(p.url, "POST", "/v1/sessions", { token: "cl-S", body: { session_id: "s1", context: { user: "ana" }, constitution } });
      expect(open.status).toBe(201);
      expect((await call(p.url, "POST", "/v1/sessions/s1/chains/pre_inject", { token: "cl-S", body: { event: events.pre_inject } })).status).toBe(200);
      const head = (await call(p.url, "GET", "/v1/audit/head", { token: "op-S" })).body as { seq: number };
      await vi.waitFor(() => expect(received.map((r) => r.seq)).toEqual(Array.from({ length: head.seq }, (_, i) => i + 1)), { timeout: 15_000, interval: 50 });
      expect(received.some((r) => r.kind === "chain")).toBe(true);
      expect(new Set(auths)).toEqual(new Set(["Bearer rx-secret"]));
      // The receiver has the records before the sink has its answer and moves its cursor: wait for that.
      await vi.waitFor(async () => {
        const status = (await call(p.url, "GET", "/v1/status", { token: "op-S" })).body as { server: { audit_sink: { cursor_seq: number; url: string } } };
        expect(status.server.audit_sink).toMatchObject({ url: rxUrl });
        expect(status.server.audit_sink.cursor_seq).toBeGreaterThanOrEqual(head.seq);
      }, { timeout: 15_000, interval: 50 });
      expect(p.output()).not.toContain("rx-secret");
      // serve wires the sink's metrics and the build into GET /metrics.
      const metrics = (await call(p.url, "GET", "/metrics", { token: "op-S" })).text;
      expect(metrics).toMatch(/^vcp_audit_sink_lag_records \d+$/m);
      expect(metrics).toMatch(/^vcp_audit_sink_shipped_records_total [1-9]/m);
      expect(metrics).toMatch(/^vcp_build_info\{version="\d+\.\d+\.\d+",commit="(?:[0-9a-f]{40}|unknown)",node="24\./m);
      expect(metrics).toMatch(/^vcp_sandbox_host_resident_memory_bytes [1-9]/m);
      p.child.kill("SIGTERM");
      expect(await p.exited).toBe(0);
    } finally {
      await new Promise<void>((r) => rx.close(() => r()));
    }
  });

  it("audit.retention holds segments a down sink has not shipped (status and metrics say so), deletes them once shipped, and the log still verifies", async () => {
    const { createServer: createHttpServer } = await import("node:http");
    const rx = createHttpServer((req, res) => {
      req.resume();
      req.on("end", () => res.end("ok"));
    });
    // A port nobody listens on yet: the receiver is down until it is started on it below.
    await new Promise<void>((r) => rx.listen(0, "127.0.0.1", r));
    const port = (rx.address() as { port: number }).port;
    await new Promise<void>((r) => rx.close(() => r()));
    try {
      const dir = scratch();
      vcpYaml(dir, {
        operator: "op-R",
        client: "cl-R",
        extra: `audit: { rotate_bytes: 4096, sink: { url: "http://127.0.0.1:${port}/logs", interval_ms: 50, max_backoff_ms: 100 }, retention: { max_segments: 1, interval_ms: 200 } }`,
      });
      const p = await serve(dir, ["--config", "vcp.yaml"]);
      expect((await call(p.url, "PUT", "/v1/bundles/guard", { token: "op-R", body: signed(guardManifest(), GUARD_CODE) })).status).toBe(201);
      expect((await call(p.url, "POST", "/v1/sessions", { token: "cl-R", body: { session_id: "s1", context: { user: "ana" }, constitution } })).status).toBe(201);
      const segments = () => readdirSync(join(dir, "data/audit")).filter((f) => /^audit\.jsonl\.\d{6}$/.test(f));
      for (let i = 0; segments().length < 3; i++) {
        expect(i, "chains needed to rotate the audit log three times").toBeLessThan(200);
        expect((await call(p.url, "POST", "/v1/sessions/s1/chains/pre_inject", { token: "cl-R", body: { event: events.pre_inject } })).status).toBe(200);
      }
      type Retention = { blocked: boolean; held_segments: number; held_bytes: number; blocked_reason: string | null; deleted_segments: number; segments: number };
      const retention = async () => ((await call(p.url, "GET", "/v1/status", { token: "op-R" })).body as { audit: { retention: Retention } }).audit.retention;
      await vi.waitFor(async () => expect((await retention()).held_segments).toBeGreaterThanOrEqual(2), { timeout: 20_000, interval: 100 });
      const held = await retention();
      expect(held).toMatchObject({ blocked: true, deleted_segments: 0 });
      expect(held.held_bytes).toBeGreaterThan(0);
      expect(held.blocked_reason).toMatch(/sink has not acknowledged/);
      expect(segments().length).toBeGreaterThanOrEqual(3);
      const blockedMetrics = (await call(p.url, "GET", "/metrics", { token: "op-R" })).text;
      expect(blockedMetrics).toMatch(/^vcp_audit_retention_blocked 1$/m);
      expect(blockedMetrics).toMatch(/^vcp_audit_retention_held_bytes [1-9]\d*$/m);
      expect(blockedMetrics).toMatch(/^vcp_audit_retention_deleted_segments_total 0$/m);
      const statusCli = await cli(["status", "--server", p.url, "--token", "op-R"]);
      expect(statusCli.stdout).toMatch(/^ {2}retention: \d+ rotated segment\(s\), \d+ bytes on disk, deleted 0 \(0 bytes\); HOLDING \d+ segment\(s\) \(\d+ bytes\) past the limits: the sink has not acknowledged/m);

      // The receiver comes up: the sink ships, and retention deletes what it shipped.
      await new Promise<void>((r) => rx.listen(port, "127.0.0.1", r));
      await vi.waitFor(async () => {
        expect(await retention()).toMatchObject({ blocked: false, segments: 1 });
        expect(segments().length).toBe(1);
      }, { timeout: 30_000, interval: 100 });
      expect((await retention()).deleted_segments).toBeGreaterThanOrEqual(2);
      const shippedMetrics = (await call(p.url, "GET", "/metrics", { token: "op-R" })).text;
      expect(shippedMetrics).toMatch(/^vcp_audit_retention_blocked 0$/m);
      expect(shippedMetrics).toMatch(/^vcp_audit_retention_deleted_segments_total [1-9]/m);
      // Prometheus' own linter finds nothing in the retention families (.ci/run installs promtool).
      const families = shippedMetrics.split("\n").filter((l) => /^(# (HELP|TYPE) )?vcp_audit_(retention_|log_|oldest_)/.test(l)).join("\n");
      expect(families.match(/^# TYPE /gm)).toHaveLength(9);
      const promtool = spawnSync("promtool", ["check", "metrics"], { input: `${families}\n`, encoding: "utf8" });
      expect(promtool.error, "promtool not found: apt-get install prometheus").toBeUndefined();
      expect(promtool.stdout + promtool.stderr).toBe("");
      p.child.kill("SIGTERM");
      expect(await p.exited).toBe(0);

      const verified = await cli(["audit", "verify", join(dir, "data/audit/audit.jsonl")]);
      expect(verified.code, verified.stdout + verified.stderr).toBe(0);
      expect(verified.stdout).toMatch(/^OK \d+ record\(s\); head seq \d+ .*; starts at seq \d+: records 1–\d+ were deleted by audit retention/m);
    } finally {
      if (rx.listening) await new Promise<void>((r) => { rx.closeAllConnections(); rx.close(() => r()); });
    }
  });

  it("SIGHUP reloads tokens live, keeps the previous config when the new one is invalid, and names restart-only changes", async () => {
    const dir = scratch();
    vcpYaml(dir, { operator: "op-A", client: "cl-A" });
    const p = await serve(dir, ["--config", "vcp.yaml"]);
    expect((await call(p.url, "GET", "/v1/bundles", { token: "op-A" })).status).toBe(200);

    vcpYaml(dir, { operator: "op-B", client: "cl-B", extra: "pool: { threads: 3 }" });
    p.child.kill("SIGHUP");
    await p.waitFor(/"config reloaded"/);
    expect(p.output()).toMatch(/take effect only after a restart/);
    expect(p.output()).toMatch(/"pool"/);
    expect((await call(p.url, "GET", "/v1/bundles", { token: "op-A" })).status).toBe(401);
    expect((await call(p.url, "GET", "/v1/bundles", { token: "op-B" })).status).toBe(200);

    writeFileSync(join(dir, "vcp.yaml"), "auth: [ { id: x, role: operator, token_sha256: nothex } ]\n");
    p.child.kill("SIGHUP");
    await p.waitFor(/config reload failed: keeping the previous config/);
    expect((await call(p.url, "GET", "/v1/bundles", { token: "op-B" })).status).toBe(200);
    const status = await call(p.url, "GET", "/v1/status", { token: "op-B" });
    expect(status.body.server.reload).toMatchObject({ ok: false });
    expect(status.body.server.reload.error).toMatch(/token_sha256/);

    p.child.kill("SIGTERM");
    expect(await p.exited).toBe(0);
  });

  it("SIGTERM drains: an in-flight chain finishes with 200, then the process exits 0", async () => {
    const dir = scratch();
    vcpYaml(dir, { operator: "op", client: "cl" });
    const p = await serve(dir, ["--config", "vcp.yaml"]);
    const manifest = guardManifest({ hooks: [{ name: "slow_hook", type: "pre_inject", action: "slow", priority: 50, timeout_ms: 5000 }] });
    expect((await call(p.url, "PUT", "/v1/bundles/guard", { token: "op", body: signed(manifest, GUARD_CODE) })).status).toBe(201);
    const open = await call(p.url, "POST", "/v1/sessions", { token: "cl", body: { session_id: "s", context: { a: 1 }, constitution } });
    const body = open.status === 201 ? { event: events.pre_inject } : { context: { a: 1 }, constitution, event: events.pre_inject };
    const inflight = call(p.url, "POST", "/v1/sessions/s/chains/pre_inject", { token: "cl", body });
    await new Promise((r) => setTimeout(r, 150));
    p.child.kill("SIGTERM");
    const reply = await inflight;
    expect(reply.status).toBe(200);
    expect(reply.body.hook_results[0]).toMatchObject({ hook: "slow_hook", outcome: "ok" });
    expect(await p.exited).toBe(0);
    expect(p.output()).toMatch(/shutting down: draining/);
    // bundles persisted in data_dir survive the restart
    expect(existsSync(join(dir, "data"))).toBe(true);
  });
});
