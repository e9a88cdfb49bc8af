// One safe-shell rule set for every agent a team runs (issue 26 item 3): the rules live in one source,
// policies/safe-shell-rules.ts; each tool-event profile's example policy (policies/<agent>-safe-shell,
// policies/amplifier-guard) is a thin layer that speaks the agent's own hook JSON. Here every one of
// them is built from the sources, signed and installed on one real server, and `rm -rf /` is fired at
// each profile's tool guard event three ways — the library (runtime.fireProfile), the HTTP route, and
// the drop-in adapter the agent runs (where the profile has a dialect) — and must be blocked every time,
// by the profile's own reading of its answer (verdictOf), with the shared rule's reason.
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { signArtifact } from "../../src/bundle/artifact.js";
import { buildBundle } from "../../src/bundle/build.js";
import type { VcpArtifact } from "../../src/index.js";
import { getProfile, listProfiles } from "../../src/profiles/index.js";
import { isToolEvent } from "../../src/tooling/guard-events.js";
import { hook } from "../cli/hook/stand-in.js";
import { cl, keys, op, startHarness, TOKENS, type Harness } from "./helpers.js";

const REASON = "blocked: rm -rf of a wildcard or a path outside the project: /";
const CWD = "/home/dev/app";

interface Row {
  readonly profile: string;
  readonly policy: string;
  /** The event before a tool runs, and the agent's input for `rm -rf /` on its shell tool. */
  readonly event: string;
  readonly input: Record<string, unknown>;
  /** `vcp-hooks hook --dialect`, when the agent runs the adapter. */
  readonly dialect?: string;
}

const ROWS: readonly Row[] = [
  {
    profile: "gemini-cli", policy: "gemini-safe-shell", event: "BeforeTool", dialect: "gemini",
    input: { session_id: "ss-gemini", transcript_path: "/t", cwd: CWD, hook_event_name: "BeforeTool", timestamp: "2026-11-28T00:00:00Z", tool_name: "run_shell_command", tool_input: { command: "rm -rf /" } },
  },
  {
    profile: "llxprt", policy: "llxprt-safe-shell", event: "BeforeTool", dialect: "llxprt",
    input: { session_id: "ss-llxprt", transcript_path: "/t", cwd: CWD, hook_event_name: "BeforeTool", timestamp: "2026-11-28T00:00:00Z", tool_name: "run_shell_command", tool_input: { command: "rm -rf /" } },
  },
  {
    profile: "claude-code", policy: "claude-safe-shell", event: "PreToolUse", dialect: "claude",
    input: { session_id: "ss-claude", transcript_path: "/t", cwd: CWD, permission_mode: "default", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "rm -rf /" }, tool_use_id: "toolu_1" },
  },
  {
    profile: "codex", policy: "codex-safe-shell", event: "PreToolUse", dialect: "codex",
    input: { session_id: "ss-codex", turn_id: "t1", transcript_path: null, cwd: CWD, model: "gpt-5", permission_mode: "default", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "rm -rf /" }, tool_use_id: "call_1" },
  },
  {
    profile: "cursor", policy: "cursor-safe-shell", event: "beforeShellExecution", dialect: "cursor",
    input: { hook_event_name: "beforeShellExecution", conversation_id: "ss-cursor", generation_id: "g1", workspace_roots: [CWD], command: "rm -rf /", cwd: CWD },
  },
  {
    profile: "goose", policy: "goose-safe-shell", event: "PreToolUse", dialect: "goose",
    input: { event: "PreToolUse", session_id: "ss-goose", matcher_context: "developer__shell", tool_name: "developer__shell", tool_input: { command: "rm -rf /" }, working_dir: CWD, tool_call_id: "call-1" },
  },
  {
    profile: "openhands", policy: "openhands-safe-shell", event: "PreToolUse", dialect: "openhands",
    input: { event_type: "PreToolUse", tool_name: "terminal", tool_input: { command: "rm -rf /" }, session_id: "ss-openhands", working_dir: CWD, metadata: {} },
  },
  {
    profile: "vscode", policy: "vscode-safe-shell", event: "PreToolUse", dialect: "vscode",
    input: { sessionId: "ss-vscode", hookEventName: "PreToolUse", timestamp: "2026-11-28T00:00:00.000Z", cwd: CWD, tool_name: "run_in_terminal", tool_input: { command: "rm -rf /" }, tool_use_id: "tool-1" },
  },
  {
    profile: "amplifier", policy: "amplifier-guard", event: "tool:pre",
    input: { event: "tool:pre", data: { session_id: "ss-amplifier", tool_name: "bash", tool_input: { command: "rm -rf /" }, cwd: CWD } },
  },
];

/** Profiles with a guard event before a shell or tool call; ai-memory (memory operations) and repo-yaml (abilities) have none. */
const NOT_SHELL = new Set(["vcp", "ai-memory", "repo-yaml"]);

let h: Harness | undefined;

beforeAll(async () => {
  h = await startHarness();
  for (const row of ROWS) {
    const { artifact } = await buildBundle(resolve("policies", row.policy));
    const put = await op(h, "PUT", `/v1/bundles/${row.policy}`, signArtifact(artifact, keys.ops.privateKeyPem, "ops") as VcpArtifact);
    expect(put.status, JSON.stringify(put.body)).toBe(201);
  }
}, 180_000);
afterAll(async () => {
  await h?.close();
});

test("every catalogued profile with a tool guard event has a row (a new agent profile needs its safe-shell policy)", () => {
  const toolProfiles = listProfiles()
    .filter((p) => !NOT_SHELL.has(p.id) && Object.keys(p.events).some((e) => isToolEvent(p.id, e)))
    .map((p) => p.id)
    .sort();
  expect(ROWS.map((r) => r.profile).sort()).toEqual(toolProfiles);
});

describe.each(ROWS.map((r) => [r.profile, r] as const))("%s: rm -rf / is blocked", (_id, row) => {
  const profile = getProfile(row.profile);
  const blocked = (native: unknown) => {
    expect(profile.verdictOf(native as Record<string, unknown>, row.event), JSON.stringify(native)).toBe("block");
    expect(JSON.stringify(native)).toContain(REASON);
  };

  test("through the library (runtime.fireProfile)", async () => {
    const answer = await h!.runtime.fireProfile(row.profile, row.event, { input: row.input });
    blocked(answer.native);
  }, 60_000);

  test("through the HTTP route", async () => {
    const res = await cl(h!, "POST", `/v1/profiles/${encodeURIComponent(row.profile)}/events/${encodeURIComponent(row.event)}`, row.input);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    blocked(res.body.native);
  }, 60_000);

  test.runIf(row.dialect !== undefined)("through the adapter the agent runs (vcp-hooks hook --dialect)", async () => {
    const r = await hook({ url: h!.url, token: TOKENS.client }, [row.event, "--dialect", row.dialect!, "--timeout-ms", "30000"], JSON.stringify(row.input));
    // Every dialect here answers a block as JSON with exit 0 (the one code each agent reads the same way).
    expect([r.code, r.stderr], r.stdout).toEqual([0, ""]);
    blocked(JSON.parse(r.stdout));
  }, 60_000);
});
