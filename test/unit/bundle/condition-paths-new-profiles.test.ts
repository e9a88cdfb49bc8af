// Condition paths of the profiles added in issue 26 (codex, vscode, cursor, openhands, goose) are checked
// at build against the event's input schema (EventProfile.inputSchema, profiles/common/condition-fields.ts),
// like gemini-cli's and claude-code's: a path the input can never have is INVALID_PREDICATE naming the
// path, the profile and the event, instead of a guard that is silently skipped_predicate on every call.
import { describe, expect, test } from "vitest";
import { parseManifest } from "../../../src/bundle/manifest.js";
import type { VcpError } from "../../../src/errors.js";

const manifest = (profile: string, event: string, field: string) => ({
  bundle: "g", version: "1.0.0", profile, trust: "deployment",
  hooks: [{ name: "guard", action: "guard", event, timeout_ms: 1000, condition: { field, operator: "matches", value: "rm -rf" } }],
});

function refusal(raw: unknown): VcpError {
  try {
    parseManifest(raw, "policy.yaml");
  } catch (err) {
    return err as VcpError;
  }
  throw new Error("the manifest was accepted");
}

// The tool event of each profile whose input carries `tool_input` (the shell command is `tool_input.command`).
const TOOL_EVENTS = [
  ["codex", "PreToolUse"],
  ["vscode", "PreToolUse"],
  ["cursor", "preToolUse"],
  ["openhands", "PreToolUse"],
  ["goose", "PreToolUse"],
] as const;

describe("condition paths of the new profiles are checked at build", () => {
  test.each(TOOL_EVENTS)("%s %s: tool_input.command and tool_name build", (profile, event) => {
    expect(() => parseManifest(manifest(profile, event, "tool_input.command"), "policy.yaml")).not.toThrow();
    expect(() => parseManifest(manifest(profile, event, "tool_name"), "policy.yaml")).not.toThrow();
  });

  test.each(TOOL_EVENTS)("%s %s: a misspelt field is INVALID_PREDICATE naming path, profile and event", (profile, event) => {
    const err = refusal(manifest(profile, event, "tool_inptu.command"));
    expect(err.code).toBe("INVALID_PREDICATE");
    expect(err.message).toContain("hooks[0].condition");
    expect(err.message).toContain(`the ${profile} ${event} input has no field 'tool_inptu'`);
    expect(err.message).toContain("tool_input");
  });

  test.each(TOOL_EVENTS)("%s %s: the VCP habit event.tool_input.command is refused", (profile, event) => {
    const err = refusal(manifest(profile, event, "event.tool_input.command"));
    expect(err.code).toBe("INVALID_PREDICATE");
    expect(err.message).toContain(`the ${profile} ${event} input`);
    expect(err.message).toContain("'event'");
  });

  test.each([
    ["cursor", "beforeShellExecution", "command", "command.text", "'command' is a string"],
    ["cursor", "beforeReadFile", "file_path", "tool_input.file_path", "has no field 'tool_input'"],
    ["codex", "UserPromptSubmit", "prompt", "prompt.text", "'prompt' is a string"],
    ["vscode", "UserPromptSubmit", "prompt", "tool_input.command", "has no field 'tool_input'"],
    ["openhands", "UserPromptSubmit", "message", "message.text", "'message' is a string"],
    ["goose", "BeforeShellExecution", "matcher_context", "matcher_context.0", "'matcher_context' is a string"],
  ] as const)("%s %s: '%s' builds, '%s' is refused", (profile, event, good, bad, why) => {
    expect(() => parseManifest(manifest(profile, event, good), "policy.yaml")).not.toThrow();
    const err = refusal(manifest(profile, event, bad));
    expect(err.code).toBe("INVALID_PREDICATE");
    expect(err.message).toContain(`the ${profile} ${event} input`);
    expect(err.message).toContain(why);
  });
});
