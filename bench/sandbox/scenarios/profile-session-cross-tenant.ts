/**
 * Client B against client A's implicit profile session (PROFILES §8.3) over
 * `POST /v1/profiles/gemini-cli/events/BeforeTool`: B sends A's `session_id` — first, to squat it
 * before A uses it, then after A did, to reach A's per-session guest state. Implicit session ids are
 * per client like every session id: B must get its own session (never a 404 that reveals A's, never a
 * lock-out of A), A's policy must still decide A's events, and neither sees the other's guest state.
 */
import { Checks, type Scenario } from "../scenario.js";
import { TENANT_IDS, TENANT_TOKENS, send, startTenantServer, type Reply } from "../http-tenants.js";
import type { BundleSource } from "../../../src/index.js";

const SESSION = "gemini-session-7f3a";

/**
 * A Gemini CLI policy: `guard` blocks `rm`; `memo` (per-session isolation) tells what the previous
 * command of ITS session was, so any state shared across owners shows in the answer.
 */
const GUARD_BUNDLE: BundleSource = {
  manifest: {
    bundle: "profile-guard",
    version: "1.0.0",
    trust: "deployment",
    profile: "gemini-cli",
    isolation: "per_session",
    hooks: [
      { name: "guard", event: "BeforeTool", action: "guard", priority: 60, timeout_ms: 2000 },
      { name: "memo", event: "BeforeTool", action: "memo", priority: 40, timeout_ms: 2000 },
    ],
  } as unknown as BundleSource["manifest"],
  code: `var last = "none";
var __vcp_bundle = {
  guard: function (input) {
    var cmd = String(input.tool_input && input.tool_input.command);
    return cmd.indexOf("rm ") === 0 ? { decision: "block", reason: "no rm" } : { decision: "allow" };
  },
  memo: function (input) {
    var previous = last;
    last = String(input.tool_input && input.tool_input.command);
    return { systemMessage: "previous: " + previous };
  }
};`,
};

function event(session: string, command: string): Record<string, unknown> {
  return { session_id: session, transcript_path: "/t", cwd: "/w", hook_event_name: "BeforeTool", timestamp: "2026-11-26T00:00:00Z", tool_name: "run_shell_command", tool_input: { command } };
}

const fire = (url: string, token: string, session: string, command: string): Promise<Reply> => send(url, "POST", "/v1/profiles/gemini-cli/events/BeforeTool", token, event(session, command));

function native(reply: Reply): { decision?: string; systemMessage?: string } {
  return (reply.body as { native?: { decision?: string; systemMessage?: string } } | undefined)?.native ?? {};
}

export const scenario: Scenario = {
  id: "profile-session-cross-tenant",
  category: "profile-boundary",
  title: "client B sends client A's Gemini session_id: first to squat it, then to reach A's per-session state",
  expected: "B gets its own session every time (200, never a 404 oracle); A is never locked out, A's guard still blocks rm; no guest state crosses owners; A's audit records name A",
  async run() {
    const checks = new Checks();
    const t = await startTenantServer({ bundles: [GUARD_BUNDLE] });
    let servedAfter = false;
    const observed: string[] = [];
    try {
      // B first: before the fix the first sender owned the id and A got 404 (its adapter then fails open).
      const squat = await fire(t.url, TENANT_TOKENS.b, SESSION, "echo b-secret");
      observed.push(`B squat ${squat.status}`);
      checks.check(squat.status === 200, `B's first use of the id answered ${squat.status} ${JSON.stringify(squat.body).slice(0, 160)}`);

      const aFirst = await fire(t.url, TENANT_TOKENS.a, SESSION, "rm -rf /");
      observed.push(`A rm ${aFirst.status} ${native(aFirst).decision ?? "-"}`);
      checks.check(aFirst.status === 200, `A was locked out of its own session id by B: ${aFirst.status} ${JSON.stringify(aFirst.body).slice(0, 160)}`);
      checks.check(native(aFirst).decision === "block", `A's rm was not blocked by A's policy: ${JSON.stringify(native(aFirst))}`);
      checks.check(/previous: none/.test(native(aFirst).systemMessage ?? ""), `A's fresh session saw state from B's: ${native(aFirst).systemMessage}`);

      const aSecond = await fire(t.url, TENANT_TOKENS.a, SESSION, "cat a-secret");
      checks.check(aSecond.status === 200 && /previous: rm -rf \//.test(native(aSecond).systemMessage ?? ""), `A's session lost its own state: ${JSON.stringify(native(aSecond))}`);

      const bAgain = await fire(t.url, TENANT_TOKENS.b, SESSION, "ls");
      observed.push(`B again ${bAgain.status}`);
      checks.check(bAgain.status === 200, `B's second use answered ${bAgain.status}`);
      checks.check(!/a-secret|rm -rf/.test(JSON.stringify(bAgain.body)), `B's answer carries A's commands: ${JSON.stringify(native(bAgain))}`);
      checks.check(/previous: echo b-secret/.test(native(bAgain).systemMessage ?? ""), `B's own session state is not its own: ${native(bAgain).systemMessage}`);

      // No oracle: B's answer for A's id has the same shape as for an id nobody uses.
      const fresh = await fire(t.url, TENANT_TOKENS.b, "never-used-id", "ls");
      checks.check(fresh.status === bAgain.status, `B can tell A's id from an unused one: ${bAgain.status} vs ${fresh.status}`);

      const records = (await t.runtime.audit.query({ session: SESSION, limit: 10_000 })).filter((r) => r.kind !== "registry");
      const owners = new Set(records.map((r) => r.owner));
      checks.check(owners.has(TENANT_IDS.a) && owners.has(TENANT_IDS.b), `the audit does not keep A's and B's chains apart by owner: ${[...owners].join(", ")}`);

      const last = await fire(t.url, TENANT_TOKENS.a, SESSION, "rm -rf ~");
      servedAfter = last.status === 200 && native(last).decision === "block";
    } finally {
      await t.close();
    }
    return checks.outcome(observed.join(", "), servedAfter);
  },
};
