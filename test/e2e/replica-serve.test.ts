// `vcp-hooks serve --config` as one replica of several (issue 18): tokens from the environment
// (auth[].token_env, a Kubernetes Secret), a shared read-only modification-link key (runtime_key_file),
// the replica id from VCP_REPLICA_ID in status and in every audit record; each bad value stops the start
// with a message naming it.
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { generateKeyPair } from "../../src/tooling.js";
import { GUARD_CODE, call, constitution, events, guardManifest, keys, signed } from "./helpers.js";
import { cli } from "../cli/helpers.js";

const SERVE = resolve("dist/src/cli/serve.js");
const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const OPS = `vcp_op_${"o".repeat(43)}`;
const APP = `vcp_cl_${"a".repeat(43)}`;

/** A replica's files: vcp.yaml naming the tokens by variable and the shared key by path. */
function replicaDir(runtimeKey: string = generateKeyPair().privateKeyPem): string {
  const dir = mkdtempSync(join(tmpdir(), "vcp-replica-serve-"));
  dirs.push(dir);
  mkdirSync(join(dir, "secrets"));
  writeFileSync(join(dir, "secrets", "runtime-key.pem"), runtimeKey);
  chmodSync(join(dir, "secrets", "runtime-key.pem"), 0o400); // as a Secret volume mounts it
  writeFileSync(join(dir, "ops.pub.pem"), keys.ops.publicKeyPem);
  writeFileSync(
    join(dir, "vcp.yaml"),
    [
      "listen: { host: 127.0.0.1, port: 0 }",
      "data_dir: ./data",
      "runtime_key_file: ./secrets/runtime-key.pem",
      "auth:",
      "  - { id: ops, role: operator, token_env: VCP_OPS_TOKEN }",
      "  - { id: app, role: client, token_env: VCP_APP_TOKEN }",
      "keyring: { keys: [{ key_id: ops, public_key_file: ops.pub.pem, max_trust: deployment }] }",
    ].join("\n"),
  );
  return dir;
}

function start(dir: string, env: Record<string, string>) {
  const child = spawn(process.execPath, [SERVE, "--config", "vcp.yaml"], { cwd: dir, env: { ...process.env, VCP_OPERATOR_TOKEN: "", VCP_CLIENT_TOKEN: "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  const url = async (): Promise<string> => {
    for (let i = 0; i < 2400; i++) {
      const m = /serving at (http:\/\/[^\s"]+)/.exec(out);
      if (m) return m[1]!;
      if (child.exitCode !== null) throw new Error(`serve exited ${child.exitCode}:\n${out}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`serve did not start:\n${out}`);
  };
  return { child, exited, url, output: () => out };
}

describe("serve as one of several replicas", () => {
  it("tokens from the environment, the shared key, VCP_REPLICA_ID in status and in every audit record", async () => {
    const dir = replicaDir();
    const p = start(dir, { VCP_OPS_TOKEN: OPS, VCP_APP_TOKEN: APP, VCP_REPLICA_ID: "vcp-hooks-5c7d9-x2k4p" });
    const url = await p.url();
    expect(p.output()).not.toContain(OPS);
    const status = await call(url, "GET", "/v1/status", { token: OPS });
    expect(status.status).toBe(200);
    expect(status.body.audit).toMatchObject({ enabled: true, replica: "vcp-hooks-5c7d9-x2k4p" });
    expect((await call(url, "GET", "/v1/status", { token: APP })).status).toBe(403);
    expect((await call(url, "PUT", "/v1/bundles/guard", { token: OPS, body: signed(guardManifest(), GUARD_CODE) })).status).toBe(201);
    expect((await call(url, "POST", "/v1/sessions", { token: APP, body: { session_id: "r1", context: { user: "ana" }, constitution } })).status).toBe(201);
    expect((await call(url, "POST", "/v1/sessions/r1/chains/pre_inject", { token: APP, body: { event: events.pre_inject } })).status).toBe(200);
    p.child.kill("SIGTERM");
    expect(await p.exited).toBe(0);
    // The given key was used: none was generated in the data directory.
    expect(existsSync(join(dir, "data", "runtime-key.pem"))).toBe(false);
    const verify = await cli(["audit", "verify", join(dir, "data")]);
    expect(verify.code).toBe(0);
    expect(verify.stdout).toMatch(/^OK \d+ record\(s\); head seq \d+ sha256:[0-9a-f]{64}; replica vcp-hooks-5c7d9-x2k4p$/m);
  });

  it.each([
    ["a token variable that is not set (or empty)", { VCP_OPS_TOKEN: "" }, /auth\[0\]\.token_env: environment variable VCP_OPS_TOKEN is not set/],
    ["a token shorter than 32 characters", { VCP_OPS_TOKEN: "short" }, /the token in VCP_OPS_TOKEN is shorter than 32 characters/],
    ["a replica id with a slash", { VCP_REPLICA_ID: "pods/vcp-0" }, /VCP_REPLICA_ID: replica id 'pods\/vcp-0' must be 1–128 characters/],
  ])("%s stops the start, saying so", async (_what, env, message) => {
    const dir = replicaDir();
    const p = start(dir, { VCP_OPS_TOKEN: OPS, VCP_APP_TOKEN: APP, ...env });
    expect(await p.exited).toBe(1);
    expect(p.output()).toMatch(message);
    expect(p.output()).toContain("INVALID_CONFIG");
  });

  it("a runtime_key_file that is not an Ed25519 private key stops the start, naming the field", async () => {
    const dir = replicaDir("REPLACE_ME with the output of vcp-hooks keygen\n");
    const p = start(dir, { VCP_OPS_TOKEN: OPS, VCP_APP_TOKEN: APP });
    expect(await p.exited).toBe(1);
    expect(p.output()).toMatch(/INVALID_CONFIG: runtime_key_file: .*runtime-key\.pem is not an Ed25519 private key in PEM/);
  });
});
