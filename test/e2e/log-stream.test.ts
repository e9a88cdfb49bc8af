// `vcp-hooks serve` as a collector sees it (stdout and stderr, not a terminal): every line is one JSON
// object — the banner, a library's console warning (ioredis), the drain, a usage error — with the same
// `svc`, and no secret in any of them.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startRedisServer, type RedisServerHandle } from "../support/redis-server.js";
import { call, sha256 } from "./helpers.js";

const SERVE = resolve("dist/src/cli/serve.js");
const children: ChildProcess[] = [];
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
  for (const c of cleanups.splice(0).reverse()) await c();
});

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), "vcp-log-stream-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function serve(cwd: string, args: string[]) {
  const child = spawn(process.execPath, ["--no-node-snapshot", SERVE, ...args], { cwd, env: { ...process.env, VCP_OPERATOR_TOKEN: "", VCP_CLIENT_TOKEN: "", VCP_LOG_LEVEL: "" }, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  const waitFor = async (pattern: RegExp): Promise<string> => {
    for (let i = 0; i < 2400; i++) {
      const m = pattern.exec(out);
      if (m) return m[1] ?? m[0];
      if (child.exitCode !== null) throw new Error(`serve exited ${child.exitCode}:\n${out}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`timed out waiting for ${pattern}:\n${out}`);
  };
  /** Every line written, each parsed: a line that is not JSON fails here, naming it. */
  const lines = (): Array<Record<string, any>> =>
    out.split("\n").filter((line) => line !== "").map((line) => {
      try {
        return JSON.parse(line) as Record<string, any>;
      } catch {
        throw new Error(`not a JSON line: ${line}`);
      }
    });
  return { child, exited, waitFor, lines, output: () => out };
}

describe("serve's log stream is JSON lines", () => {
  it("banner, ioredis's console warning, reload and drain: every line one JSON object, no secret in any", async () => {
    const redis: RedisServerHandle = await startRedisServer();
    cleanups.push(() => redis.close());
    const dir = scratch();
    // A least-privilege Redis user without INFO (as managed Redis services hand out): ioredis skips
    // its ready check and says so with console.warn.
    const password = "acl-secret-4f1c9e";
    expect(await redis.command("ACL", "SETUSER", "vcp", "on", `>${password}`, "~*", "&*", "+@all", "-info")).toBe("OK");
    writeFileSync(
      join(dir, "vcp.yaml"),
      [
        "listen: { host: 127.0.0.1, port: 0 }",
        "data_dir: ./data",
        `auth: [ { id: ops, role: operator, token_sha256: "${sha256("op-log-stream")}" } ]`,
        "pool: { threads: 1 }",
        `store: { kind: redis, url: "redis://vcp:${password}@127.0.0.1:${redis.port}/0", prefix: logs }`,
      ].join("\n"),
    );
    const p = serve(dir, ["--config", "vcp.yaml"]);
    const url = await p.waitFor(/serving at (http:\/\/[^\s"]+)/);
    await p.waitFor(/Skipping the ready check/);
    expect((await call(url, "GET", "/v1/status", { token: "op-log-stream" })).status).toBe(200);
    p.child.kill("SIGHUP");
    await p.waitFor(/"config reloaded"/);
    p.child.kill("SIGTERM");
    expect(await p.exited).toBe(0);

    const lines = p.lines();
    expect(lines.every((l) => l["svc"] === "vcp-hooks" && typeof l["level"] === "number" && typeof l["msg"] === "string")).toBe(true);
    const banner = lines.find((l) => typeof l["msg"] === "string" && l["msg"].startsWith("vcp-hooks serving at "));
    expect(banner).toMatchObject({ level: 30, msg: `vcp-hooks serving at ${url}`, url, banner: expect.arrayContaining([expect.stringMatching(/^store: redis redis:\/\/127\.0\.0\.1:\d+\/0 prefix 'logs'/)]) });
    expect(lines).toEqual(expect.arrayContaining([expect.objectContaining({ level: 40, source: "console", msg: expect.stringMatching(/^Skipping the ready check because INFO command fails: "NOPERM/) })]));
    expect(lines.map((l) => l["msg"])).toEqual(expect.arrayContaining(["shutting down: draining in-flight requests", "stopped"]));
    expect(p.output()).not.toContain(password);
  }, 120_000);

  it("a usage error, off a terminal, is one fatal JSON line with the usage; exit 2", async () => {
    const p = serve(scratch(), ["--port", "seventy"]);
    expect(await p.exited).toBe(2);
    expect(p.lines()).toEqual([expect.objectContaining({ level: 60, svc: "vcp-hooks", msg: "usage error: --port: 'seventy' is not a port number (0–65535)", usage: expect.stringMatching(/^usage: vcp-hooks serve/) })]);
  }, 60_000);
});
