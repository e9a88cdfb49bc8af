// `store:` in vcp.yaml (issue 18): local by default, redis with a URL; a wrong combination is
// INVALID_CONFIG naming the field; the config version peers compare.
import { describe, expect, test } from "vitest";
import { configVersionOf, resolveConfig, VcpError } from "../../../src/index.js";
import { storeOptionsFor } from "../../../src/server/options.js";

function problemOf(raw: unknown): { field?: unknown; message: string } {
  try {
    resolveConfig(raw, "/tmp");
  } catch (err) {
    if (err instanceof VcpError && err.code === "INVALID_CONFIG") return { field: err.details?.field, message: err.message };
    throw err;
  }
  throw new Error("expected INVALID_CONFIG");
}

describe("store config", () => {
  test("absent: kind local (no Redis), with the documented defaults", () => {
    expect(resolveConfig({}, "/tmp").store).toMatchObject({ kind: "local", prefix: "vcp" });
  });

  test("kind redis takes a redis:// or rediss:// URL and a prefix", () => {
    const store = resolveConfig({ store: { kind: "redis", url: "rediss://:pw@redis.internal:6380/2", prefix: "prod-eu" } }, "/tmp").store;
    expect(store).toMatchObject({ kind: "redis", url: "rediss://:pw@redis.internal:6380/2", prefix: "prod-eu", command_timeout_ms: 2000, heartbeat_ms: 1000 });
  });

  test("bad combinations name the field", () => {
    expect(problemOf({ store: { kind: "redis" } })).toMatchObject({ field: "store.url", message: expect.stringContaining("is required with kind: redis") });
    expect(problemOf({ store: { kind: "local", url: "redis://x:1" } })).toMatchObject({ field: "store.url", message: expect.stringContaining("applies only to kind: redis") });
    expect(problemOf({ store: { kind: "redis", url: "http://x" } })).toMatchObject({ field: "store.url" });
    expect(problemOf({ store: { kind: "redis", url: "redis://x", prefix: "a:b" } })).toMatchObject({ field: "store.prefix" });
    expect(problemOf({ store: { kind: "redis", url: "redis://x", command_timeout_ms: 5 } })).toMatchObject({ field: "store.command_timeout_ms" });
    expect(problemOf({ store: { kind: "memcached" } })).toMatchObject({ field: "store.kind" });
    expect(problemOf({ store: { kind: "redis", url: "redis://x", host: "y" } }).message).toContain("unknown field(s): host");
  });

  test("url_env: the URL comes from the environment (a Kubernetes Secret); unset is INVALID_CONFIG naming it", () => {
    const config = resolveConfig({ store: { kind: "redis", url_env: "VCP_REDIS_URL", prefix: "p" } }, "/tmp");
    expect(storeOptionsFor(config, { VCP_REDIS_URL: "redis://:secret@r:6379" })).toMatchObject({ kind: "redis", url: "redis://:secret@r:6379", prefix: "p" });
    expect(() => storeOptionsFor(config, {})).toThrowError(/store\.url_env: the environment variable VCP_REDIS_URL is not set/);
    expect(() => storeOptionsFor(config, { VCP_REDIS_URL: "http://r" })).toThrowError(/does not hold a redis:\/\/ or rediss:\/\/ URL/);
    expect(problemOf({ store: { kind: "redis", url: "redis://r", url_env: "X" } })).toMatchObject({ field: "store.url_env" });
    expect(storeOptionsFor(resolveConfig({}, "/tmp"))).toEqual({ kind: "local" });
  });

  test("config version: the operator's label, else a digest that ignores per-replica fields and sees shared ones", () => {
    const base = { store: { kind: "redis", url: "redis://r:6379" } };
    const v = configVersionOf(resolveConfig(base, "/tmp"));
    expect(v).toMatch(/^sha256:[0-9a-f]{16}$/);
    // Per replica: where it listens, its data, tokens, keyring, logging, how it reaches Redis.
    expect(configVersionOf(resolveConfig({ ...base, listen: { port: 9 }, data_dir: "/elsewhere", log_level: "debug", store: { kind: "redis", url: "redis://other:1" } }, "/tmp"))).toBe(v);
    // Shared: policy and limits.
    expect(configVersionOf(resolveConfig({ ...base, limits: { registrations_per_minute: 5 } }, "/tmp"))).not.toBe(v);
    expect(configVersionOf(resolveConfig({ ...base, conflict_strategy: "reject" }, "/tmp"))).not.toBe(v);
    expect(configVersionOf(resolveConfig({ store: { ...base.store, config_version: "release-42" } }, "/tmp"))).toBe("release-42");
  });
});
