import { Writable } from "node:stream";
import { describe, expect, test } from "vitest";
import { DEFAULTS } from "../../../src/config/defaults.js";
import { createOperationalLogger } from "../../../src/observe/logger.js";

const JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
const PEM = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIFh7x0m7g8Q1n2v6y0u1qK5pM2h1x8m8QeLk0m6n7Q9x\n-----END PRIVATE KEY-----";

describe("createOperationalLogger (pino)", () => {
  function capture() {
    const lines: any[] = [];
    const destination = new Writable({
      write(chunk, _enc, cb) {
        for (const l of String(chunk).split("\n")) if (l) lines.push(JSON.parse(l));
        cb();
      },
    });
    return { lines, destination };
  }

  test("redacts configured keys and secret shapes in fields and messages", async () => {
    const { lines, destination } = capture();
    const log = createOperationalLogger({ destination, level: "debug" });
    log.info({ headers: { authorization: "Bearer abc", "set-cookie": "sid=1" }, password: "p", deep: { x: { token: "t" } }, note: `jwt ${JWT}` }, "login with %s", "sk-abcdefghijklmnop1234");
    log.warn(`key ${PEM}`);
    expect(log.isLevelEnabled("debug")).toBe(true);
    await new Promise((r) => setImmediate(r));
    expect(lines).toHaveLength(2);
    const [first, second] = lines;
    expect(first.headers).toEqual({ authorization: "[REDACTED]", "set-cookie": "[REDACTED]" });
    expect(first.password).toBe("[REDACTED]");
    expect(first.deep).toEqual({ x: { token: "[REDACTED]" } });
    expect(first.note).toBe("jwt [REDACTED:jwt]");
    expect(first.msg).toBe("login with [REDACTED:api-key]");
    expect(second.msg).toBe("key [REDACTED:private-key]");
    expect(JSON.stringify(lines)).not.toMatch(/abc"|sid=1|SflKxw|MC4CAQ|sk-abcdef/);
    expect(first.pid).toBeUndefined();
  });

  test("authorization and token are redacted even when the configured keys leave them out", async () => {
    const { lines, destination } = capture();
    const log = createOperationalLogger({ destination, redactKeys: ["password"] });
    log.info({ req: { headers: { authorization: "opaque-credential-1" } }, token: "opaque-credential-2", password: "p" }, "request");
    await new Promise((r) => setImmediate(r));
    expect(lines[0].req.headers.authorization).toBe("[REDACTED]");
    expect(lines[0].token).toBe("[REDACTED]");
    expect(lines[0].password).toBe("[REDACTED]");
  });

  test("the default keys cover the config's token hashes and common credentials", () => {
    for (const k of ["authorization", "password", "token_sha256", "api_key", "private_key_pem"]) expect(DEFAULTS.redact_keys).toContain(k);
  });

  test("an error keeps its cause chain: undici's DNS error behind 'fetch failed', an AggregateError's errors", async () => {
    const { lines, destination } = capture();
    const log = createOperationalLogger({ destination });
    const dns = Object.assign(new Error("getaddrinfo ENOTFOUND collector.invalid"), { code: "ENOTFOUND", hostname: "collector.invalid" });
    log.warn({ err: new TypeError("fetch failed", { cause: dns }) }, "shipping failed");
    const refused = new AggregateError([Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6379"), { code: "ECONNREFUSED" })], "");
    log.error({ err: new Error("outer", { cause: refused }) }, "nested");
    await new Promise((r) => setImmediate(r));
    expect(lines[0].err).toMatchObject({ type: "TypeError", message: "fetch failed", cause: { message: "getaddrinfo ENOTFOUND collector.invalid", code: "ENOTFOUND", hostname: "collector.invalid" } });
    expect(lines[1].err.cause).toMatchObject({ type: "AggregateError", errors: [{ message: "connect ECONNREFUSED 127.0.0.1:6379", code: "ECONNREFUSED" }] });
  });
});
