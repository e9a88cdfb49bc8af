/**
 * The container and service files: they cannot be built or started on CI's machines (no container
 * engine, no systemd as init), so these tests check what can break silently — the lint, and that the
 * image build copies everything the package needs and the compose file mounts what the image writes.
 */
import { execFile } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, test } from "vitest";
import YAML from "yaml";

const run = promisify(execFile);
const dockerfile = readFileSync("Dockerfile", "utf8");
const buildStage = dockerfile.split(/^FROM /m)[1] ?? "";
const copied = [...buildStage.matchAll(/^COPY (.+) \S+$/gm)].flatMap((m) => m[1]!.split(/\s+/));

describe("Dockerfile", () => {
  test("passes dockerfilelint", async () => {
    const { stdout } = await run(process.execPath, ["node_modules/dockerfilelint/bin/dockerfilelint", "Dockerfile"]);
    expect(stdout).toMatch(/Issues: None found/);
  });

  test("the build stage copies every source tsc compiles and every non-dist path the package ships", () => {
    const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { files: string[] };
    const tsconfig = JSON.parse(readFileSync("tsconfig.json", "utf8")) as { include: string[] };
    const needed = [...tsconfig.include.map((p) => p.split("/")[0]!), ...pkg.files.filter((f) => !f.startsWith("dist")).map((f) => f.split("/")[0]!), "scripts", "package.json", "package-lock.json", "tsconfig.json", /* npm run build bundles the operator console from it */ "console"];
    for (const path of new Set(needed)) expect(copied, `COPY ${path} in the build stage`).toContain(path);
  });

  test("runs as a non-root user with the data directory as a volume and a health check", () => {
    expect(dockerfile).toMatch(/^USER vcp$/m);
    expect(dockerfile).toMatch(/^VOLUME \["\/srv\/vcp\/\.vcp"\]$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\n?.*\/healthz/m);
  });
});

describe("compose.yaml", () => {
  const compose = YAML.parse(readFileSync("compose.yaml", "utf8")) as { services: Record<string, Record<string, unknown>> };
  const service = compose.services["vcp-hooks"]!;

  test("mounts the image's data volume, read-only root, loopback port, tokens required", () => {
    expect(service["volumes"]).toContain("vcp-data:/srv/vcp/.vcp");
    expect(service["read_only"]).toBe(true);
    expect(service["ports"]).toEqual(["127.0.0.1:8787:8787"]);
    const env = service["environment"] as Record<string, string>;
    expect(env["VCP_OPERATOR_TOKEN"]).toMatch(/:\?/);
    expect(env["VCP_CLIENT_TOKEN"]).toMatch(/:\?/);
  });
});

describe("deploy/vcp-hooks.service", () => {
  const unit = readFileSync("deploy/vcp-hooks.service", "utf8");
  const directives = new Map([...unit.matchAll(/^(\w+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]));

  test("is hardened and bounded", () => {
    expect(directives.get("NoNewPrivileges")).toBe("yes");
    expect(directives.get("ProtectSystem")).toBe("strict");
    expect(directives.get("MemoryMax")).toMatch(/^\d+[KMG]$/);
    expect(directives.get("User")).toBe("vcp");
    expect(directives.get("ReadWritePaths")).toBe("/var/lib/vcp-hooks");
    // V8's JIT needs W+X pages: this directive would kill every isolate.
    expect(directives.has("MemoryDenyWriteExecute")).toBe(false);
  });

  test("reloads with SIGHUP and serves a config file", () => {
    expect(directives.get("ExecReload")).toBe("/bin/kill -HUP $MAINPID");
    expect(directives.get("ExecStart")).toMatch(/ serve --config \/etc\/vcp-hooks\/vcp\.yaml$/);
  });

  test("names no install prefix; the header's install line points it at npm's global prefix, wherever that is", async () => {
    expect(directives.get("ExecStart")).toMatch(/^vcp-hooks serve /);
    const install = /^#\s+(sed .* deploy\/vcp-hooks\.service) > \/etc\/systemd\/system\/vcp-hooks\.service$/m.exec(unit)?.[1];
    expect(install, "the header's sed line").toBeDefined();
    // An npm whose global prefix is not /usr/local: /opt/…-like, here a temporary directory.
    const dir = mkdtempSync(join(tmpdir(), "vcp-unit-"));
    try {
      const prefix = join(dir, "prefix");
      mkdirSync(join(prefix, "bin"), { recursive: true });
      writeFileSync(join(prefix, "bin", "vcp-hooks"), "#!/bin/sh\nexit 0\n");
      chmodSync(join(prefix, "bin", "vcp-hooks"), 0o755);
      const { stdout } = await run("bash", ["-c", install!], { env: { ...process.env, npm_config_prefix: prefix } });
      expect(stdout).toMatch(new RegExp(`^ExecStart=${prefix}/bin/vcp-hooks serve --config /etc/vcp-hooks/vcp\\.yaml$`, "m"));
      // systemd's own check: the command it would start exists and is executable (the unit as shipped fails it here).
      writeFileSync(join(dir, "vcp-hooks.service"), stdout);
      const verify = await run("systemd-analyze", ["verify", join(dir, "vcp-hooks.service")]).then(
        (r) => ({ code: 0, stderr: r.stderr }),
        (err: { code: number | string; stderr?: string }) => ({ code: err.code, stderr: err.stderr ?? "" }),
      );
      if (verify.code === "ENOENT" && process.env["CI"] === undefined) return; // no systemd on this machine
      expect(verify).toEqual({ code: 0, stderr: "" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
