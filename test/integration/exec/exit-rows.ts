// The rows of the exit-code tables (PROFILES §3.2, §3.3, §3.5) as fixture-script arguments and what each
// profile makes of them: read by the lane-level test (exit-table.test.ts) and through the fire path
// (fire-table.test.ts).
export type Native = Record<string, unknown>;
export const text = (n: Native) => JSON.stringify(n);
export const blocked: Record<string, (n: Native) => boolean> = {
  "gemini-cli": (n) => n["decision"] === "block" || n["decision"] === "deny",
  llxprt: (n) => n["decision"] === "block" || n["decision"] === "deny",
  "claude-code": (n) => n["decision"] === "block" || (n["hookSpecificOutput"] as Native | undefined)?.["permissionDecision"] === "deny",
  "ai-memory": (n) => n["action"] === "deny",
  "repo-yaml": (n) => n["error"] === "blocked_by_policy",
};

export interface Row {
  row: string;
  /** exit-code.sh CODE STDOUT STDERR */
  args: [string, string, string];
  timeout?: boolean;
  expect: Partial<Record<keyof typeof blocked, { blocked: boolean; contains?: string; lacks?: string }>>;
}

export const ROWS: Row[] = [
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
  { row: "repo-yaml: exit 0 + a JSON object: used", args: ["0", '{"logs":[{"level":"info","message":"recorded"}]}', ""], expect: { "repo-yaml": { blocked: false, contains: "recorded" } } },
  { row: "repo-yaml: non-zero exit is the hook's failure (a warning log)", args: ["1", "", "oops"], expect: { "repo-yaml": { blocked: false, contains: "exit code 1: oops" } } },
  { row: "repo-yaml: stdout that is not a JSON object is the hook's failure", args: ["0", "plain words", ""], expect: { "repo-yaml": { blocked: false, contains: "stdout is not a JSON object" } } },
  { row: "ai-memory: non-zero exit is an error (fail-open ⇒ allow)", args: ["1", '{"action":"deny","reason":"x"}', ""], expect: { "ai-memory": { blocked: false } } },
];

