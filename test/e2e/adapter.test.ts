// `vcp-hooks hook` (the drop-in adapter, PROFILES §5) spawned as an agent spawns it, against a REAL
// server: createServer + a real runtime (sandbox process, isolates) on an ephemeral port, with the
// example policies policies/{gemini,llxprt,claude}-safe-shell built, signed and installed, plus a small
// probe bundle per profile for the answers the examples never give (ask on gemini, stop everywhere).
// For each agent dialect: allow, deny/block, ask (gemini, claude), modify and stop, checked on stdout and
// exit code; ai-memory (deny, modify, allow, and the resident --daemon) and repo-yaml (block with exit 2,
// allow, a suggestion) against policies/ai-memory-guard and policies/repo-yaml-hooks; then each
// --on-error mode once the server has stopped.
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { signArtifact } from "../../src/bundle/artifact.js";
import { buildBundle } from "../../src/bundle/build.js";
import type { VcpArtifact } from "../../src/index.js";
import { bundleCode } from "../support/bundles.js";
import { hook, type Run } from "../cli/hook/stand-in.js";
import { cl, keys, op, signed, startHarness, TOKENS, type Harness } from "./helpers.js";

type Dialect = "gemini" | "llxprt" | "claude";
const PROFILE: Record<Dialect, string> = { gemini: "gemini-cli", llxprt: "llxprt", claude: "claude-code" };
const EVENT: Record<Dialect, string> = { gemini: "BeforeTool", llxprt: "BeforeTool", claude: "PreToolUse" };
const SHELL: Record<Dialect, string> = { gemini: "run_shell_command", llxprt: "run_shell_command", claude: "Bash" };

/** The agent's native BeforeTool / PreToolUse input, as it writes it on the hook's stdin. */
function input(d: Dialect, tool: string, command: string): string {
  const base = { session_id: `adapter-${d}`, transcript_path: "/tmp/t.jsonl", cwd: "/home/dev/app", hook_event_name: EVENT[d] };
  return JSON.stringify(
    d === "claude"
      ? { ...base, permission_mode: "default", tool_name: tool, tool_input: { command }, tool_use_id: "toolu_1" }
      : { ...base, timestamp: "2026-11-26T04:30:00Z", tool_name: tool, tool_input: { command } },
  );
}

// The probe: on the tool `e2e_probe` only, answers what its command names, in the profile's own JSON.
const PROBE_CODE = bundleCode({
  probe: `function (input) {
    var c = input.tool_input.command;
    var claude = input.hook_event_name === "PreToolUse";
    if (c === "stop") return { continue: false, stopReason: "probe: the session is over budget" };
    if (c === "ask") return claude
      ? { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "ask", permissionDecisionReason: "probe: confirm this" } }
      : { decision: "ask", reason: "probe: confirm this" };
    if (c === "allow" && claude) return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" } };
    return {};
  }`,
});
const probeManifest = (d: Dialect) => ({
  bundle: `e2e-probe-${d}`,
  version: "1.0.0",
  trust: "deployment",
  profile: PROFILE[d],
  hooks: [{ name: "probe", event: EVENT[d], matcher: d === "claude" ? "e2e_probe" : "^e2e_probe$", action: "probe", priority: 50, timeout_ms: 2000 }],
});

let h: Harness | undefined;
let url = "";

beforeAll(async () => {
  h = await startHarness();
  url = h.url;
  for (const d of ["gemini", "llxprt", "claude"] as const) {
    const { artifact } = await buildBundle(resolve("policies", `${d}-safe-shell`));
    const policy = await op(h!, "PUT", `/v1/bundles/${d}-safe-shell`, signArtifact(artifact, keys.ops.privateKeyPem, "ops") as VcpArtifact);
    expect(policy.status, JSON.stringify(policy.body)).toBe(201);
    const probe = await op(h!, "PUT", `/v1/bundles/e2e-probe-${d}`, signed(probeManifest(d), PROBE_CODE));
    expect(probe.status, JSON.stringify(probe.body)).toBe(201);
  }
  // The ai-memory and repo-yaml dialects answer from their own example policies.
  for (const name of ["ai-memory-guard", "repo-yaml-hooks"]) {
    const { artifact } = await buildBundle(resolve("policies", name));
    const policy = await op(h!, "PUT", `/v1/bundles/${name}`, signArtifact(artifact, keys.ops.privateKeyPem, "ops") as VcpArtifact);
    expect(policy.status, JSON.stringify(policy.body)).toBe(201);
  }
}, 180_000);
afterAll(async () => {
  await h?.close();
});

