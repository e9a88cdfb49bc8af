// buildDecision (src/chain/decision.ts) and every profile's subjectOf / reasonOf: what one decision
// record says about a chain — outcome, the decisive hook and its reason, the subject (redacted,
// bounded, a prompt only by digest) and which hook changed which field.
import { createHash } from "node:crypto";
import { describe, expect, test } from "vitest";
import { medianMs } from "../../support/median-ms.js";
import { redactHead, redactString } from "../../../src/audit/redact-string.js";
import { buildDecision, changedPaths, DECISION_LIMITS, type DecisionFacts } from "../../../src/chain/decision.js";
import type { ChainResult, HookExecution } from "../../../src/model/chain.js";
import { canonicalJson } from "../../../src/integrity/canonical.js";
import { getProfile } from "../../../src/profiles/index.js";

const hook = (name: string, extra: Partial<HookExecution> = {}): HookExecution => ({
  hook: name, bundle: "b", scope: "deployment", trust: "deployment", status: "continue", outcome: "ok", duration_ms: 1, bundle_digest: `sha256:${name}`, ...extra,
});
const result = (hooks: HookExecution[], extra: Partial<ChainResult> = {}): ChainResult => ({
  chain_id: "c1", type: "pre_inject", status: "completed", reason: null, aborted_by: null, context: {}, constitution: { id: "x", version: "1", rules: [] } as never,
  cascade_failure: false, hook_results: hooks, duration_ms: 3, ...extra,
});
const facts = (extra: Partial<DecisionFacts> = {}): DecisionFacts => ({
  profile: "gemini-cli", event: "BeforeTool", at: "2026-11-28T09:00:00.000Z", subject: { kind: "tool", tool: "run_shell_command", command: "rm -rf /" },
  session: "s1", client: "app", redact: redactHead, ...extra,
});

