// Every row of the exit-code tables (PROFILES §3.2 gemini-cli / llxprt, §3.3 claude-code, §3.5
// ai-memory), each produced by a real fixture script through the command lane and read by the
// profile's own `parseCommandResult` (from the catalogue; a profile without one is skipped and says so).
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, test } from "vitest";
import { runExecHook, type ParseCommandResult } from "../../../src/pool/exec/hook.js";
import type { CommandSpec } from "../../../src/pool/exec/run.js";

const FIXTURE = join(resolve("test/integration/exec/fixtures"), "exit-code.sh");
const SHA = createHash("sha256").update(readFileSync(FIXTURE)).digest("hex");

/** The profile's own table, from the catalogue (EventProfile.parseCommandResult). */
async function findParser(profile: string): Promise<ParseCommandResult | undefined> {
  const { getProfile } = await import("../../../src/profiles/index.js");
  const table = getProfile(profile).parseCommandResult;
  return table === undefined ? undefined : (table.bind(getProfile(profile)) as ParseCommandResult);
}

type Native = Record<string, unknown>;
const text = (n: Native) => JSON.stringify(n);
const blocked: Record<string, (n: Native) => boolean> = {
  "gemini-cli": (n) => n["decision"] === "block" || n["decision"] === "deny",
  llxprt: (n) => n["decision"] === "block" || n["decision"] === "deny",
  "claude-code": (n) => n["decision"] === "block" || (n["hookSpecificOutput"] as Native | undefined)?.["permissionDecision"] === "deny",
  "ai-memory": (n) => n["action"] === "deny",
};

interface Row {
  row: string;
  /** exit-code.sh CODE STDOUT STDERR */
  args: [string, string, string];
  timeout?: boolean;
  expect: Partial<Record<keyof typeof blocked, { blocked: boolean; contains?: string; lacks?: string }>>;
}

const ROWS: Row[] = [
  { row: "exit 0 + JSON: used", args: ["0", '{"decision":"deny","reason":"json says no"}', ""], expect: { "gemini-cli": { blocked: true, contains: "json says no" }, llxprt: { blocked: true, contains: "json says no" } } },
  { row: "exit 0 + non-JSON text: allow + systemMessage", args: ["0", "plain words", ""], expect: { "gemini-cli": { blocked: false, contains: "plain words" }, llxprt: { blocked: false, contains: "plain words" } } },
  { row: "exit 0, empty: allow, nothing else", args: ["0", "", ""], expect: { "gemini-cli": { blocked: false, lacks: "systemMessage" }, llxprt: { blocked: false, lacks: "systemMessage" }, "claude-code": { blocked: false } } },
  { row: "exit 1 + stderr: allow + Warning", args: ["1", "", "oops"], expect: { "gemini-cli": { blocked: false, contains: "Warning: oops" }, llxprt: { blocked: false, contains: "Warning: oops" }, "claude-code": { blocked: false } } },
  { row: "exit 1 + stdout only: gemini warns, llxprt says nothing", args: ["1", "only out", ""], expect: { "gemini-cli": { blocked: false, contains: "Warning: only out" }, llxprt: { blocked: false, lacks: "only out" } } },
  { row: "exit 2 + stderr: deny with it", args: ["2", "", "not allowed"], expect: { "gemini-cli": { blocked: true, contains: "not allowed" }, llxprt: { blocked: true, contains: "not allowed" }, "claude-code": { blocked: true, contains: "not allowed" } } },
  // Gemini reads `stdout.trim() || stderr.trim()` whatever the code: with no text there is nothing to
  // act on and the hook contributes nothing (upstream hookRunner); LLxprt denies with its fallback.
  { row: "exit 2, no text: gemini contributes nothing, llxprt's fallback reason", args: ["2", "", ""], expect: { "gemini-cli": { blocked: false }, llxprt: { blocked: true, contains: "Hook exited with code 2 without an error message" } } },
  { row: "exit 2 + JSON: gemini lets the JSON decide, llxprt denies", args: ["2", '{"decision":"allow"}', ""], expect: { "gemini-cli": { blocked: false }, llxprt: { blocked: true } } },
  { row: "exit >= 3 + text: gemini denies, llxprt warns", args: ["3", "", "bad"], expect: { "gemini-cli": { blocked: true, contains: "bad" }, llxprt: { blocked: false, contains: "Warning: bad" }, "claude-code": { blocked: false } } },
  { row: "killed at the timeout: failure, fail-open", args: ["0", "", ""], timeout: true, expect: { "gemini-cli": { blocked: false }, llxprt: { blocked: false }, "claude-code": { blocked: false }, "ai-memory": { blocked: false } } },
  { row: "ai-memory: the last non-empty stdout line decides", args: ["0", '{"action":"allow"}\n{"action":"deny","reason":"pii","code":451}\n\n', ""], expect: { "ai-memory": { blocked: true, contains: "451" } } },
  { row: "ai-memory: non-zero exit is an error (fail-open ⇒ allow)", args: ["1", '{"action":"deny","reason":"x"}', ""], expect: { "ai-memory": { blocked: false } } },
];

for (const profile of Object.keys(blocked)) {
  const parser = await findParser(profile);
  const rows = ROWS.filter((r) => r.expect[profile] !== undefined);
  describe.skipIf(parser === undefined)(`${profile} exit-code table${parser === undefined ? " (parseCommandResult not on this branch)" : ""}`, () => {
    test.each(rows.map((r) => [r.row, r] as const))("%s", async (_name, row) => {
      const spec: CommandSpec = {
        ...(row.timeout ? { command: "sleep 30", sha256: createHash("sha256").update("sleep 30").digest("hex"), shell: true } : { command: FIXTURE, sha256: SHA, args: row.args }),
        env_allow: ["PATH"],
        max_output_bytes: 65536,
        timeout_ms: row.timeout ? 200 : 10_000,
        term_grace_ms: 100,
      };
      const run = await runExecHook("h", profile === "ai-memory" ? "pre_store" : profile === "claude-code" ? "PreToolUse" : "BeforeTool", spec, "{}", parser!, { shellAllowed: true });
      const want = row.expect[profile]!;
      expect(run.output).toBeDefined();
      expect(blocked[profile]!(run.output!), text(run.output!)).toBe(want.blocked);
      if (want.contains) expect(text(run.output!)).toContain(want.contains);
      if (want.lacks) expect(text(run.output!)).not.toContain(want.lacks);
    });
  });
}