const run = (d: Dialect, stdin: string, extra: string[] = []): Promise<Run> =>
  hook({ url, token: TOKENS.client }, [EVENT[d], "--dialect", d, "--timeout-ms", "30000", ...extra], stdin);

/** The adapter's stdout as JSON (exactly one line), with the exit code and stderr for the failure message. */
function answer(r: Run): Record<string, unknown> {
  expect(r.stdout.endsWith("\n"), `stdout: ${r.stdout} stderr: ${r.stderr}`).toBe(true);
  expect(r.stdout.trim().split("\n")).toHaveLength(1);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

describe.each(["gemini", "llxprt"] as const)("--dialect %s against the real server", (d) => {
  test("allow: a harmless command, exit 0 with decision allow", async () => {
    const r = await run(d, input(d, SHELL[d], "npm test"));
    expect(r.code).toBe(0);
    expect(answer(r)).toEqual({ continue: true, suppressOutput: false, decision: "allow" });
  }, 60_000);

  test("block: rm -rf / is refused by the safe-shell policy, exit 0 with decision block", async () => {
    const r = await run(d, input(d, SHELL[d], "rm -rf /"));
    expect(r.code).toBe(0);
    expect(answer(r)).toEqual({ continue: true, suppressOutput: false, decision: "block", reason: "blocked: rm -rf of a wildcard or a path outside the project: /" });
  }, 60_000);

  test("modify: git push --force comes back as tool_input with --force-with-lease", async () => {
    const r = await run(d, input(d, SHELL[d], "git push --force origin main"));
    expect(r.code).toBe(0);
    expect(answer(r)).toEqual({
      continue: true,
      suppressOutput: false,
      decision: "allow",
      systemMessage: "git push --force rewritten to --force-with-lease",
      hookSpecificOutput: { hookEventName: "BeforeTool", tool_input: { command: "git push --force-with-lease origin main" } },
    });
  }, 60_000);

  test("stop: continue false with the stop reason", async () => {
    const r = await run(d, input(d, "e2e_probe", "stop"));
    expect(r.code).toBe(0);
    expect(answer(r)).toMatchObject({ continue: false, stopReason: "probe: the session is over budget" });
  }, 60_000);
});

test("--dialect gemini: ask is kept when nothing blocked", async () => {
  const r = await run("gemini", input("gemini", "e2e_probe", "ask"));
  expect(r.code).toBe(0);
  expect(answer(r)).toMatchObject({ decision: "ask", reason: "probe: confirm this" });
}, 60_000);

describe("--dialect claude against the real server", () => {
  test("allow: an explicit permissionDecision allow, and no opinion on a harmless command", async () => {
    const explicit = await run("claude", input("claude", "e2e_probe", "allow"));
    expect(explicit.code).toBe(0);
    expect(answer(explicit)).toEqual({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" } });
    const none = await run("claude", input("claude", "Bash", "npm test"));
    expect(none.code).toBe(0);
    expect(answer(none)).toEqual({});
  }, 60_000);

  test("deny: rm -rf ~ is denied with the reason", async () => {
    const r = await run("claude", input("claude", "Bash", "rm -rf ~"));
    expect(r.code).toBe(0);
    expect(answer(r)).toEqual({
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "blocked: rm -rf of a wildcard or a path outside the project: ~" },
    });
  }, 60_000);

  test("ask + modify: git push -f is proposed as --force-with-lease through updatedInput", async () => {
    const r = await run("claude", input("claude", "Bash", "git push -f"));
    expect(r.code).toBe(0);
    expect(answer(r)).toEqual({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "ask",
        permissionDecisionReason: "git push --force rewritten to --force-with-lease",
        updatedInput: { command: "git push --force-with-lease" },
      },
    });
  }, 60_000);

  test("ask from a probe hook", async () => {
    const r = await run("claude", input("claude", "e2e_probe", "ask"));
    expect(r.code).toBe(0);
    expect(answer(r)).toMatchObject({ hookSpecificOutput: { permissionDecision: "ask", permissionDecisionReason: "probe: confirm this" } });
  }, 60_000);

  test("stop: continue false with the stop reason", async () => {
    const r = await run("claude", input("claude", "e2e_probe", "stop"));
    expect(r.code).toBe(0);
    expect(answer(r)).toMatchObject({ continue: false, stopReason: "probe: the session is over budget" });
  }, 60_000);
});

describe("--dialect claude: every event Claude Code 2.1.332 fires is answered, none is a hook error", () => {
  const claudeInput = (event: string, fields: Record<string, unknown>) =>
    JSON.stringify({ session_id: "adapter-claude-events", transcript_path: "/tmp/t.jsonl", cwd: "/home/dev/app", permission_mode: "default", hook_event_name: event, ...fields });
  // `--on-error block`: a refusal (the 404 UNKNOWN_EVENT of before) would exit 2 with the reason on stderr.
  const fireEvent = (event: string, stdin: string) => hook({ url, token: TOKENS.client }, [event, "--dialect", "claude", "--timeout-ms", "30000", "--on-error", "block"], stdin);

  test("PostToolBatch and MessageDisplay (they fire in every run): exit 0, {}", async () => {
    const batch = await fireEvent("PostToolBatch", claudeInput("PostToolBatch", { tool_calls: [{ tool_name: "Bash", tool_input: { command: "npm test" }, tool_use_id: "toolu_1", tool_response: { stdout: "ok" } }] }));
    expect(batch.code, batch.stderr).toBe(0);
    expect(answer(batch)).toEqual({});
    const display = await fireEvent("MessageDisplay", claudeInput("MessageDisplay", { turn_id: "t1", message_id: "m1", index: 0, final: true, delta: "Done.\n" }));
    expect(display.code, display.stderr).toBe(0);
    expect(answer(display)).toEqual({});
  }, 60_000);

  test("an event newer than the profile: exit 0, {}, observe-only, audited as unknown_event", async () => {
    const before = h!.runtime.audit.head().seq;
    const r = await fireEvent("PostToolBatchSummary", claudeInput("PostToolBatchSummary", { summary: "2 calls" }));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe("");
    expect(answer(r)).toEqual({});
    const records = (await op(h!, "GET", `/v1/audit?since=${before}&limit=100`)).body.records as Array<Record<string, unknown>>;
    expect(records).toEqual([expect.objectContaining({ kind: "chain", owner: "app", session: "adapter-claude-events", profile: "claude-code", profile_event: "PostToolBatchSummary", status: "completed", outcome: "unknown_event" })]);
    // The route's envelope says so.
    const env = await cl(h!, "POST", "/v1/profiles/claude-code/events/PostToolBatchSummary", JSON.parse(claudeInput("PostToolBatchSummary", {})));
    expect(env.status).toBe(200);
    expect(env.body).toMatchObject({ native: {}, exit_code: 0, unknown_event: true, result: { event: "PostToolBatchSummary", hook_results: [] } });
  }, 60_000);
});

test("a wrong token is a 401 the adapter reports by --on-error, naming the server's message", async () => {
  const r = await hook({ url, token: "not-the-token-0123456789" }, ["BeforeTool", "--dialect", "gemini", "--on-error", "block"], input("gemini", SHELL.gemini, "ls"));
  expect(r.code).toBe(2);
  expect(r.stdout).toBe("");
  expect(r.stderr).toMatch(/refused the event: 401 UNAUTHENTICATED/);
}, 60_000);

// Last: stop the server, then every --on-error mode for every dialect gets its rule.
describe("--dialect ai-memory against the real server (policies/ai-memory-guard)", () => {
  const memory = (args: string[], stdin: string): Promise<Run> => hook({ url, token: TOKENS.client }, ["--dialect", "ai-memory", "--timeout-ms", "30000", ...args], stdin);
  const envelope = (event: string, payload: Record<string, unknown>) => JSON.stringify({ event, payload });

  test("deny: a memory holding an AWS key is refused with code 451, one decision line, exit 0", async () => {
    const r = await memory([], envelope("pre_store", { title: "deploy notes", content: "use AKIAABCDEFGHIJKLMNOP for the bucket", namespace: "ops" }));
    expect(r.code, r.stderr).toBe(0);
    expect(answer(r)).toEqual({ action: "deny", reason: "the memory's content contains a secret (aws_access_key); store a reference instead", code: 451 });
  }, 60_000);

  test("modify and allow: the tagger's delta on pre_store, a plain allow on pre_recall", async () => {
    const stored = await memory([], envelope("pre_store", { title: "deploy notes", content: "the bucket is in eu-west-1", tags: ["ops"] }));
    expect(stored.code, stored.stderr).toBe(0);
    expect(answer(stored)).toEqual({ action: "modify", delta: { tags: ["ops", "guarded"] } });
    const recalled = await memory([], envelope("pre_recall", { query: "deploy", namespace: "ops" }));
    expect(answer(recalled)).toEqual({ action: "allow" });
  }, 60_000);

  test("daemon: one resident process answers each NDJSON envelope with one decision line, in order", async () => {
    const stdin = [
      envelope("pre_recall", { query: "token", namespace: "credentials/aws" }),
      envelope("pre_recall", { query: "deploy", namespace: "ops" }),
    ].join("\n") + "\n";
    const r = await memory(["--daemon"], stdin);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split("\n").map((line) => JSON.parse(line) as unknown)).toEqual([
      { action: "deny", reason: "recall from the credentials namespace is not allowed", code: 403 },
      { action: "allow" },
    ]);
  }, 60_000);
});