describe("buildDecision", () => {
  test("a profile block: the blocking hook, its reason and revision; failures counted; allow hooks listed", () => {
    const r = result([hook("note", { verdict: "allow" }), hook("guard", { verdict: "block", status: "abort", reason: "refusing rm -rf /" }), hook("flaky", { outcome: "timeout", verdict: "allow" })], { status: "aborted", aborted_by: "guard" });
    const d = buildDecision(r, facts({ answerVerdict: "block" }));
    expect(d).toMatchObject({
      chain_id: "c1", at: "2026-11-28T09:00:00.000Z", profile: "gemini-cli", event: "BeforeTool", outcome: "block", errors: 1,
      decided_by: { hook: "guard", bundle: "b", revision: "sha256:guard" }, reason: "refusing rm -rf /",
      subject: { kind: "tool", tool: "run_shell_command", command: "rm -rf /", summary: "run_shell_command: rm -rf /" },
      changes: [], session: "s1", client: "app",
    });
    expect(d.hooks.map((h) => [h.hook, h.outcome, h.verdict])).toEqual([["note", "ok", "allow"], ["guard", "ok", "block"], ["flaky", "timeout", "allow"]]);
  });

  test("a block no hook explains (a profile's own deny) takes the answer's reason; an allow has no decider and no reason", () => {
    expect(buildDecision(result([], { status: "aborted" }), facts({ answerVerdict: "block", answerReason: "required event pre_store has no enabled hook" }))).toMatchObject({ outcome: "block", decided_by: null, reason: "required event pre_store has no enabled hook" });
    expect(buildDecision(result([hook("note", { verdict: "allow", reason: "fine" })]), facts({ answerVerdict: "allow" }))).toMatchObject({ outcome: "allow", decided_by: null, reason: null });
  });

  test("VCP: the chain's reason decides a block; a modify names the last modifying hook and its changed paths", () => {
    const abort = result([hook("deny", { status: "abort", reason: "own reason" })], { status: "aborted", aborted_by: "deny", reason: "chain reason" });
    expect(buildDecision(abort, facts({ profile: "vcp", event: "pre_inject", subject: { kind: "vcp", vcp_type: "pre_inject" } }))).toMatchObject({
      outcome: "block", decided_by: { hook: "deny" }, reason: "chain reason", subject: { kind: "vcp", vcp_type: "pre_inject", summary: "vcp pre_inject" },
    });
    const modify = result([
      hook("a", { status: "modify", modification: [{ op: "replace", path: "/context/note", value: "secret value" }] }),
      hook("b", { status: "modify", modified_context: true }),
      hook("c", { status: "modify", outcome: "integrity_rejected" }),
    ]);
    const d = buildDecision(modify, facts({ profile: "vcp", event: "pre_inject", subject: { kind: "vcp", vcp_type: "pre_inject" } }));
    expect(d).toMatchObject({ outcome: "modify", decided_by: { hook: "b" }, errors: 1 });
    // Which hook changed which field — never the values.
    expect(d.changes).toEqual([{ hook: "a", op: "replace", path: "/context/note" }, { hook: "b", op: "replace", path: "/context" }]);
    expect(JSON.stringify(d)).not.toContain("secret value");
  });

  test("an ask names the asking hook", () => {
    const d = buildDecision(result([hook("ask", { verdict: "ask", reason: "really?" })]), facts({ answerVerdict: "allow" }));
    expect(d).toMatchObject({ outcome: "ask", decided_by: { hook: "ask" }, reason: "really?" });
  });

  test("a 10 MB command costs what its kept 1,000 characters cost: the bound applies before redaction", () => {
    // Secret shapes on every line make redaction work hard; the reference is one full redaction pass.
    const command = "Bearer abcdefgh\n".repeat((10 * 1024 * 1024) / 16);
    const subject = { kind: "tool" as const, tool: "Bash", command };
    const reference = medianMs(() => redactString(command));
    const decision = medianMs(() => buildDecision(result([]), facts({ subject })));
    expect(decision, `decision ${decision.toFixed(2)} ms vs one full redaction ${reference.toFixed(2)} ms`).toBeLessThan(reference / 4);
    const d = buildDecision(result([]), facts({ subject }));
    expect(d.subject.command).toMatch(/^(Bearer \[REDACTED\] )+/);
    expect(d.subject.command!.length).toBeLessThanOrEqual(DECISION_LIMITS.command);
  });

  test("secrets are redacted before anything is cut; texts are bounded and kept on one line", () => {
    const token = "sk-abcdefghijklmnopqrstuvwxyz012345";
    const long = `${"x".repeat(DECISION_LIMITS.command - 10)} ${token} ${"y".repeat(500)}`;
    const d = buildDecision(result([hook("g", { verdict: "block", reason: `no: Bearer abcdefghijklmnop\nsecond line ${"z".repeat(2000)}` })], { status: "aborted", aborted_by: "g" }), facts({
      answerVerdict: "block", subject: { kind: "tool", tool: "Bash", command: long, path: `/home/${token}` },
    }));
    const text = JSON.stringify(d);
    expect(text).not.toContain(token);
    expect(text).not.toContain("abcdefghijklmnop");
    expect(text).not.toContain("sk-abcdefgh");
    expect(d.subject.command!.length).toBeLessThanOrEqual(DECISION_LIMITS.command);
    expect(d.subject.path).toBe("/home/[REDACTED:api-key]");
    expect(d.subject.summary.length).toBeLessThanOrEqual(200);
    expect(d.reason!.length).toBeLessThanOrEqual(DECISION_LIMITS.reason);
    expect(d.reason).toMatch(/^no: Bearer \[REDACTED\] second line z+…$/);
    expect(d.hooks[0]!.reason!.length).toBeLessThanOrEqual(DECISION_LIMITS.hookReason);
  });

  test("a prompt is recorded by its SHA-256 only", () => {
    const prompt = "my password is hunter2";
    const d = buildDecision(result([]), facts({ event: "BeforeAgent", subject: { kind: "prompt", prompt } }));
    const sha = createHash("sha256").update(prompt).digest("hex");
    expect(d.subject).toEqual({ kind: "prompt", prompt_sha256: sha, summary: `BeforeAgent: prompt sha256:${sha.slice(0, 12)}` });
    expect(JSON.stringify(d)).not.toContain("hunter2");
  });

  test("changes are capped; the rest are counted", () => {
    const ops = Array.from({ length: DECISION_LIMITS.changes + 5 }, (_, i) => ({ op: "add", path: `/tool_input/f${i}` }));
    const d = buildDecision(result([hook("m", { verdict: "modify", modification: ops })]), facts({ answerVerdict: "modify" }));
    expect(d.changes).toHaveLength(DECISION_LIMITS.changes);
    expect(d.changes_omitted).toBe(5);
  });
});

