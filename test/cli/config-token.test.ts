// `vcp-hooks config check` and `vcp-hooks token`, run as users run them (the built CLI in a child process).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { cleanup, cli, scratchDir } from "./helpers.js";

const dirs: string[] = [];
afterAll(() => cleanup(dirs));

describe("vcp-hooks config check", () => {
  test("a valid config: exit 0", async () => {
    const dir = scratchDir(dirs);
    writeFileSync(join(dir, "vcp.yaml"), "listen: { port: 9000 }\nlimits: { body_bytes: 2048 }\n");
    const run = await cli(["config", "check", "--config", "vcp.yaml"], { cwd: dir });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("vcp.yaml: valid");
  });

  test("names every bad field at once, keyring keys included, with exit 1 and nothing started", async () => {
    const dir = scratchDir(dirs);
    writeFileSync(
      join(dir, "vcp.yaml"),
      ["listen: { port: 70000 }", "auth:", "  - { id: a, role: admin, token_sha256: abc }", "bogus: 1"].join("\n"),
    );
    const run = await cli(["config", "check", "--config", "vcp.yaml", "--json"], { cwd: dir });
    expect(run.code).toBe(1);
    const fields = (JSON.parse(run.stdout) as { problems: Array<{ field: string }> }).problems.map((p) => p.field);
    expect(fields).toEqual(expect.arrayContaining(["listen.port", "auth[0].role", "auth[0].token_sha256", "(root)"]));

    writeFileSync(
      join(dir, "keys.yaml"),
      ["keyring:", "  keys:", "    - { key_id: a, public_key: 'not a key', max_trust: deployment }", "    - { key_id: b, public_key_file: missing.pem, max_trust: deployment }"].join("\n"),
    );
    const keys = await cli(["config", "check", "-c", "keys.yaml"], { cwd: dir });
    expect(keys.code).toBe(1);
    expect(keys.stdout).toContain("2 problems");
    expect(keys.stdout).toMatch(/keyring\.keys\[0\]\.public_key: .*PEM/);
    expect(keys.stdout).toMatch(/keyring\.keys\[1\]\.public_key_file: cannot read .*missing\.pem/);
  });

  test("a YAML syntax error names the line; a missing file is a usage error", async () => {
    const dir = scratchDir(dirs);
    writeFileSync(join(dir, "vcp.yaml"), "listen:\n  port: [1,\n");
    const run = await cli(["config", "check"], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/YAML syntax error at line \d+/);
    const missing = await cli(["config", "check", "--config", "nope.yaml"], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("nope.yaml does not exist");
  });
});

describe("vcp-hooks token", () => {
  test("prints a token once and an auth entry a config check accepts, whose hash matches the token", async () => {
    const run = await cli(["token", "--role", "operator", "--id", "ops", "--json"]);
    expect(run.code).toBe(0);
    const t = JSON.parse(run.stdout) as { token: string; token_sha256: string; role: string; id: string };
    expect(t.token).toMatch(/^vcp_op_[A-Za-z0-9_-]{43}$/);
    const { createHash } = await import("node:crypto");
    expect(t.token_sha256).toBe(createHash("sha256").update(t.token).digest("hex"));
    const dir = scratchDir(dirs);
    writeFileSync(join(dir, "vcp.yaml"), `auth:\n  - { id: ${t.id}, role: ${t.role}, token_sha256: ${t.token_sha256} }\n`);
    expect((await cli(["config", "check"], { cwd: dir })).code).toBe(0);
  });

  test("a metrics token: its own prefix, and an auth entry a config check accepts", async () => {
    const run = await cli(["token", "--role", "metrics", "--id", "prometheus", "--json"]);
    expect(run.code).toBe(0);
    const t = JSON.parse(run.stdout) as { token: string; token_sha256: string; role: string; id: string };
    expect(t).toMatchObject({ role: "metrics", id: "prometheus", token: expect.stringMatching(/^vcp_mt_[A-Za-z0-9_-]{43}$/) });
    const dir = scratchDir(dirs);
    writeFileSync(join(dir, "vcp.yaml"), `auth:\n  - { id: ${t.id}, role: ${t.role}, token_sha256: ${t.token_sha256} }\n`);
    expect((await cli(["config", "check"], { cwd: dir })).code).toBe(0);
  });

  test("refuses an unknown role", async () => {
    const run = await cli(["token", "--role", "root"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--role must be one of operator, client, approver, metrics");
  });

  test("an approver token for named clients: its printed entry passes config check; approves on another role is refused", async () => {
    const run = await cli(["token", "--role", "approver", "--id", "alice-human", "--approves", "app-a,app-b"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/vcp_ap_[A-Za-z0-9_-]{43}/);
    const entry = /- (\{ id: .* \})/.exec(run.stdout)![1]!;
    expect(entry).toContain('approves: ["app-a","app-b"]');
    const dir = scratchDir(dirs);
    const clients = ["app-a", "app-b"].map((id, i) => `  - { id: ${id}, role: client, token_sha256: ${"ab"[i]!.repeat(64)} }\n`).join("");
    writeFileSync(join(dir, "vcp.yaml"), `auth:\n  - ${entry}\n${clients}`);
    expect((await cli(["config", "check"], { cwd: dir })).code).toBe(0);
    // A client id no entry holds is a typo the check names.
    writeFileSync(join(dir, "vcp.yaml"), `auth:\n  - ${entry}\n${clients.split("\n")[0]}\n`);
    const typo = await cli(["config", "check"], { cwd: dir });
    expect(typo.code).toBe(1);
    expect(typo.stdout).toContain("auth[0].approves[1]");
    writeFileSync(join(dir, "vcp.yaml"), `auth:\n  - ${entry.replace("role: approver", "role: client")}\n`);
    const refused = await cli(["config", "check"], { cwd: dir });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain("auth[0].approves");
    expect((await cli(["token", "--role", "client", "--approves", "x"])).code).toBe(2);
  });
});
