// A `trust: session` hook observes only (spec §8.3, PROFILES §2): in every profile, whatever it returns
// — every output field of the profile, one at a time — and whether it runs before or after the guard,
// the native answer is exactly the answer of the chain without it, and the guard sees the input the
// agent sent. A chain of observers alone answers the profile's neutral answer (the empty plan's).
// The rule lives in one place, chain/execute.ts; this table goes through each profile's fields.
import { describe, expect, test } from "vitest";
import { presentEmpty, runChain } from "../../../src/chain/execute.js";
import { compilePlan, orderProfileHooks } from "../../../src/chain/plan.js";
import type { ActionInvoker, ChainResult, InvokeOutcome } from "../../../src/model/chain.js";
import type { ResolvedHook } from "../../../src/model/hook.js";
import { findProfile } from "../../../src/profiles/index.js";
import type { EventProfile, NativeObject } from "../../../src/profiles/types.js";

type Action = (input: any) => unknown;

/** One observer output (or failure) to try against a profile's guard on `event`. */
interface Case {
  /** The output field (or behaviour) the observer uses. */
  field: string;
  event: string;
  observer: unknown | { throws: string };
  /** Settings of the profile (strict switch) for this case. */
  strict?: boolean;
}

interface ProfileTable {
  id: string;
  input(event: string): NativeObject;
  /** The deployment hook: its output depends on its input, so an observer rewriting the input shows. */
  guard(event: string): Action;
  /** Definition flags of the guard (repo-yaml `blocking`). */
  guardHook?: Partial<ResolvedHook>;
  cases: Case[];
}

const MARK = "OBSERVER-MARK";

let seq = 0;
function hook(name: string, profile: EventProfile, event: string, extra: Partial<ResolvedHook>): ResolvedHook {
  return Object.freeze({
    name, type: "pre_inject" as const, priority: 50, timeout_ms: 1000,
    action: { bundle: name === "guard" ? "policy" : "repo-hooks", export: name, digest: name === "guard" ? "sha256:guard" : "sha256:observer" },
    condition: null, enabled: true, metadata: {}, fail_closed: false, trust: "deployment" as const, scope: "deployment" as const, seq: ++seq,
    profile: profile.id, event, sequential: true, ...extra,
  });
}

function invoker(actions: Record<string, Action>): ActionInvoker {
  return {
    async invoke(request): Promise<InvokeOutcome> {
      const out = actions[request.hook.name]!(JSON.parse(request.inputJson));
      if (out !== null && typeof out === "object" && "throws" in out) return { kind: "threw", message: String((out as { throws: string }).throws) };
      return { kind: "returned", resultJson: out === undefined ? "null" : JSON.stringify(out), chainStateJson: "{}" };
    },
  };
}

let tick = 0;
const clock = { now: () => (tick += 1), wallNow: () => Date.UTC(2026, 10, 26) };

/** Run `order` (hook names in plan order) of the guard and the observer on the case's event. */
async function run(table: ProfileTable, c: Case, order: Array<"guard" | "observer">): Promise<ChainResult> {
  const profile = findProfile(table.id)!;
  const ref = { id: profile.id, event: c.event, strict: c.strict === true, settings: {} };
  // Plan order by the profile's own rule: priorities for priority profiles, registration order otherwise.
  const hooks = order.map((name, i) => {
    const priority = profile.ordering === "priority_desc" ? 90 - i * 10 : profile.ordering === "priority_asc" ? 10 + i * 10 : 50;
    return name === "guard" ? hook("guard", profile, c.event, { priority, ...table.guardHook }) : hook("observer", profile, c.event, { priority, trust: "session" });
  });
  const plan = compilePlan(profile, ref, orderProfileHooks(profile, hooks), 1);
  expect(plan.hooks.map((h) => h.hook.name)).toEqual(order);
  const actions: Record<string, Action> = { guard: table.guard(c.event), observer: () => c.observer };
  return runChain(plan, { chainId: "c1", context: {}, constitution: { id: "none", rules: [] } as never, event: table.input(c.event), session: { id: "s1" } }, { invoker: invoker(actions), clock });
}