describe("the record's JSON text is its canonical text", () => {
  // The audit writer hashes the RFC 8785 form of every record; a decision record written with its
  // members in sorted order is hashed from the JSON text it is stored as (audit/redact.ts jsonTexts).
  test.each([
    ["a block with every optional member", buildDecision(result([hook("guard", { verdict: "block", status: "abort", reason: "no" }), hook("m", { verdict: "modify", modification: Array.from({ length: 70 }, (_, i) => ({ op: "replace", path: `/f${i}` })) })], { status: "aborted", aborted_by: "guard" }), facts({ answerVerdict: "block" }))],
    ["an allow", buildDecision(result([hook("note", { verdict: "allow" })]), facts({ answerVerdict: "allow", session: null, client: null }))],
    ["a prompt subject", buildDecision(result([]), facts({ subject: { kind: "prompt", prompt: "hi" } }))],
    ["a path subject", buildDecision(result([]), facts({ subject: { kind: "tool", tool: "read_file", path: "/etc/passwd", command: "cat" } }))],
    ["a VCP chain", buildDecision(result([hook("h", { status: "modify", modified_context: true })]), facts({ profile: "vcp", event: "pre_inject", subject: { kind: "vcp", vcp_type: "pre_inject" } }))],
  ])("%s", (_name, decision) => {
    expect(JSON.stringify(decision)).toBe(canonicalJson(decision));
  });
});

describe("changedPaths", () => {
  test("op and path of each changed field, values left out, unchanged fields not walked", () => {
    const big = { messages: Array.from({ length: 1000 }, (_, i) => ({ i })) };
    const before = { tool_name: "Bash", tool_input: { command: "ls", timeout: 5 }, llm: big };
    const after = { ...before, tool_input: { command: "ls -la", cwd: "/tmp" } };
    expect(changedPaths(before, after)).toEqual([
      { op: "remove", path: "/tool_input/timeout" },
      { op: "replace", path: "/tool_input/command" },
      { op: "add", path: "/tool_input/cwd" },
    ]);
    expect(changedPaths({ "a/b": 1 }, { "a/b": 2 })).toEqual([{ op: "replace", path: "/a~1b" }]);
    expect(changedPaths({ a: Array.from({ length: 100 }, () => 0) }, { a: Array.from({ length: 100 }, () => 1) }, 10)).toEqual([{ _truncated: true, ops: 100 }]);
  });
});

