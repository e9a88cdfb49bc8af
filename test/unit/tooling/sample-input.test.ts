// The sample input `init --profile` scaffolds a test with and `import` writes a stub's test with: for
// every event of every catalogued profile, the profile's own validateInput accepts it (else the
// generated policy fails its own test as generated).
import { describe, expect, test } from "vitest";
import { listProfiles } from "../../../src/profiles/index.js";
import { sampleInput } from "../../../src/tooling/sample-input.js";

const cases = listProfiles()
  .filter((p) => p.id !== "vcp")
  .flatMap((p) => Object.keys(p.events).map((event) => [p.id, event, p] as const));

describe("sampleInput", () => {
  test("covers the agent profiles", () => {
    expect(new Set(cases.map(([id]) => id))).toEqual(new Set(["gemini-cli", "llxprt", "claude-code", "ai-memory", "amplifier", "repo-yaml", "codex", "vscode", "cursor", "openhands", "goose"]));
  });

  test.each(cases)("%s %s: the profile's validateInput accepts it", (_id, event, profile) => {
    const decoded = profile.validateInput(sampleInput(profile, event), event);
    expect(decoded.ok ? "ok" : decoded.error).toBe("ok");
  });

  test("tool events carry a realistic shell call", () => {
    const codex = listProfiles().find((p) => p.id === "codex")!;
    expect(sampleInput(codex, "PreToolUse")).toMatchObject({ hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "ls" } });
  });
});
