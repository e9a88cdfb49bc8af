// messageWithCauses (src/errors.ts): what a log line or a status field says about a failure.
import { describe, expect, test } from "vitest";
import { messageWithCauses } from "../../src/errors.js";

describe("messageWithCauses", () => {
  test("the causes follow the message: undici's 'fetch failed' says what failed", () => {
    const dns = new Error("getaddrinfo ENOTFOUND collector.invalid");
    expect(messageWithCauses(new TypeError("fetch failed", { cause: dns }))).toBe("fetch failed: getaddrinfo ENOTFOUND collector.invalid");
  });

  test("an AggregateError without a message (Node's happy eyeballs) names its first error", () => {
    const refused = new AggregateError([new Error("connect ECONNREFUSED ::1:6379"), new Error("connect ECONNREFUSED 127.0.0.1:6379")], "");
    expect(messageWithCauses(new Error("fetch failed", { cause: refused }))).toBe("fetch failed: AggregateError: connect ECONNREFUSED ::1:6379");
  });

  test("a cause already in the message is not repeated; a cycle ends", () => {
    const inner = new Error("write EPIPE");
    expect(messageWithCauses(new Error("send failed: write EPIPE", { cause: inner }))).toBe("send failed: write EPIPE");
    const a = new Error("a");
    const b = new Error("b", { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(messageWithCauses(a)).toBe("a: b");
    expect(messageWithCauses("plain")).toBe("plain");
  });
});
