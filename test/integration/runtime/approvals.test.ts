// runtime.approvals (PROFILES §3.4 "Coordinator", §8.9) through the library: an Amplifier ask_user
// answer becomes a pending approval; decisions, the allow-always cache, the timeout default,
// ownership, limits and the audit records. Chains run on the in-process vm backend (test/support).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { createRuntime, type ApprovalEvent, type Runtime, type RuntimeOptions } from "../../../src/index.js";
import { profileBundle } from "../../support/bundles.js";
import { createVmBackend } from "../../support/vm-backend.js";

const alice = { id: "alice", role: "client" } as const;
const bob = { id: "bob", role: "client" } as const;
const ops = { id: "ops", role: "operator" } as const;
/** The human who answers alice's agent's asks (a client never decides its own). */
const aliceHuman = { id: "alice-human", role: "approver", approves: ["alice"] } as const;

/** A hook that asks; prompt, timeout and default come from the event data so one bundle serves every test. */
const ASKER = profileBundle("asker", "amplifier", [{ name: "prod_guard", event: "tool:pre" }], {
  prod_guard: `(input) => ({
    action: "ask_user",
    approval_prompt: input.data.prompt || "Run " + input.data.tool_name + "?",
    approval_options: ["Allow once", "Allow always", "Deny"],
    approval_timeout: input.data.timeout_s || 60,
    approval_default: input.data.default || "deny",
    data: { touched: true }
  })`,
});

