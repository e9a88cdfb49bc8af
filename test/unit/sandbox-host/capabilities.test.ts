import { describe, expect, test } from "vitest";
import { medianMs } from "../../support/median-ms.js";
import { redactString } from "../../../src/audit/redact-string.js";
import { buildLogLine, checkFetchUrl, compileFetchPolicy, truncateUtf8 } from "../../../src/sandbox-host/capabilities.js";

describe("checkFetchUrl", () => {
  const policy = compileFetchPolicy({ allowHosts: ["API.example.com", "api.openai.com"], denyLlmHosts: ["api.openai.com."] });
  test.each([
    ["https://api.example.com/x", true],
    ["http://api.example.com:8080/x", true],
    ["https://api.example.com./x", true],
    ["https://sub.api.example.com/x", false],
    ["https://example.com/x", false],
    ["https://api.openai.com/v1", false],
    ["https://API.OPENAI.COM/v1", false],
    ["https://x.api.openai.com/v1", false],
    ["file:///etc/passwd", false],
    ["data:text/plain,hi", false],
    ["https://a:b@api.example.com/", false],
    ["//api.example.com", false],
  ])("%s → %s", (url, ok) => {
    expect(checkFetchUrl(policy, url).ok).toBe(ok);
  });
});

describe("log lines", () => {
  test("truncateUtf8 never splits a character", () => {
    expect(truncateUtf8("aé", 2)).toBe("a");
    expect(truncateUtf8("€€", 5)).toBe("€");
    expect(truncateUtf8("abc", 3)).toBe("abc");
  });
  test("a guest's 10 MB log message costs what its kept 4 KiB cost: the bound applies before redaction", () => {
    const message = "Bearer abcdefgh ".repeat((10 * 1024 * 1024) / 16);
    const reference = medianMs(() => redactString(message));
    const line = medianMs(() => buildLogLine("b", "h", "info", message, "", 4096));
    expect(line, `log line ${line.toFixed(2)} ms vs one full redaction ${reference.toFixed(2)} ms`).toBeLessThan(reference / 4);
    const built = buildLogLine("b", "h", "info", message, "", 4096)!;
    expect(built.message).toMatch(/^(Bearer \[REDACTED\] )+/);
    expect(Buffer.byteLength(built.message)).toBeLessThanOrEqual(4096);
  });
  test("buildLogLine rejects malformed calls", () => {
    expect(buildLogLine("b", "h", "fatal", "m", "", 100)).toBeUndefined();
    expect(buildLogLine("b", "h", "info", 42, "", 100)).toBeUndefined();
    expect(buildLogLine("b", "h", "info", "m", "[1,2]", 100)).toEqual({ bundle: "b", hook: "h", level: "info", message: "m", fields: { value: [1, 2] } });
  });
  test("buildLogLine replaces fields nested deeper than limits.json_depth before parsing them (they travel by structured clone and IPC)", () => {
    const deep = `{"a":${"[".repeat(2040)}${"]".repeat(2040)}}`;
    expect(buildLogLine("b", "h", "info", "m", deep, 8192)?.fields).toEqual({ _too_deep: true });
    expect(buildLogLine("b", "h", "info", "m", '{"a":[[[1]]]}', 8192, 3)?.fields).toEqual({ _too_deep: true });
    expect(buildLogLine("b", "h", "info", "m", '{"a":[[1]]}', 8192, 3)?.fields).toEqual({ a: [[1]] });
  });
  test("buildLogLine redacts secret-looking keys at any depth and drops prototype keys", () => {
    const line = buildLogLine("b", "h", "info", "m", '{"a":{"password":"x","Authorization":"y"},"constructor":{"prototype":1},"ok":1}', 1000);
    expect(line?.fields).toEqual({ a: { password: "[REDACTED]", Authorization: "[REDACTED]" }, ok: 1 });
  });
});

describe("guest log redaction", () => {
  test("secret shapes in the message are redacted before truncation, so a cut secret cannot survive", () => {
    const token = "Bearer abcdefghijklmnopqrstuvwxyz0123456789";
    // Truncated first, the 26-byte cap would keep "calling with Bearer abcde" (a prefix the bearer
    // pattern still matches, but only after the secret's first characters were already exposed).
    const line = buildLogLine("b", "h", "info", `calling with ${token} now`, undefined, 26);
    expect(line!.message).not.toMatch(/Bearer a/);
    expect(line!.message.startsWith("calling with Bearer [RED")).toBe(true);
  });
});