describe("--dialect repo-yaml against the real server (policies/repo-yaml-hooks)", () => {
  const repo = (event: string, stdin: Record<string, unknown>): Promise<Run> =>
    hook({ url, token: TOKENS.client }, [event, "--dialect", "repo-yaml", "--timeout-ms", "30000"], JSON.stringify(stdin));

  test("block: an ability outside the scope is blocked_by_policy, exit 2", async () => {
    const r = await repo("PreAbilityCall", { session_id: "adapter-repo", ability_id: "shell.exec", planned_input_summary: "rm -rf build" });
    expect(r.code, r.stderr).toBe(2);
    expect(answer(r)).toMatchObject({ error: "blocked_by_policy", messages_to_user: [expect.stringContaining("shell.exec is outside")] });
  }, 60_000);

  test("allow and suggest: a workflow ability passes (exit 0); a slow billing ability gets its runbook", async () => {
    const ok = await repo("PreAbilityCall", { session_id: "adapter-repo", ability_id: "workflow.billing.regression" });
    expect(ok.code, ok.stderr).toBe(0);
    expect(answer(ok)).not.toHaveProperty("error");
    const slow = await repo("PostAbilityCall", { session_id: "adapter-repo", ability_id: "billing_regression", status: "failure", duration_ms: 187000 });
    expect(slow.code, slow.stderr).toBe(0);
    expect(answer(slow)).toMatchObject({ suggested_documents: [{ path: "docs/runbooks/billing.md" }] });
  }, 60_000);
});

