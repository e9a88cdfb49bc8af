// `vcp-hooks config check` refuses exactly what `vcp-hooks serve --config` refuses (src/cli/preflight.ts,
// one function for both): a table of every refusal serve has before it opens anything, each checked
// both ways in-process (same codes, same messages), a sample of rows spawned for real (the built CLI
// and server, whose refusal is a JSON log line), and a valid config that the check passes and serve
// starts with.
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, afterEach, describe, expect, test, vi } from "vitest";
import { checkConfigFile } from "../../src/cli/config.js";
import { startServe, StartRefused } from "../../src/cli/serve.js";
import { VcpError } from "../../src/index.js";
import { generateKeyPair } from "../../src/tooling.js";
import { cleanup, MAIN, scratchDir } from "./helpers.js";

const SERVE = resolve("dist/src/cli/serve.js");
const dirs: string[] = [];
afterAll(() => cleanup(dirs));
afterEach(() => vi.unstubAllEnvs());

const ops = generateKeyPair();
const runtimeKey = generateKeyPair();
const LONG_TOKEN = "t".repeat(40);

interface Row {
  /** vcp.yaml lines (data_dir ./data unless given). */
  yaml: string[];
  /** Files to write first, relative to the scratch directory. */
  files?: Record<string, string>;
  /** Environment for both (an empty string unsets). */
  env?: Record<string, string>;
  /** The first (and here only) refusal: its message, whole. */
  refusal: RegExp;
  /** Refused by the check's schema pass, not by the preflight proper. */
  code?: string;
}

// Every variable a row may set: cleared for every row, so one row's environment never leaks into another.
const ROW_ENV = ["VCP_PF_REDIS_URL", "VCP_PF_TOKEN", "VCP_REPLICA_ID", "VCP_LOG_LEVEL"];

