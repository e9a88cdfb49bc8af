import { describe, expect, test } from "vitest";
import { MESSAGE_MAX_CHARS, sanitizeGuestText, STACK_MAX_CHARS } from "../../../src/chain/guest-text.js";

// The one scrubber of guest text (DESIGN §4.4): the sandbox host and the executor both apply it.
describe("sanitizeGuestText", () => {
  test("drops host frames after the isolated-vm boundary and prelude frames", () => {
    const text = [
      "TypeError: boom",
      "    at act (vcp-bundle:///p.js:1:23)",
      "    at run (vcp-prelude:///prelude.js:300:10)",
      "    at (<isolated-vm boundary>)",
      "    at SandboxIsolateHost.invoke (/work/main/src/sandbox-host/isolate-host.ts:10:2)",
    ].join("\n");
    expect(sanitizeGuestText(text, STACK_MAX_CHARS)).toBe("TypeError: boom\n    at act (vcp-bundle:///p.js:1:23)");
  });
  test("replaces absolute paths, file URLs, node: locations and Windows paths", () => {
    expect(sanitizeGuestText("failed at /home/op/app/x.js:3:4 and file:///srv/a.js")).toBe("failed at <host> and <host>");
    expect(sanitizeGuestText("at run (/work/main/dist/src/pool/worker.js:10:5)")).toBe("at run (<host>)");
    expect(sanitizeGuestText("at node:internal/vm:1:2 C:\\app\\x.js")).toBe("at <host> <host>");
  });
  test("cuts to the cap, marker included, and says how much was cut", () => {
    const long = sanitizeGuestText("x".repeat(5000), 100);
    expect(long.length).toBeLessThanOrEqual(100);
    expect(long).toMatch(/^x+… \(\d+ more chars\)$/);
    expect(long).toContain(`${5000 - long.indexOf("…")} more chars`);
    expect(sanitizeGuestText("y".repeat(5000)).length).toBeLessThanOrEqual(MESSAGE_MAX_CHARS);
  });
  test("is idempotent: text scrubbed by the sandbox host is unchanged by the executor", () => {
    for (const text of ["x".repeat(5000), "a /srv/app/x.js:1:2 b", "E\n    at (<isolated-vm boundary>)\n    at /x/y.js"]) {
      const once = sanitizeGuestText(text);
      expect(sanitizeGuestText(once)).toBe(once);
    }
  });
});
