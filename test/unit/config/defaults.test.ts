// One source of defaults (config/defaults.ts): a vcp.yaml that says nothing and a library caller that
// passes nothing get the same values (issue 11: `serve` once redacted less than createRuntime).
import { describe, expect, test } from "vitest";
import { resolveConfig } from "../../../src/config/config.js";
import { DEFAULTS } from "../../../src/config/defaults.js";
import { DEFAULT_MAX_CODE_BYTES } from "../../../src/bundle/artifact.js";
import { DEFAULT_ANNOTATION_BYTES_PER_CHAIN, DEFAULT_ANNOTATION_BYTES_PER_HOOK } from "../../../src/chain/annotations.js";
import { DEFAULT_INPUT_BYTES, DEFAULT_JSON_DEPTH } from "../../../src/model/json-bounds.js";
import { DEFAULT_REGISTRATIONS_PER_MINUTE } from "../../../src/registry/rate-limit.js";
import { DEFAULT_SANDBOX_LIMITS } from "../../../src/sandbox-host/isolate-host.js";
import { runtimeOptionsFor } from "../../../src/server/options.js";

describe("DEFAULTS", () => {
  const config = resolveConfig({}, "/srv/vcp");

  test("an empty vcp.yaml resolves to DEFAULTS, section by section", () => {
    expect(config.limits).toEqual(DEFAULTS.limits);
    expect(config.pool).toEqual(DEFAULTS.pool);
    expect(config.listen).toEqual(DEFAULTS.listen);
    expect(config.fetch).toEqual(DEFAULTS.fetch);
    expect(config.redact_keys).toEqual(DEFAULTS.redact_keys);
    expect({ fsync: config.audit.fsync, rotate_bytes: config.audit.rotate_bytes, group_commit_ms: config.audit.group_commit_ms }).toEqual({ fsync: DEFAULTS.audit.fsync, rotate_bytes: DEFAULTS.audit.rotate_bytes, group_commit_ms: DEFAULTS.audit.group_commit_ms });
  });

  test("the library's own defaults are the same values", () => {
    expect(DEFAULT_JSON_DEPTH).toBe(config.limits.json_depth);
    expect(DEFAULT_INPUT_BYTES).toBe(config.limits.input_bytes);
    expect(DEFAULT_ANNOTATION_BYTES_PER_HOOK).toBe(config.limits.annotation_bytes_per_hook);
    expect(DEFAULT_ANNOTATION_BYTES_PER_CHAIN).toBe(config.limits.annotation_bytes_per_chain);
    expect(DEFAULT_MAX_CODE_BYTES).toBe(config.limits.bundle_bytes);
    expect(DEFAULT_REGISTRATIONS_PER_MINUTE).toBe(config.limits.registrations_per_minute);
    expect(DEFAULT_SANDBOX_LIMITS).toMatchObject({
      isolateMemoryMb: config.pool.isolate_memory_mb,
      resultBytes: config.limits.result_bytes,
      codeBytes: config.limits.bundle_bytes,
      jsonDepth: config.limits.json_depth,
    });
  });

  test("serve's runtime options carry the config's values (which default to DEFAULTS)", () => {
    const options = runtimeOptionsFor(config);
    expect(options.redactKeys).toEqual([...DEFAULTS.redact_keys]);
    expect(options.maxSessionsPerOwner).toBe(DEFAULTS.limits.sessions_per_client);
    expect(options.audit).toMatchObject({ groupCommitMs: DEFAULTS.audit.group_commit_ms });
  });

  test("audit.group_commit_ms reaches the runtime's audit log; out of range it is refused naming the field", () => {
    expect(runtimeOptionsFor(resolveConfig({ audit: { group_commit_ms: 1.5 } }, "/srv/vcp")).audit).toMatchObject({ groupCommitMs: 1.5 });
    for (const bad of [-1, 101, "1"]) {
      expect(() => resolveConfig({ audit: { group_commit_ms: bad } }, "/srv/vcp")).toThrow(/audit\.group_commit_ms/);
    }
  });

  test("is frozen: no caller can change a default for everyone", () => {
    expect(Object.isFrozen(DEFAULTS.limits)).toBe(true);
    expect(() => (DEFAULTS.redact_keys as string[]).push("x")).toThrow();
  });
});
