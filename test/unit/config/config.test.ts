import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { loadConfigFile, resolveConfig } from "../../../src/config/config.js";
import { DEFAULTS } from "../../../src/config/defaults.js";

describe("resolveConfig", () => {
  test("an empty config gets the safe defaults of DESIGN §6.4, paths resolved against the base dir", () => {
    const config = resolveConfig({}, "/srv/vcp");
    expect(config.listen).toEqual({ host: "127.0.0.1", port: 8787 });
    expect(config.data_dir).toBe("/srv/vcp/.vcp");
    expect(config.audit.path).toBe("/srv/vcp/.vcp/audit/audit.jsonl");
    expect(config.require_signatures).toBe(true);
    expect(config.limits).toEqual({
      body_bytes: 1048576, bundle_bytes: 5242880, registrations_per_minute: 30, result_bytes: 1048576, sessions_per_client: 100,
      json_depth: 64, input_bytes: 1048576, annotation_bytes_per_hook: 65536, annotation_bytes_per_chain: 262144,
      streams_per_principal: 8, stream_buffer_bytes: 1048576,
    });
    expect(config.fetch.deny_llm_hosts).toContain("api.openai.com");
    expect(Object.isFrozen(config.limits)).toBe(true);
  });

  test("console.security_report_dir: the bench's output by default, relative to the config file's directory, and never empty", () => {
    expect(resolveConfig({}, "/srv/vcp").console.security_report_dir).toBe("/srv/vcp/bench/reports/sandbox");
    expect(resolveConfig({ console: { security_report_dir: "/var/lib/vcp/report" } }, "/srv/vcp").console.security_report_dir).toBe("/var/lib/vcp/report");
    expect(() => resolveConfig({ console: { security_report_dir: "" } }, "/srv/vcp")).toThrow(/console\.security_report_dir/);
    expect(() => resolveConfig({ console: { report: "x" } }, "/srv/vcp")).toThrow(/console/);
  });

  test("serve redacts by default every key the library redacts (access_token, cookie, private_key, …)", () => {
    const config = resolveConfig({}, "/srv/vcp");
    expect(config.redact_keys).toEqual(DEFAULTS.redact_keys);
    expect(config.redact_keys).toEqual(expect.arrayContaining(["access_token", "client_secret", "cookie", "private_key"]));
  });

  test("log_level, documented as live-reloadable, is a config key with the four pino levels", () => {
    expect(resolveConfig({ log_level: "debug" }, "/srv").log_level).toBe("debug");
    expect(resolveConfig({}, "/srv").log_level).toBeUndefined();
    expect(() => resolveConfig({ log_level: "verbose" }, "/srv")).toThrow(/log_level/);
  });

  test.each([
    [{ listen: { port: 70000 } }, "listen.port"],
    [{ auth: [{ id: "ops", role: "operator", token_sha256: "my-plain-token" }] }, "auth[0].token_sha256"],
    [{ auth: [{ id: "ops", role: "admin", token_sha256: "a".repeat(64) }] }, "auth[0].role"],
    [{ pool: { threads: 0 } }, "pool.threads"],
    [{ chain_deadline_ms: { pre_answer: 5 } }, "chain_deadline_ms"],
    [{ limits: { body_bytes: 10 } }, "limits.body_bytes"],
    [{ limits: { json_depth: 5000 } }, "limits.json_depth"],
    [{ limits: { input_bytes: 10 } }, "limits.input_bytes"],
    [{ limits: { annotation_bytes_per_hook: 0 } }, "limits.annotation_bytes_per_hook"],
    [{ conflict_strategy: "coin_flip" }, "conflict_strategy"],
    [{ keyring: { keys: [{ key_id: "k", max_trust: "deployment" }] } }, "keyring.keys[0]"],
    [{ session_hook_allowlist: ["just-a-bundle"] }, "session_hook_allowlist[0]"],
    [{ lisen: {} }, "(root)"],
  ])("%j is refused naming %s", (raw, field) => {
    expect(() => resolveConfig(raw, "/x")).toThrowError(expect.objectContaining({ code: "INVALID_CONFIG", message: expect.stringContaining(field) }));
  });

  test("audit.retention: deleting unshipped audit records is never a default", () => {
    const sink = { url: "http://127.0.0.1:4318/v1/logs" };
    // Without a sink, require_shipped (default true) cannot be met: refused, naming the field and both ways out.
    expect(() => resolveConfig({ audit: { retention: { max_segments: 5 } } }, "/x")).toThrowError(
      expect.objectContaining({ code: "INVALID_CONFIG", message: expect.stringMatching(/audit\.retention\.require_shipped: .*configure audit\.sink, or set require_shipped: false/) }),
    );
    // A limit is required: retention without one would delete nothing.
    expect(() => resolveConfig({ audit: { sink, retention: {} } }, "/x")).toThrowError(expect.objectContaining({ code: "INVALID_CONFIG", message: expect.stringMatching(/audit\.retention: give at least one of max_segments/) }));
    expect(() => resolveConfig({ audit: { sink, retention: { max_bytes: 10 } } }, "/x")).toThrowError(/audit\.retention\.max_bytes/);
    expect(() => resolveConfig({ audit: { sink, retention: { max_age_s: 0 } } }, "/x")).toThrowError(/audit\.retention\.max_age_s/);
    expect(resolveConfig({ audit: { sink, retention: { max_bytes: 1 << 30, max_age_s: 86_400 } } }, "/x").audit.retention).toEqual({ max_bytes: 1 << 30, max_age_s: 86_400, require_shipped: true, interval_ms: 60_000 });
    expect(resolveConfig({ audit: { retention: { max_segments: 0, require_shipped: false } } }, "/x").audit.retention).toMatchObject({ max_segments: 0, require_shipped: false });
    expect(resolveConfig({}, "/x").audit.retention).toBeUndefined();
  });

  test("duplicate auth ids are refused", () => {
    const entry = { id: "ops", role: "operator", token_sha256: "a".repeat(64) };
    expect(() => resolveConfig({ auth: [entry, entry] }, "/x")).toThrowError(/auth\[1\]\.id/);
  });
});