describe("with the server stopped", () => {
  beforeAll(async () => {
    await h?.close();
    h = undefined;
  }, 60_000);

  test.each(["gemini", "llxprt", "claude"] as const)("%s: warn ⇒ exit 1 + one stderr line; block ⇒ exit 2 + the reason; allow ⇒ exit 0, silent; auto (default) ⇒ the tool event blocked", async (d) => {
    const stdin = input(d, SHELL[d], "rm -rf /");
    const warn = await run(d, stdin, ["--on-error", "warn"]);
    expect([warn.code, warn.stdout]).toEqual([1, ""]);
    expect(warn.stderr).toMatch(/^vcp-hooks hook: .*unreachable: ECONNREFUSED \(on-error=warn\)\n$/);
    const block = await run(d, stdin, ["--on-error", "block"]);
    expect([block.code, block.stdout]).toEqual([2, ""]);
    expect(block.stderr).toMatch(/^vcp-hooks unavailable: .*ECONNREFUSED\n$/);
    const allow = await run(d, stdin, ["--on-error", "allow"]);
    expect([allow.code, allow.stdout, allow.stderr]).toEqual([0, "", ""]);
    const byDefault = await run(d, stdin);
    expect([byDefault.code, byDefault.stdout]).toEqual([2, ""]);
    expect(byDefault.stderr).toMatch(/ECONNREFUSED \(on-error=auto: /);
  }, 60_000);
});
