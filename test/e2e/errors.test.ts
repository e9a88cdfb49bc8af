// The one error table (src/errors.ts) gives every code, runtime and server, its HTTP status, so a new
// code is mapped on purpose; the server's error handler reads the status from it.
import { describe, expect, it } from "vitest";
import { ERROR_CODES, httpStatusOf, VcpError } from "../../src/index.js";
import { toHttpError } from "../../src/server/errors.js";

describe("HTTP status table", () => {
  it("gives every code a 4xx/5xx status and a description", () => {
    for (const [code, info] of Object.entries(ERROR_CODES)) {
      expect(info.status, code).toBeGreaterThanOrEqual(400);
      expect(info.status, code).toBeLessThan(600);
      expect(info.description.length, code).toBeGreaterThan(10);
    }
  });
  it("answers a VcpError with the status of its code, code and details intact", () => {
    const { status, body, internal } = toHttpError(new VcpError("SESSION_LIMIT", "too many", { limit: 2 }));
    expect(status).toBe(429);
    expect(internal).toBe(false);
    expect(body).toEqual({ error: { code: "SESSION_LIMIT", message: "too many", details: { limit: 2 } } });
    expect(toHttpError(new VcpError("UNAUTHENTICATED", "no token")).status).toBe(401);
    expect(toHttpError(new VcpError("SANDBOX_OVERLOADED", "full")).internal).toBe(true);
  });
  it("has no NOT_IMPLEMENTED: the server takes a whole runtime", () => {
    expect(Object.hasOwn(ERROR_CODES, "NOT_IMPLEMENTED")).toBe(false);
    expect(httpStatusOf("NOT_IMPLEMENTED")).toBe(500);
  });
  it("never leaks the text of an unexpected error", () => {
    const { status, body } = toHttpError(new Error("/home/secret/path exploded"));
    expect(status).toBe(500);
    expect(body.error.code).toBe("INTERNAL");
    expect(JSON.stringify(body)).not.toMatch(/secret/);
  });
});
