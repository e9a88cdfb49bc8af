// The HTTP status table covers every error code, runtime and server, so a new code is mapped on purpose.
import { describe, expect, it } from "vitest";
import { ERROR_CODES } from "../../src/index.js";
import { HTTP_STATUS, SERVER_ERROR_CODES, toHttpError } from "../../src/server/errors.js";

describe("HTTP status table", () => {
  it("maps every runtime ErrorCode and every server code to a 4xx/5xx status", () => {
    const table = HTTP_STATUS as Record<string, number | undefined>;
    const unmapped = [...Object.keys(ERROR_CODES), ...Object.keys(SERVER_ERROR_CODES)].filter((code) => table[code] === undefined);
    expect(unmapped).toEqual([]);
    for (const status of Object.values(table)) expect(status).toBeGreaterThanOrEqual(400);
  });
  it("never leaks the text of an unexpected error", () => {
    const { status, body } = toHttpError(new Error("/home/secret/path exploded"));
    expect(status).toBe(500);
    expect(body.error.code).toBe("INTERNAL");
    expect(JSON.stringify(body)).not.toMatch(/secret/);
  });
});
