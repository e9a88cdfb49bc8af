// Every chain is counted in the chain metrics, those no hook ran in too (issue 25): an operator asking
// "how many BeforeTool events did we answer, and how many were blocked" reads vcp_profile_chains_total
// (vcp_chains_total for VCP types), and vcp_chains_no_hook_total says how many of them ran no hook —
// none installed for the event, none selected, or an event newer than its profile. Those unknown
// event names are chosen by the agent: they all count under event="unknown", never one series each.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createRuntime, type Runtime } from "../../../src/index.js";
import { registerProfile } from "../../../src/profiles/index.js";
import { profileBundle } from "../../support/bundles.js";
import { fireInput } from "../../support/fixtures.js";
import echoProfile from "../../support/echo-profile.js";
import { createVmBackend } from "../../support/vm-backend.js";

registerProfile(echoProfile);

let runtime: Runtime;
const client = { id: "app", role: "client" } as const;

beforeAll(async () => {
  runtime = await createRuntime({ backend: createVmBackend(), profiles: { echo: {}, "claude-code": {} } });
  // One hook on echo's Check whose matcher only `write` meets; nothing on Notice, nothing for VCP.
  await runtime.bundles.install(profileBundle("sel", "echo", [{ name: "writes", matcher: "^write$" }], { writes: "() => ({ decision: 'block', reason: 'no writes' })" }, {}, "Check"));
}, 60_000);
afterAll(async () => {
  await runtime?.close();
});

/** The value of one series in a scrape (0 when absent), `series` being its name and labels as printed. */
function value(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

describe("chains no hook ran in are counted", () => {
  test("a VCP type with no hook installed: vcp_chains_total{status=completed}, and as a chain without hooks", async () => {
    const before = await runtime.metrics();
    const result = await runtime.fire("post_select", fireInput("post_select"));
    expect(result.decision).toMatchObject({ outcome: "allow", decided_by: null, reason: "no hook selected" });
    const after = await runtime.metrics();
    for (const series of ['vcp_chains_total{type="post_select",status="completed"}', 'vcp_chains_no_hook_total{profile="vcp",event="post_select"}']) {
      expect(value(after, series) - value(before, series), series).toBe(1);
    }
  });

  test("a profile event with no hook installed, and one whose hooks no matcher selects: counted by exit code", async () => {
    const before = await runtime.metrics();
    await expect(runtime.fireProfile("echo", "Notice", { input: { session_id: "s1" }, principal: client })).resolves.toMatchObject({ exit_code: 0 });
    const none = await runtime.fireProfile("echo", "Check", { input: { session_id: "s1", tool: "ls" }, principal: client });
    expect(none.result.hook_results.map((h) => h.outcome)).toEqual(["skipped_matcher"]);
    const blocked = await runtime.fireProfile("echo", "Check", { input: { session_id: "s1", tool: "write" }, principal: client });
    expect(blocked.decision).toMatchObject({ outcome: "block", decided_by: { hook: "writes" } });
    const after = await runtime.metrics();
    const grew = (series: string) => value(after, series) - value(before, series);
    expect(grew('vcp_profile_chains_total{profile="echo",event="Notice",exit_code="0"}')).toBe(1);
    expect(grew('vcp_chains_no_hook_total{profile="echo",event="Notice"}')).toBe(1);
    // Check: two answered, one of them by no hook; the block is counted under its own exit code.
    const checks = after.split("\n").filter((l) => l.startsWith('vcp_profile_chains_total{profile="echo",event="Check"'));
    expect(checks.reduce((sum, l) => sum + Number(l.split(" ").pop()), 0)).toBe(2);
    expect(grew('vcp_chains_no_hook_total{profile="echo",event="Check"}')).toBe(1);
    // Nothing ran in the sandbox for those: only the chain that ran a hook is timed.
    expect(grew('vcp_profile_chain_duration_seconds_count{profile="echo",event="Notice"}')).toBe(0);
    expect(grew('vcp_profile_chain_duration_seconds_count{profile="echo",event="Check"}')).toBe(1);
  });

  test("events newer than the profile count under event=\"unknown\": no series per name", async () => {
    const before = await runtime.metrics();
    for (let i = 0; i < 20; i++) {
      const out = await runtime.fireProfile("claude-code", `FutureEvent${i}`, { input: { session_id: "s1", hook_event_name: `FutureEvent${i}` }, principal: client });
      expect(out.unknown_event).toBe(true);
    }
    const after = await runtime.metrics();
    expect(value(after, 'vcp_profile_chains_total{profile="claude-code",event="unknown",exit_code="0"}') - value(before, 'vcp_profile_chains_total{profile="claude-code",event="unknown",exit_code="0"}')).toBe(20);
    expect(value(after, 'vcp_chains_no_hook_total{profile="claude-code",event="unknown"}') - value(before, 'vcp_chains_no_hook_total{profile="claude-code",event="unknown"}')).toBe(20);
    expect(after).not.toMatch(/FutureEvent/);
  });
});