const ROWS: Record<string, Row> = {
  "runtime_key_file does not exist": { yaml: ["runtime_key_file: ./missing.pem"], refusal: /^runtime_key_file: cannot read \/.*\/missing\.pem \(ENOENT\)$/ },
  "runtime_key_file is not an Ed25519 private key": {
    yaml: ["runtime_key_file: ./runtime.pem"],
    files: { "runtime.pem": "REPLACE_ME with the output of vcp-hooks keygen\n" },
    refusal: /^runtime_key_file: \/.*\/runtime\.pem is not an Ed25519 private key in PEM/,
  },
  "store.url_env names a variable that is not set": {
    yaml: ["store: { kind: redis, url_env: VCP_PF_REDIS_URL }"],
    refusal: /^store\.url_env: the environment variable VCP_PF_REDIS_URL is not set$/,
  },
  "store.url_env holds no redis URL": {
    yaml: ["store: { kind: redis, url_env: VCP_PF_REDIS_URL }"],
    env: { VCP_PF_REDIS_URL: "http://redis:6379" },
    refusal: /^store\.url_env: the environment variable VCP_PF_REDIS_URL does not hold a redis:\/\/ or rediss:\/\/ URL$/,
  },
  "auth[].token_env is not set": {
    yaml: ["auth: [ { id: ops, role: operator, token_env: VCP_PF_TOKEN } ]"],
    refusal: /vcp\.yaml: auth\[0\]\.token_env: environment variable VCP_PF_TOKEN is not set$/,
  },
  "auth[].token_env holds a short token": {
    yaml: ["auth: [ { id: ops, role: operator, token_env: VCP_PF_TOKEN } ]"],
    env: { VCP_PF_TOKEN: "short" },
    refusal: /vcp\.yaml: auth\[0\]\.token_env: the token in VCP_PF_TOKEN is shorter than 32 characters$/,
  },
  "VCP_REPLICA_ID breaks the replica id rule": {
    yaml: [],
    env: { VCP_REPLICA_ID: "pods/vcp-0" },
    refusal: /^VCP_REPLICA_ID: replica id 'pods\/vcp-0' must be 1–128 characters of A-Z a-z 0-9 \. _ -$/,
  },
  "the data directory's replica-id breaks the rule": {
    yaml: [],
    files: { "data/replica-id": "not a valid id!\n" },
    refusal: /^\/.*\/data\/replica-id: replica id 'not a valid id!' must be 1–128 characters/,
  },
  "data_dir lies below a file": {
    yaml: ["data_dir: ./blocker/data"],
    files: { blocker: "a file\n" },
    refusal: /^data_dir: cannot use \/.*\/blocker\/data: \/.*\/blocker is a file, not a directory$/,
  },
  "audit.path lies below a file": {
    yaml: ["audit: { path: ../blocker/audit.jsonl }"],
    files: { blocker: "a file\n" },
    refusal: /^audit\.path: cannot use \/.*\/blocker: it is a file, not a directory$|^audit\.path: cannot use \/.*\/blocker: \/.*\/blocker is a file, not a directory$/,
  },
  "the data directory's runtime key is damaged": {
    yaml: [],
    files: { "data/runtime-key.pem": "-----BEGIN PRIVATE KEY-----\ntruncated\n" },
    refusal: /^data_dir: \/.*\/data\/runtime-key\.pem is not an Ed25519 private key in PEM/,
  },
  "a keyring key file does not exist": {
    yaml: ["keyring: { keys: [ { key_id: ops, public_key_file: ./nope.pub.pem, max_trust: deployment } ] }"],
    refusal: /^keyring: keys\[0\]\.public_key_file: cannot read \/.*\/nope\.pub\.pem: ENOENT$/,
  },
  "two keyring keys share a key_id": {
    yaml: ["keyring: { keys: [ { key_id: ops, public_key_file: ./ops.pub.pem, max_trust: deployment }, { key_id: ops, public_key_file: ./ops.pub.pem, max_trust: session } ] }"],
    files: { "ops.pub.pem": ops.publicKeyPem },
    refusal: /^keyring: keys\[1\]\.key_id: 'ops' is listed twice$/,
  },
  "one profile is enabled twice": {
    yaml: ['profiles: { gemini-cli: {}, "gemini-cli@0.x": {} }'],
    refusal: /^profiles\.gemini-cli@0\.x: profile gemini-cli is listed twice \(one pinned version per name\)$/,
  },
  "VCP_LOG_LEVEL is not a log level": {
    yaml: [],
    env: { VCP_LOG_LEVEL: "loud" },
    refusal: /^VCP_LOG_LEVEL: 'loud' is not a log level \(fatal, error, warn, info, debug, trace, silent\)$/,
  },
  "the audit sink's cursor is damaged": {
    yaml: ['audit: { sink: { url: "http://127.0.0.1:9/logs" } }'],
    files: { "data/audit/sink.cursor": "not json\n" },
    refusal: /^audit\.sink: \/.*\/data\/audit\/sink\.cursor: not a sink cursor/,
  },
  "a schema error": { yaml: ["listen: { host: 127.0.0.1, port: 99999 }"], refusal: /vcp\.yaml: listen\.port: / },
};

function setUp(row: Row): string {
  const dir = scratchDir(dirs);
  for (const [name, text] of Object.entries(row.files ?? {})) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  const yaml = row.yaml.some((line) => line.startsWith("data_dir:")) ? row.yaml : ["data_dir: ./data", ...row.yaml];
  writeFileSync(join(dir, "vcp.yaml"), `${yaml.join("\n")}\n`);
  return join(dir, "vcp.yaml");
}

function stubRowEnv(row: Row): void {
  for (const name of ROW_ENV) vi.stubEnv(name, row.env?.[name] ?? "");
}

/** What `serve` (in-process) refuses with; [] when it started (then it is stopped). */
async function serveRefusals(file: string): Promise<Array<{ code: string; message: string }>> {
  try {
    const handle = await startServe(["--config", file, "--port", "0", "--host", "127.0.0.1"], { out: () => undefined });
    await handle.stop("test");
    return [];
  } catch (err) {
    if (err instanceof StartRefused) return err.problems.map((p) => ({ code: p.code, message: p.message }));
    if (err instanceof VcpError) return [{ code: err.code, message: err.message }];
    throw err;
  }
}