const gemini = (id: "gemini-cli" | "llxprt"): ProfileTable => ({
  id,
  input: (event) => {
    const base = { session_id: "s1", hook_event_name: event, cwd: "/w" };
    switch (event) {
      case "BeforeTool": return { ...base, tool_name: "run_shell_command", tool_input: { command: "rm -rf /" } };
      case "AfterTool": return { ...base, tool_name: "run_shell_command", tool_input: { command: "ls" }, tool_response: { llmContent: "ok" } };
      case "BeforeAgent": return { ...base, prompt: "deploy" };
      case "AfterAgent": return { ...base, prompt: "deploy", prompt_response: "done" };
      case "Notification": return { ...base, notification_type: "ToolPermission", message: "m" };
      case "BeforeModel": case "BeforeToolSelection": return { ...base, llm_request: { model: "m", messages: [{ role: "user", content: "deploy" }] } };
      case "AfterModel": return { ...base, llm_request: { model: "m" }, llm_response: { text: "answer" } };
      default: return base;
    }
  },
  guard: (event) => (input) => {
    const saw = JSON.stringify(input.tool_input ?? input.prompt ?? input.llm_request ?? input.message ?? "");
    if (event === "BeforeToolSelection") return { hookSpecificOutput: { hookEventName: event, toolConfig: { mode: "ANY", allowedFunctionNames: ["read_file"] } } };
    return { decision: "block", reason: `guard saw ${saw}`, systemMessage: "guard: blocked", hookSpecificOutput: { hookEventName: event, additionalContext: "guard context" } };
  },
  cases: [
    { field: "decision block", event: "BeforeTool", observer: { decision: "block", reason: MARK } },
    { field: "decision deny", event: "AfterTool", observer: { decision: "deny" } },
    { field: "decision ask", event: "BeforeTool", observer: { decision: "ask" } },
    { field: "decision approve", event: "BeforeModel", observer: { decision: "approve" } },
    // Field replacement: a later allow would override the guard's block upstream (non-strict).
    { field: "decision allow (BeforeModel field replacement)", event: "BeforeModel", observer: { decision: "allow" } },
    { field: "continue false", event: "BeforeAgent", observer: { continue: false } },
    { field: "stopReason", event: "BeforeTool", observer: { continue: false, stopReason: MARK } },
    { field: "stopReason alone (shallow merge)", event: "Notification", observer: { stopReason: MARK } },
    { field: "suppressOutput", event: "BeforeTool", observer: { suppressOutput: true } },
    // LLxprt keeps the first systemMessage: an observer running first would hide the guard's.
    { field: "systemMessage", event: "BeforeTool", observer: { systemMessage: MARK } },
    { field: "systemMessage (shallow merge)", event: "Notification", observer: { systemMessage: MARK } },
    { field: "reason", event: "BeforeTool", observer: { reason: MARK } },
    { field: "hookSpecificOutput.tool_input", event: "BeforeTool", observer: { hookSpecificOutput: { tool_input: { command: MARK } } } },
    { field: "hookSpecificOutput.permissionDecision", event: "BeforeTool", observer: { hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: MARK } } },
    { field: "hookSpecificOutput.additionalContext (chains the prompt)", event: "BeforeAgent", observer: { hookSpecificOutput: { additionalContext: MARK } } },
    { field: "hookSpecificOutput.additionalContext", event: "AfterTool", observer: { hookSpecificOutput: { additionalContext: MARK } } },
    { field: "hookSpecificOutput.tool_output", event: "AfterTool", observer: { hookSpecificOutput: { tool_output: MARK } } },
    { field: "hookSpecificOutput.clearContext", event: "AfterAgent", observer: { hookSpecificOutput: { clearContext: true } } },
    { field: "hookSpecificOutput.llm_request (chains the request)", event: "BeforeModel", observer: { hookSpecificOutput: { llm_request: { model: MARK } } } },
    { field: "hookSpecificOutput.llm_response", event: "AfterModel", observer: { hookSpecificOutput: { llm_response: { text: MARK } } } },
    { field: "hookSpecificOutput.toolConfig NONE", event: "BeforeToolSelection", observer: { hookSpecificOutput: { toolConfig: { mode: "NONE" } } } },
    { field: "hookSpecificOutput.toolConfig names", event: "BeforeToolSelection", observer: { hookSpecificOutput: { toolConfig: { mode: "ANY", allowedFunctionNames: [MARK] } } } },
    { field: "an unknown key", event: "Notification", observer: { [MARK]: true } },
    { field: "strict: decision block", event: "BeforeModel", observer: { decision: "block", reason: MARK }, strict: true },
    { field: "a failure (fail-open warning)", event: "BeforeTool", observer: { throws: MARK } },
    { field: "plain text (a systemMessage)", event: "BeforeTool", observer: MARK },
  ],
});

