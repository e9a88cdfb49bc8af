// Shadow replay: recordings made by the adapter's --record, replayed through a port; a planted
// difference is found and named, equal answers are not reported.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { jsonDifferences, readRecordings, replay, type Fire } from "../../../src/tooling/replay.js";

const dir = mkdtempSync(join(tmpdir(), "vcp-replay-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const rec = (name: string, command: string, native: Record<string, unknown> | null) =>
  writeFileSync(
    join(dir, name),
    JSON.stringify({ dialect: "gemini", profile: "gemini-cli", event: "BeforeTool", input: { tool_name: "run_shell_command", tool_input: { command } }, answer: native === null ? null : { native, exit_code: 0 } }),
  );

describe("replay", () => {
  test("finds the planted difference and only it", async () => {
    rec("001-BeforeTool.json", "ls", {});
    rec("002-BeforeTool.json", "rm -rf /", { decision: "deny", reason: "rm -rf is not allowed" });
    // Planted: the old script also denied `rm -r`; the port forgot it.
    rec("003-BeforeTool.json", "rm -r build", { decision: "deny", reason: "rm -rf is not allowed" });
    rec("004-BeforeTool.json", "ls", null);
    writeFileSync(join(dir, "005-broken.json"), "{ not json");
    const port: Fire = async (_p, _e, input) => {
      const cmd = String((input["tool_input"] as { command: string }).command);
      return { native: cmd.includes("rm -rf") ? { decision: "deny", reason: "rm -rf is not allowed" } : {}, exit_code: 0 };
    };
    const { recordings, skipped } = readRecordings(dir);
    expect(skipped.map((s) => s.file)).toEqual(["005-broken.json"]);
    const report = await replay(recordings, port);
    expect(report).toMatchObject({ replayed: 3, same: 2 });
    expect(report.differences).toHaveLength(1);
    expect(report.differences[0]).toMatchObject({ file: "003-BeforeTool.json", paths: ["native/decision", "native/reason"] });
    expect(report.skipped.map((s) => s.file)).toEqual(["004-BeforeTool.json"]);
  });

  test("jsonDifferences names paths, exit codes compared too", () => {
    expect(jsonDifferences({ a: [1, 2], b: { c: 1 } }, { a: [1, 3], b: { c: 1, d: 2 } })).toEqual(["/a/1", "/b/d"]);
    expect(jsonDifferences({ x: 1 }, { x: 1 })).toEqual([]);
  });
});