describe("config check and serve refuse the same, with the same code and message", () => {
  test.each(Object.entries(ROWS))("%s", async (_name, row) => {
    const file = setUp(row);
    stubRowEnv(row);
    const check = await checkConfigFile(file);
    expect(check.valid).toBe(false);
    expect(check.errors).toEqual([{ code: row.code ?? "INVALID_CONFIG", message: expect.stringMatching(row.refusal) }]);
    expect(await serveRefusals(file)).toEqual(check.errors);
  }, 60_000);

  test("a config the check calls valid is one serve starts with", async () => {
    const file = setUp({
      yaml: [
        "runtime_key_file: ./runtime.pem",
        "auth: [ { id: ops, role: operator, token_env: VCP_PF_TOKEN }, { id: prometheus, role: metrics, token_env: VCP_PF_TOKEN } ]",
        "keyring: { keys: [ { key_id: ops, public_key_file: ./ops.pub.pem, max_trust: deployment } ] }",
        "pool: { threads: 1 }",
      ],
      files: { "runtime.pem": runtimeKey.privateKeyPem, "ops.pub.pem": ops.publicKeyPem },
      refusal: /never/,
    });
    stubRowEnv({ yaml: [], refusal: /never/, env: { VCP_PF_TOKEN: LONG_TOKEN, VCP_REPLICA_ID: "replica-0", VCP_LOG_LEVEL: "warn" } });
    expect(await checkConfigFile(file)).toMatchObject({ valid: true, problems: [], errors: [] });
    expect(await serveRefusals(file)).toEqual([]);
  }, 120_000);

  test("the check lists every problem at once, one line each (serve logs each and exits 1)", async () => {
    const file = setUp({
      yaml: ["runtime_key_file: ./missing.pem", "store: { kind: redis, url_env: VCP_PF_REDIS_URL }", "keyring: { keys: [ { key_id: a, public_key: 'not a key', max_trust: deployment } ] }"],
      refusal: /never/,
    });
    stubRowEnv({ yaml: [], refusal: /never/, env: { VCP_REPLICA_ID: "a b" } });
    const check = await checkConfigFile(file);
    expect(check.problems.map((p) => p.field)).toEqual(["runtime_key_file", "store.url_env", "replica_id", "keyring.keys[0].public_key"]);
    expect(await serveRefusals(file)).toEqual(check.errors);
  }, 60_000);
});

describe("spawned for real: the built `config check` and `serve` agree, and serve's refusal is JSON", () => {
  const SAMPLE = ["runtime_key_file does not exist", "store.url_env names a variable that is not set", "data_dir lies below a file", "VCP_LOG_LEVEL is not a log level", "a schema error"];
  test.each(SAMPLE)("%s", async (name) => {
    const row = ROWS[name]!;
    const file = setUp(row);
    const env = { ...process.env };
    for (const variable of ROW_ENV) delete env[variable];
    Object.assign(env, row.env ?? {});
    const [check, serve] = await Promise.all([
      run([MAIN, "config", "check", "--config", file, "--json"], env),
      run([SERVE, "--config", file, "--port", "0"], env),
    ]);
    expect(check.code).toBe(1);
    const errors = (JSON.parse(check.stdout) as { errors: Array<{ code: string; message: string }> }).errors;
    expect(errors).toEqual([{ code: "INVALID_CONFIG", message: expect.stringMatching(row.refusal) }]);
    expect(serve.code).toBe(1);
    // Every line serve wrote is a JSON object; its fatal lines are the check's errors, in order.
    const lines = `${serve.stdout}${serve.stderr}`.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as { level: number; code?: string; msg: string });
    expect(lines.filter((l) => l.level === 60).map((l) => ({ code: l.code, message: l.msg.replace(/^vcp-hooks serve: [A-Z_]+: /, "") }))).toEqual(errors);
  }, 60_000);
});

function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ["--no-node-snapshot", ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 50_000);
    child.on("error", fail);
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}