describe("subjectOf and reasonOf, per profile", () => {
  const shell = { tool_name: "run_shell_command", tool_input: { command: "rm -rf /" } };
  test.each([
    ["gemini-cli", "BeforeTool", shell, { kind: "tool", tool: "run_shell_command", command: "rm -rf /" }],
    ["llxprt", "AfterTool", { tool_name: "write_file", tool_input: { file_path: "/etc/passwd", content: "x" } }, { kind: "tool", tool: "write_file", path: "/etc/passwd" }],
    ["gemini-cli", "BeforeAgent", { prompt: "hi" }, { kind: "prompt", prompt: "hi" }],
    ["gemini-cli", "SessionStart", { source: "startup" }, { kind: "event" }],
    ["claude-code", "PreToolUse", { tool_name: "Bash", tool_input: { command: "rm -rf /" } }, { kind: "tool", tool: "Bash", command: "rm -rf /" }],
    ["claude-code", "PreToolUse", { tool_name: "Edit", tool_input: { file_path: "/src/a.ts", old_string: "a", new_string: "b" } }, { kind: "tool", tool: "Edit", path: "/src/a.ts" }],
    ["claude-code", "UserPromptSubmit", { prompt: "hi" }, { kind: "prompt", prompt: "hi" }],
    ["claude-code", "Stop", { stop_hook_active: false }, { kind: "event" }],
    ["amplifier", "tool:pre", { event: "tool:pre", data: { tool_name: "bash", tool_input: { command: "ls" } } }, { kind: "tool", tool: "bash", command: "ls" }],
    ["amplifier", "prompt:submit", { event: "prompt:submit", data: { prompt: "hi" } }, { kind: "prompt", prompt: "hi" }],
    ["ai-memory", "pre_store", { event: "pre_store", payload: { namespace: "team/a", content: "x" } }, { kind: "tool", tool: "store", path: "team/a" }],
    ["repo-yaml", "PreAbilityCall", { ability_id: "deploy.prod", planned_input_summary: "deploy v2", tool_call_path: "tools/deploy" }, { kind: "tool", tool: "deploy.prod", command: "deploy v2", path: "tools/deploy" }],
    ["repo-yaml", "UserPromptSubmit", { user_message: "hi" }, { kind: "prompt", prompt: "hi" }],
    ["vcp", "on_violation", {}, { kind: "vcp", vcp_type: "on_violation" }],
    ["codex", "PreToolUse", { tool_name: "Bash", tool_input: { command: "rm -rf /" } }, { kind: "tool", tool: "Bash", command: "rm -rf /" }],
    ["codex", "UserPromptSubmit", { prompt: "hi" }, { kind: "prompt", prompt: "hi" }],
    ["vscode", "PreToolUse", { tool_name: "run_in_terminal", tool_input: { command: "ls" } }, { kind: "tool", tool: "run_in_terminal", command: "ls" }],
    ["cursor", "beforeShellExecution", { command: "rm -rf /", cwd: "/p" }, { kind: "tool", tool: "shell", command: "rm -rf /" }],
    ["cursor", "beforeReadFile", { file_path: "/p/.env" }, { kind: "tool", tool: "read_file", path: "/p/.env" }],
    ["cursor", "beforeMCPExecution", { tool_name: "db_query", tool_input: '{"command":"DROP TABLE t"}' }, { kind: "tool", tool: "db_query", command: "DROP TABLE t" }],
    ["cursor", "beforeSubmitPrompt", { prompt: "hi" }, { kind: "prompt", prompt: "hi" }],
    ["openhands", "PreToolUse", { tool_name: "terminal", tool_input: { command: "ls" } }, { kind: "tool", tool: "terminal", command: "ls" }],
    ["openhands", "UserPromptSubmit", { message: "hi" }, { kind: "prompt", prompt: "hi" }],
    ["goose", "PreToolUse", { tool_name: "developer__shell", tool_input: { command: "ls" } }, { kind: "tool", tool: "developer__shell", command: "ls" }],
    ["goose", "BeforeShellExecution", { matcher_context: "rm -rf /" }, { kind: "tool", tool: "developer__shell", command: "rm -rf /" }],
    ["goose", "UserPromptSubmit", { message: "hi", matcher_context: "hi" }, { kind: "prompt", prompt: "hi" }],
    // Copilot's toolArgs: a JSON string (cloud agent reference) or an object (CLI reference), the same subject.
    ["copilot", "preToolUse", { toolName: "bash", toolArgs: '{"command":"rm -rf /","description":"clean"}' }, { kind: "tool", tool: "bash", command: "rm -rf /" }],
    ["copilot", "permissionRequest", { toolName: "bash", toolArgs: { command: "ls" } }, { kind: "tool", tool: "bash", command: "ls" }],
    ["copilot", "userPromptSubmitted", { prompt: "hi" }, { kind: "prompt", prompt: "hi" }],
  ] as const)("%s %s", (id, event, input, subject) => {
    expect(getProfile(id).subjectOf!(input as never, event)).toEqual(subject);
  });

  test.each([
    ["gemini-cli", "BeforeTool", { decision: "block", reason: "refusing rm -rf /" }, "refusing rm -rf /"],
    ["claude-code", "PreToolUse", { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "no rm" } }, "no rm"],
    ["claude-code", "PermissionRequest", { hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny", message: "not now" } } }, "not now"],
    ["amplifier", "tool:pre", { action: "deny", reason: "nope" }, "nope"],
    ["ai-memory", "pre_store", { action: "deny", reason: "pii", code: 451 }, "pii"],
    ["repo-yaml", "PreAbilityCall", { logs: [{ level: "error", message: "guard failed: boom" }], error: "blocked_by_policy" }, "guard failed: boom"],
    ["vcp", "pre_inject", { status: "abort", reason: "no" }, "no"],
    ["gemini-cli", "BeforeTool", {}, undefined],
    ["codex", "PreToolUse", { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "no rm" } }, "no rm"],
    ["codex", "PermissionRequest", { hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny", message: "not now" } } }, "not now"],
    ["vscode", "PreToolUse", { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "no" } }, "no"],
    ["cursor", "beforeShellExecution", { permission: "deny", user_message: "for the user", agent_message: "for the model" }, "for the model"],
    ["openhands", "PreToolUse", { decision: "deny", reason: "no" }, "no"],
    ["goose", "PreToolUse", { decision: "block", reason: "no" }, "no"],
    ["copilot", "preToolUse", { permissionDecision: "deny", permissionDecisionReason: "no rm" }, "no rm"],
    ["copilot", "permissionRequest", { behavior: "deny", message: "not now" }, "not now"],
  ] as const)("%s %s reason", (id, event, output, reason) => {
    expect(getProfile(id).reasonOf!(output as never, event)).toBe(reason);
  });
});