describe("auth[].token_env: a token from the environment (a Kubernetes Secret), kept only as its hash", () => {
  const token = `vcp_op_${"k".repeat(43)}`;
  test("the token is read and hashed; the config holds the hash and names the variable", () => {
    process.env.VCP_TEST_OP_TOKEN = token;
    try {
      const config = resolveConfig({ auth: [{ id: "ops", role: "operator", token_env: "VCP_TEST_OP_TOKEN" }] }, "/x");
      expect(config.auth[0]).toEqual({ id: "ops", role: "operator", token_env: "VCP_TEST_OP_TOKEN", token_sha256: createHash("sha256").update(token).digest("hex") });
      expect(JSON.stringify(config)).not.toContain(token);
    } finally {
      delete process.env.VCP_TEST_OP_TOKEN;
    }
  });

  test.each([
    [{ id: "ops", role: "operator", token_env: "VCP_TEST_UNSET_TOKEN" }, /auth\[0\]\.token_env: environment variable VCP_TEST_UNSET_TOKEN is not set/],
    [{ id: "ops", role: "operator", token_env: "VCP_TEST_SHORT_TOKEN" }, /auth\[0\]\.token_env: the token in VCP_TEST_SHORT_TOKEN is shorter than 32 characters/],
    [{ id: "ops", role: "operator", token_env: "VCP_TEST_OP_TOKEN", token_sha256: "a".repeat(64) }, /auth\[0\]: give exactly one of token_sha256 or token_env/],
    [{ id: "ops", role: "operator" }, /auth\[0\]: give exactly one of token_sha256 or token_env/],
    [{ id: "ops", role: "operator", token_env: "not a name" }, /auth\[0\]\.token_env: must be an environment variable name/],
  ])("%j is refused: %s", (entry, message) => {
    process.env.VCP_TEST_SHORT_TOKEN = "short";
    process.env.VCP_TEST_OP_TOKEN = token;
    try {
      expect(() => resolveConfig({ auth: [entry] }, "/x")).toThrowError(expect.objectContaining({ code: "INVALID_CONFIG", message: expect.stringMatching(message) }));
    } finally {
      delete process.env.VCP_TEST_SHORT_TOKEN;
      delete process.env.VCP_TEST_OP_TOKEN;
    }
  });
});

describe("loadConfigFile", () => {
  test("YAML syntax errors name the line", () => {
    const dir = mkdtempSync(join(tmpdir(), "vcp-config-"));
    const file = join(dir, "vcp.yaml");
    writeFileSync(file, "listen:\n  port: 8787\n bad: [\n");
    expect(() => loadConfigFile(file)).toThrowError(/vcp\.yaml: YAML syntax error at line \d+/);
  });

  test("key files resolve against the config file's directory", () => {
    const dir = mkdtempSync(join(tmpdir(), "vcp-config-"));
    const file = join(dir, "vcp.yaml");
    writeFileSync(file, "keyring:\n  keys:\n    - { key_id: ops, public_key_file: keys/ops.pub.pem, max_trust: deployment }\n");
    expect(loadConfigFile(file).keyring.keys[0]!.public_key_file).toBe(join(dir, "keys/ops.pub.pem"));
  });

  test("a missing file says so", () => {
    expect(() => loadConfigFile("/nonexistent/vcp.yaml")).toThrowError(/cannot read the config file \(ENOENT\)/);
  });
});