const open: Runtime[] = [];
const dirs: string[] = [];
async function runtime(options: Partial<RuntimeOptions> = {}): Promise<Runtime> {
  const dir = mkdtempSync(join(tmpdir(), "vcp-approvals-"));
  dirs.push(dir);
  const rt = await createRuntime({ backend: createVmBackend(), audit: { path: join(dir, "audit.jsonl") }, profiles: { amplifier: {} }, ...options });
  open.push(rt);
  await rt.bundles.install(ASKER);
  return rt;
}
afterEach(async () => {
  for (const rt of open.splice(0)) await rt.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const ask = (rt: Runtime, session: string, data: Record<string, unknown> = {}, options: { principal?: typeof alice | typeof bob | typeof ops; waitApproval?: boolean } = {}) =>
  rt.fireProfile("amplifier", "tool:pre", { input: { event: "tool:pre", data: { session_id: session, tool_name: "rm", ...data } }, ...options });

describe("approvals in the library", () => {
  test("an ask_user answer is a pending approval with id and expires_at; granting it is recorded in the audit log with who and when", async () => {
    const rt = await runtime();
    const events: ApprovalEvent[] = [];
    rt.approvals.on("approval", (e) => events.push(e));
    const out = await ask(rt, "s1", {}, { principal: alice });
    expect(out.native.action).toBe("ask_user");
    const approval = out.native.approval as Record<string, unknown>;
    expect(approval).toMatchObject({ hook: "prod_guard", prompt: "Run rm?", options: ["Allow once", "Allow always", "Deny"], default: "deny", state: "pending" });
    expect(typeof approval.id).toBe("string");
    expect(Date.parse(approval.expires_at as string) - Date.now()).toBeGreaterThan(50_000);

    const listed = await rt.approvals.list({ session: "s1" });
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ id: approval.id, session: "s1", owner: "alice", state: "pending", profile: "amplifier", event: "tool:pre" });

    const decided = await rt.approvals.decide(approval.id as string, "ALLOW once", { principal: aliceHuman });
    expect(decided).toMatchObject({ state: "granted", decision: "ALLOW once", decided_by: "alice-human" });
    expect((await rt.approvals.get(approval.id as string)).state).toBe("granted");
    expect(events.map((e) => [e.type, e.approval.state])).toEqual([["new", "pending"], ["decided", "granted"]]);

    const records = (await rt.audit.query({ limit: 1000 })).filter((r) => r.kind === "approval_request" || r.kind === "approval_decision");
    expect(records.map((r) => [r.kind, r.status, r.hook, r.owner, r.session])).toEqual([
      ["approval_request", "pending", "prod_guard", "alice", "s1"],
      ["approval_decision", "granted", "prod_guard", "alice", "s1"],
    ]);
    expect(records[0]!.details).toMatchObject({ approval_id: approval.id, prompt: "Run rm?", default: "deny" });
    expect(records[1]!.details).toMatchObject({ approval_id: approval.id, decision: "ALLOW once", decided_by: "alice-human" });
    expect(typeof (records[1]!.details as { decided_at: string }).decided_at).toBe("string");
    expect(records[0]!.chain_id).toBe(out.result.chain_id);
  });

  test("an approval carries the tool call it asks about: redacted like the audit log, cut at 16,384 characters", async () => {
    const rt = await runtime();
    const secret = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123";
    await ask(rt, "in1", { tool_name: "bash", tool_input: { command: `curl -H 'Authorization: Bearer abc.def' https://x/?k=${secret}`, password: "hunter2" } }, { principal: alice });
    const [small] = await rt.approvals.list({ session: "in1" });
    expect(small!.input_truncated).toBe(false);
    const shown = JSON.parse(small!.input!) as { tool_name: string; tool_input: { command: string; password: string } };
    expect(shown.tool_name).toBe("bash");
    expect(shown.tool_input.command).toContain("curl -H");
    expect(shown.tool_input.password).toBe("[REDACTED]");
    expect(small!.input).not.toContain(secret);
    expect(small!.input).not.toContain("hunter2");
    expect(small!.input).not.toContain("abc.def");

    await ask(rt, "in2", { tool_name: "write_file", tool_input: { path: "/tmp/a", content: "x".repeat(40_000) } }, { principal: alice });
    const [big] = await rt.approvals.list({ session: "in2" });
    expect(big!.input_truncated).toBe(true);
    expect(big!.input!.length).toBeLessThanOrEqual(16_384);
    expect(big!.input).toContain('"tool_name":"write_file"');
  });

  test("anything but allow / allow once / allow always denies with 'User denied: <prompt>'; a second decision is APPROVAL_DECIDED and the first stands", async () => {
    const rt = await runtime();
    const waiting = ask(rt, "s2", { prompt: "Delete the database?" }, { principal: alice, waitApproval: true });
    let pending = await rt.approvals.list({ state: "pending" });
    for (let i = 0; pending.length === 0 && i < 200; i++) {
      await new Promise((r) => setTimeout(r, 10));
      pending = await rt.approvals.list({ state: "pending" });
    }
    expect(pending).toHaveLength(1);
    await rt.approvals.decide(pending[0]!.id, "allow-ish", { principal: ops });
    const out = await waiting;
    expect(out.native.action).toBe("deny");
    expect(out.native.reason).toBe("User denied: Delete the database?");
    expect(out.native.approval).toMatchObject({ state: "denied", decision: "allow-ish", decided_by: "ops" });

    await expect(rt.approvals.decide(pending[0]!.id, "allow", { principal: aliceHuman })).rejects.toMatchObject({ code: "APPROVAL_DECIDED" });
    expect(await rt.approvals.get(pending[0]!.id)).toMatchObject({ state: "denied", decision: "allow-ish" });
    await expect(rt.approvals.decide("no-such-id", "allow")).rejects.toMatchObject({ code: "APPROVAL_NOT_FOUND" });
  });

  test("another client neither sees nor decides an approval (APPROVAL_NOT_FOUND, like a missing one); operators see all", async () => {
    const rt = await runtime();
    const out = await ask(rt, "s3", {}, { principal: alice });
    const id = (out.native.approval as { id: string }).id;
    expect(await rt.approvals.list({ principal: bob })).toEqual([]);
    await expect(rt.approvals.get(id, { principal: bob })).rejects.toThrow(expect.objectContaining({ code: "APPROVAL_NOT_FOUND" }));
    await expect(rt.approvals.decide(id, "allow", { principal: bob })).rejects.toMatchObject({ code: "APPROVAL_NOT_FOUND" });
    await expect(rt.approvals.wait(id, { principal: bob })).rejects.toMatchObject({ code: "APPROVAL_NOT_FOUND" });
    expect((await rt.approvals.get(id)).state).toBe("pending"); // bob changed nothing
    expect((await rt.approvals.list({ principal: ops })).map((a) => a.id)).toEqual([id]);
    expect((await rt.approvals.list({ principal: alice })).map((a) => a.id)).toEqual([id]);
  });

  test("at the timeout the approval expires into approval_default (allow ⇒ continue, deny ⇒ deny); deciding it later is APPROVAL_DECIDED", async () => {
    const rt = await runtime();
    const allowed = await ask(rt, "s4", { timeout_s: 0.2, default: "allow" }, { principal: alice, waitApproval: true });
    expect(allowed.native.action).toBe("continue");
    expect(allowed.native.approval).toMatchObject({ state: "expired", decision: "allow", decided_by: "timeout" });
    const denied = await ask(rt, "s4", { timeout_s: 0.2, default: "deny", prompt: "Push to main?" }, { principal: alice, waitApproval: true });
    expect(denied.native.action).toBe("deny");
    expect(denied.native.reason).toContain("denied by default");
    expect(denied.native.reason).toContain("Push to main?");
    const id = (denied.native.approval as { id: string }).id;
    await expect(rt.approvals.decide(id, "allow", { principal: aliceHuman })).rejects.toMatchObject({ code: "APPROVAL_DECIDED", details: expect.objectContaining({ state: "expired" }) });
    const decisions = (await rt.audit.query({ limit: 1000 })).filter((r) => r.kind === "approval_decision");
    expect(decisions.map((r) => [r.status, (r.details as { decided_by: string }).decided_by])).toEqual([["expired", "timeout"], ["expired", "timeout"]]);
  });

  test("'Allow always' grants later identical asks (same hook, same full prompt) of the same session at once, recorded as such; another prompt or session still asks", async () => {
    const rt = await runtime();
    const first = await ask(rt, "s5", {}, { principal: alice });
    await rt.approvals.decide((first.native.approval as { id: string }).id, "Allow Always", { principal: aliceHuman });

    const again = await ask(rt, "s5", {}, { principal: alice });
    expect(again.native.action).toBe("continue");
    expect(again.native.approval).toMatchObject({ state: "granted", decision: "allow always", decided_by: "allow_always" });
    expect((await rt.approvals.get((again.native.approval as { id: string }).id)).state).toBe("granted");

    const otherPrompt = await ask(rt, "s5", { prompt: "Something else?" }, { principal: alice });
    expect(otherPrompt.native.action).toBe("ask_user");
    expect(otherPrompt.native.approval).toMatchObject({ state: "pending" });
    const otherSession = await ask(rt, "s6", {}, { principal: alice });
    expect(otherSession.native.approval).toMatchObject({ state: "pending" });

    const cached = (await rt.audit.query({ limit: 1000 })).filter((r) => r.kind === "approval_request" && r.status === "granted");
    expect(cached).toHaveLength(1);
    expect(cached[0]!.details).toMatchObject({ decided_by: "allow_always" });
  });

  test("pending approvals are bounded per session and in all (APPROVAL_LIMIT, nothing created); timeouts are capped", async () => {
    const rt = await runtime({ approvals: { maxPendingPerSession: 2, maxPending: 3, maxTimeoutS: 5 } });
    const a = await ask(rt, "s7", { timeout_s: 100_000 }, { principal: alice });
    expect(a.native.approval).toMatchObject({ timeout_s: 5 });
    expect(Date.parse((a.native.approval as { expires_at: string }).expires_at) - Date.now()).toBeLessThanOrEqual(5_000);
    await ask(rt, "s7", { prompt: "two" }, { principal: alice });
    await expect(ask(rt, "s7", { prompt: "three" }, { principal: alice })).rejects.toMatchObject({ code: "APPROVAL_LIMIT", details: expect.objectContaining({ scope: "session" }) });
    expect(await rt.approvals.list({ session: "s7" })).toHaveLength(2);
    await ask(rt, "s8", {}, { principal: alice });
    await expect(ask(rt, "s9", {}, { principal: alice })).rejects.toMatchObject({ code: "APPROVAL_LIMIT", details: expect.objectContaining({ scope: "runtime" }) });
    // Deciding one frees a place.
    await rt.approvals.decide((a.native.approval as { id: string }).id, "deny");
    await expect(ask(rt, "s9", {}, { principal: alice })).resolves.toMatchObject({ native: { action: "ask_user" } });
  });

  test("a waiting caller that goes away (signal aborted) gets the pending ask; the approval stays pending and decidable", async () => {
    const rt = await runtime();
    const controller = new AbortController();
    const waiting = rt.fireProfile("amplifier", "tool:pre", { input: { event: "tool:pre", data: { session_id: "s11", tool_name: "rm" } }, principal: alice, waitApproval: true, signal: controller.signal });
    let pending = await rt.approvals.list({ session: "s11", state: "pending" });
    for (let i = 0; pending.length === 0 && i < 200; i++) {
      await new Promise((r) => setTimeout(r, 10));
      pending = await rt.approvals.list({ session: "s11", state: "pending" });
    }
    controller.abort();
    const out = await waiting;
    expect(out.native.action).toBe("ask_user");
    expect(out.native.approval).toMatchObject({ id: pending[0]!.id, state: "pending" });
    await expect(rt.approvals.decide(pending[0]!.id, "allow", { principal: aliceHuman })).resolves.toMatchObject({ state: "granted" });
  });

  test("a bad decision is INVALID_INPUT and changes nothing", async () => {
    const rt = await runtime();
    const out = await ask(rt, "s10", {}, { principal: alice });
    const id = (out.native.approval as { id: string }).id;
    await expect(rt.approvals.decide(id, "   ", { principal: aliceHuman })).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await expect(rt.approvals.decide(id, "x".repeat(300), { principal: aliceHuman })).rejects.toMatchObject({ code: "INVALID_INPUT" });
    expect((await rt.approvals.get(id)).state).toBe("pending");
  });
});
