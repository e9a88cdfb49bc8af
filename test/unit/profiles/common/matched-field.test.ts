// The fields RE2 matchers search are bounded when the input is validated (before any work): a pattern
// like (.*){1000} is linear but slow per character, and runs on the host for every matching hook.
import { describe, expect, it } from "vitest";
import { getProfile } from "../../../../src/profiles/index.js";
import { MAX_MATCHED_FIELD_LENGTH } from "../../../../src/profiles/common/native.js";

const long = "t".repeat(MAX_MATCHED_FIELD_LENGTH + 1);
const ok = "t".repeat(MAX_MATCHED_FIELD_LENGTH);
const gemini = (tool: string) => ({ session_id: "s", transcript_path: "/t", cwd: "/w", hook_event_name: "BeforeTool", timestamp: "2026-11-26T00:00:00Z", tool_name: tool, tool_input: {} });
const claude = (tool: string) => ({ session_id: "s", transcript_path: "/t", cwd: "/w", hook_event_name: "PreToolUse", tool_name: tool, tool_input: {} });

describe("matched fields are bounded at validation", () => {
  it.each([
    ["gemini-cli", "BeforeTool", gemini],
    ["llxprt", "BeforeTool", gemini],
    ["claude-code", "PreToolUse", claude],
  ] as const)("%s %s: a tool_name over the limit is refused naming the field; one at the limit passes", (id, event, input) => {
    const profile = getProfile(id);
    const refused = profile.validateInput(input(long), event);
    expect(refused.ok).toBe(false);
    expect((refused as { error: string }).error).toMatch(/^tool_name: must be at most 1024 characters/);
    expect(profile.validateInput(input(ok), event).ok).toBe(true);
  });

  it("claude-code SessionEnd reason and Notification type (matched fields) are bounded too", () => {
    const profile = getProfile("claude-code");
    const base = { session_id: "s", transcript_path: "/t", cwd: "/w" };
    expect(profile.validateInput({ ...base, hook_event_name: "SessionEnd", reason: long }, "SessionEnd").ok).toBe(false);
    expect(profile.validateInput({ ...base, hook_event_name: "Notification", message: "m", notification_type: long }, "Notification").ok).toBe(false);
  });

  it("a slow-per-character matcher over a tool name at the limit still answers", () => {
    const profile = getProfile("gemini-cli");
    const matcher = profile.compileMatcher("(.*){1000}x", "BeforeTool");
    expect(matcher(gemini(ok))).toBe(false);
    expect(matcher(gemini(`${"t".repeat(100)}x`))).toBe(true);
  });
});
