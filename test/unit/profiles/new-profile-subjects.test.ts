// The decision record's subject for the tools of the agents added in issue 26 (subjectOf, chain/
// decision.ts): a file-editor call names the file it touches — not its editor operation as if it were a
// shell command — and VS Code's file tools (`filePath`, `editFiles`' `files`) name their file.
import { describe, expect, test } from "vitest";
import { recordedSubject } from "../../../src/chain/decision.js";
import { getProfile } from "../../../src/profiles/index.js";

const subject = (id: string, event: string, input: Record<string, unknown>) => getProfile(id).subjectOf!(input as never, event);

describe("subjects of file tools", () => {
  test.each([
    // OpenHands file_editor: command is view | create | str_replace | insert | undo_edit, the file is `path`.
    ["openhands", "PreToolUse", { tool_name: "file_editor", tool_input: { command: "str_replace", path: "/p/.env", old_str: "a", new_str: "b" } }, { kind: "tool", tool: "file_editor", path: "/p/.env" }],
    // goose developer__text_editor: command is view | write | str_replace | insert | undo_edit.
    ["goose", "PreToolUse", { tool_name: "developer__text_editor", tool_input: { command: "write", path: "/p/a.ts", file_text: "x" } }, { kind: "tool", tool: "developer__text_editor", path: "/p/a.ts" }],
    // VS Code's own tools spell the file `filePath`; editFiles lists `files`.
    ["vscode", "PreToolUse", { tool_name: "create_file", tool_input: { filePath: "/p/a.ts", content: "x" } }, { kind: "tool", tool: "create_file", path: "/p/a.ts" }],
    ["vscode", "PreToolUse", { tool_name: "editFiles", tool_input: { files: ["src/main.ts"] } }, { kind: "tool", tool: "editFiles", path: "src/main.ts" }],
    ["vscode", "PreToolUse", { tool_name: "editFiles", tool_input: { files: ["src/a.ts", "src/b.ts", "src/c.ts"] } }, { kind: "tool", tool: "editFiles", path: "src/a.ts (+2 more)" }],
  ] as const)("%s %s %j", (id, event, input, expected) => {
    expect(subject(id, event, input)).toEqual(expected);
  });

  test("a shell call keeps its command; the summary of an edit names the file", () => {
    expect(subject("openhands", "PreToolUse", { tool_name: "terminal", tool_input: { command: "view" } })).toEqual({ kind: "tool", tool: "terminal", command: "view" });
    const facts = subject("openhands", "PreToolUse", { tool_name: "file_editor", tool_input: { command: "create", path: "/etc/passwd", file_text: "x" } });
    expect(recordedSubject(facts, "PreToolUse", (t) => t).summary).toBe("file_editor: /etc/passwd");
  });
});
