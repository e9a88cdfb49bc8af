import { describe, expect, test } from "vitest";
import { groupOf } from "../../../console/src/group.js";

const hook = (extra: Record<string, unknown> = {}) =>
  ({ name: "h", type: "pre_inject", priority: 50, timeout_ms: 1000, action: { bundle: "b", export: "h" }, condition: null, enabled: true, fail_closed: false, trust: "deployment", scope: "deployment", ...extra }) as Parameters<typeof groupOf>[0];

describe("Chains page grouping", () => {
  test("today's hooks group by hook type", () => {
    expect(groupOf(hook())).toBe("pre_inject");
  });
  test("hooks of an event profile group by profile and event when GET /v1/hooks carries them", () => {
    expect(groupOf(hook({ profile: "amplifier", event: "tool:pre" }))).toBe("amplifier · tool:pre");
    expect(groupOf(hook({ event: "PreToolUse" }))).toBe("vcp · PreToolUse");
    expect(groupOf(hook({ profile: "claude-code" }))).toBe("claude-code · pre_inject");
  });
  test("a VCP hook (profile vcp, event = its type) keeps its type as the chain heading", () => {
    expect(groupOf(hook({ profile: "vcp", event: "pre_inject" }))).toBe("pre_inject");
  });
});