const claude: ProfileTable = {
  id: "claude-code",
  input: (event) => {
    const base = { session_id: "s1", hook_event_name: event, cwd: "/w", permission_mode: "default" };
    switch (event) {
      case "PreToolUse": case "PermissionRequest": return { ...base, tool_name: "Bash", tool_input: { command: "rm -rf /" }, tool_use_id: "t1" };
      case "UserPromptSubmit": return { ...base, prompt: "deploy" };
      default: return base;
    }
  },
  guard: (event) => (input) => {
    const saw = JSON.stringify(input.tool_input ?? input.prompt ?? "");
    if (event === "PreToolUse") {
      return { systemMessage: "guard: ask", hookSpecificOutput: { hookEventName: event, permissionDecision: "ask", permissionDecisionReason: `guard saw ${saw}`, additionalContext: "guard context" } };
    }
    if (event === "PermissionRequest") return { hookSpecificOutput: { hookEventName: event, decision: { behavior: "deny", message: `guard saw ${saw}` } } };
    return { decision: "block", reason: `guard saw ${saw}`, systemMessage: "guard: blocked" };
  },
  cases: [
    { field: "permissionDecision allow", event: "PreToolUse", observer: { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" } } },
    { field: "permissionDecision deny", event: "PreToolUse", observer: { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: MARK } } },
    { field: "permissionDecision defer", event: "PreToolUse", observer: { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "defer" } } },
    { field: "permissionDecisionReason", event: "PreToolUse", observer: { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "ask", permissionDecisionReason: MARK } } },
    { field: "updatedInput (chains tool_input)", event: "PreToolUse", observer: { hookSpecificOutput: { hookEventName: "PreToolUse", updatedInput: { command: MARK } } } },
    { field: "additionalContext", event: "PreToolUse", observer: { hookSpecificOutput: { hookEventName: "PreToolUse", additionalContext: MARK } } },
    { field: "additionalContext (UserPromptSubmit)", event: "UserPromptSubmit", observer: { hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: MARK } } },
    { field: "decision approve (deprecated permission)", event: "PreToolUse", observer: { decision: "approve", reason: MARK } },
    { field: "decision block", event: "UserPromptSubmit", observer: { decision: "block", reason: MARK } },
    { field: "PermissionRequest decision allow + updatedInput", event: "PermissionRequest", observer: { hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow", updatedInput: { command: MARK } } } } },
    { field: "PermissionRequest decision deny + interrupt", event: "PermissionRequest", observer: { hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny", message: MARK, interrupt: true } } } },
    { field: "continue false", event: "Stop", observer: { continue: false, stopReason: MARK } },
    { field: "suppressOutput", event: "PreToolUse", observer: { suppressOutput: true } },
    { field: "systemMessage", event: "PreToolUse", observer: { systemMessage: MARK } },
    { field: "a failure (non-blocking error)", event: "PreToolUse", observer: { throws: MARK } },
  ],
};

const amplifier: ProfileTable = {
  id: "amplifier",
  input: (event) => ({ event, data: { session_id: "s1", tool_name: "bash" } }),
  guard: () => (input) => ({ action: "inject_context", context_injection: `guard saw ${JSON.stringify(input.data.tool_name)}`, user_message: "guard note" }),
  cases: [
    { field: "action deny", event: "tool:pre", observer: { action: "deny", reason: MARK } },
    { field: "action modify + data (chains the data)", event: "tool:pre", observer: { action: "modify", data: { tool_name: MARK } } },
    { field: "strict: action modify + data", event: "tool:pre", observer: { action: "modify", data: { tool_name: MARK } }, strict: true },
    { field: "action inject_context", event: "tool:pre", observer: { action: "inject_context", context_injection: MARK } },
    // Role, suppress_output and ephemeral are taken from the first injection: an observer's first one would set the guard's.
    { field: "context_injection_role", event: "tool:pre", observer: { action: "inject_context", context_injection: MARK, context_injection_role: "assistant" } },
    { field: "suppress_output", event: "tool:pre", observer: { action: "inject_context", context_injection: MARK, suppress_output: true } },
    { field: "ephemeral", event: "tool:pre", observer: { action: "inject_context", context_injection: MARK, ephemeral: true } },
    { field: "append_to_last_tool_result", event: "tool:pre", observer: { action: "inject_context", context_injection: MARK, append_to_last_tool_result: true } },
    { field: "action ask_user + approval fields", event: "tool:pre", observer: { action: "ask_user", approval_prompt: MARK, approval_options: ["Allow"], approval_timeout: 5, approval_default: "allow" } },
    { field: "user_message + level + source", event: "tool:pre", observer: { user_message: MARK, user_message_level: "error", user_message_source: MARK } },
    { field: "reason", event: "tool:pre", observer: { reason: MARK } },
    { field: "extensions / unknown keys", event: "tool:pre", observer: { [MARK]: 1, extensions: { x: MARK } } },
    { field: "a custom event", event: "myapp:check", observer: { action: "deny", reason: MARK } },
    { field: "a failure (skipped)", event: "tool:pre", observer: { throws: MARK } },
  ],
};

const aiMemory: ProfileTable = {
  id: "ai-memory",
  input: (event) => ({ event, payload: { namespace: "team", content: "note" } }),
  guard: () => (input) => ({ action: "ask_user", prompt: `guard saw ${JSON.stringify(input.payload.content)}`, options: ["allow", "deny"] }),
  cases: [
    // An allow clears queued AskUsers (upstream): an observer's allow after the guard would drop the guard's question.
    { field: "action allow", event: "pre_store", observer: { action: "allow" } },
    { field: "{} (allow)", event: "pre_store", observer: {} },
    { field: "action modify + delta (chains the payload, clears asks)", event: "pre_store", observer: { action: "modify", delta: { content: MARK } } },
    { field: "action deny + reason + code", event: "pre_store", observer: { action: "deny", reason: MARK, code: 451 } },
    { field: "action ask_user + prompt + options + default", event: "pre_store", observer: { action: "ask_user", prompt: MARK, options: [MARK], default: MARK } },
    { field: "modify on a post_ event (allow with a warning)", event: "post_store", observer: { action: "modify", delta: { content: MARK } } },
    { field: "strict: action allow", event: "pre_store", observer: { action: "allow" }, strict: true },
    { field: "a failure (fail-open allow with a warning)", event: "pre_store", observer: { throws: MARK } },
  ],
};

const repoYaml: ProfileTable = {
  id: "repo-yaml",
  input: (event) => (event === "PreAbilityCall" ? { event_type: event, session_id: "s1", ability_id: "fs.write" } : { event_type: event, session_id: "s1" }),
  guard: (event) => (input) => ({
    messages_to_user: [`guard saw ${JSON.stringify(input.ability_id ?? event)}`],
    new_intent: { intent: "guard-intent" },
    ...(event === "PreAbilityCall" ? { error: "blocked_by_policy" } : {}),
  }),
  guardHook: { blocking: true },
  cases: [
    { field: "new_intent", event: "PreAbilityCall", observer: { new_intent: { intent: MARK } } },
    { field: "new_intent (UserPromptSubmit)", event: "UserPromptSubmit", observer: { new_intent: { intent: MARK, stage: "act" } } },
    { field: "follow_up_actions", event: "PostAbilityCall", observer: { follow_up_actions: [{ kind: "run_command", payload: { command: MARK } }] } },
    { field: "messages_to_user", event: "PreAbilityCall", observer: { messages_to_user: [MARK] } },
    { field: "logs", event: "PreAbilityCall", observer: { logs: [{ level: "info", message: MARK }] } },
    { field: "suggested_abilities", event: "UserPromptSubmit", observer: { suggested_abilities: [{ id: MARK, reason: "r" }] } },
    { field: "suggested_documents", event: "UserPromptSubmit", observer: { suggested_documents: [{ path: MARK, reason: "r" }] } },
    { field: "usage_recorded", event: "PostAbilityCall", observer: { usage_recorded: true } },
    { field: "error blocked_by_policy", event: "PreAbilityCall", observer: { error: "blocked_by_policy" } },
    { field: "error (other)", event: "PreAbilityCall", observer: { error: MARK } },
    { field: "a failure (warn log)", event: "PreAbilityCall", observer: { throws: MARK } },
  ],
};

const TABLES: ProfileTable[] = [gemini("gemini-cli"), gemini("llxprt"), claude, amplifier, aiMemory, repoYaml];

describe.each(TABLES)("$id: a session-trust hook's output never reaches the answer", (table) => {
  test.each(table.cases)("$field ($event)", async (c) => {
    const alone = await run(table, c, ["guard"]);
    for (const order of [["observer", "guard"], ["guard", "observer"]] as Array<Array<"guard" | "observer">>) {
      const both = await run(table, c, order);
      // The answer (and the guard's view of the input) is exactly the answer without the observer.
      expect(both.profile, `observer ${order[0] === "observer" ? "first" : "last"}`).toEqual(alone.profile);
      expect(both.status).toBe(alone.status);
      expect(both.aborted_by).toBe(alone.aborted_by);
      expect(JSON.stringify(both.profile)).not.toContain(MARK);
      const observer = both.hook_results.find((h) => h.hook === "observer")!;
      expect(observer.status).toBe("continue");
      expect(observer.outcome).toBe(c.observer !== null && typeof c.observer === "object" && "throws" in c.observer ? "error" : observer.stripped === undefined ? "ok" : "capability_denied");
    }
    // Observers alone: the profile's neutral answer, as if no hook had applied.
    const profile = findProfile(table.id)!;
    const only = await run(table, c, ["observer"]);
    const neutral = presentEmpty(profile, c.event, { strict: c.strict === true, settings: {} }, table.input(c.event));
    expect(only.profile).toMatchObject({ native: neutral.native, exit_code: neutral.exit_code });
    expect(only.status).toBe("completed");
  });
});

test("an observer that tries to steer is reported: capability_denied names every field it set", async () => {
  const result = await run(gemini("llxprt"), { field: "", event: "BeforeTool", observer: { systemMessage: MARK, decision: "allow", hookSpecificOutput: { hookEventName: "BeforeTool", tool_input: { command: MARK } } } }, ["observer", "guard"]);
  const observer = result.hook_results.find((h) => h.hook === "observer")!;
  expect(observer).toMatchObject({ outcome: "capability_denied", status: "continue", verdict: "observe", stripped: ["systemMessage", "hookSpecificOutput.tool_input"] });
  expect(observer.error).toContain("spec §8.3");
  // An observer that says nothing the answer would carry is simply ok.
  const quiet = await run(gemini("llxprt"), { field: "", event: "BeforeTool", observer: { decision: "allow", continue: true } }, ["observer", "guard"]);
  expect(quiet.hook_results.find((h) => h.hook === "observer")).toMatchObject({ outcome: "ok", verdict: "observe" });
});
