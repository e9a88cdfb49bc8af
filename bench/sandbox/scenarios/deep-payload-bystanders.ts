/**
 * Issue 10, findings 2 and 3, seen from the other tenants: a result nested ~2,300 deep used to take the
 * sandbox host down twice per chain (crashing every tenant's in-flight chains, quarantining nobody),
 * and a context nested ~6,000 deep sent through `fire` left its chain in flight and killed the
 * embedding process. Here a bystander tenant keeps chains in flight while the attacker sends both;
 * the bystander's chains must all complete `ok`, the attacker's result must be an `invalid_result` of
 * the attacker's own hook, the deep input a clean INVALID_INPUT, and the sandbox must never restart.
 */
import type { ChainResult, Runtime } from "../../../src/index.js";
import { createRuntime, VcpError } from "../../../src/index.js";
import { buildGuestText } from "../../lib/guest-build.js";
import { Checks, type Scenario } from "../scenario.js";

const constitution = { id: "c1", version: "1", rules: [{ id: "r1", text: "be kind" }] };
const preInject = { injection_target: "system", injection_format: "system_prompt", raw_constitution: "be kind" };
const postSelect = { candidates: [constitution], selection_rationale: "only one", selection_algorithm: "fixed" };

const BYSTANDER = `export function tag(input) {
  // ~100 ms of work so the chains are in flight together (the guest clock is frozen during a call,
  // so a Date.now() loop would never end).
  let x = 0; for (let i = 0; i < 2e8; i++) x += i & 1;
  if (x < 0) throw new Error("unreachable");
  return { status: "modify", modified_context: { ...input.context, tagged: true } };
}`;
/**
 * The maximum: the bystander's ~100 ms must fit on a loaded machine (isolated-vm ends ordinary guest code
 * on the wall clock; with 3 s the bystanders timed out at load ≈ 25), the attack is about depth, not time.
 */
const BYSTANDER_TIMEOUT_MS = 30_000;
const ATTACKER = `export function deep() {
  let d = { leaf: true };
  for (let i = 0; i < 2300; i++) d = { d };
  return { status: "continue", annotations: { d } };
}`;

function deepContext(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++) v = { d: v };
  return v;
}

export const scenario: Scenario = {
  id: "deep-payload-bystanders",
  category: "tenant-isolation",
  title: "a tenant's 2,300-deep result and 6,000-deep input while another tenant's chains are in flight",
  expected: "bystander chains all ok; attacker hook invalid_result, deep input INVALID_INPUT; no sandbox restart",
  async run() {
    const checks = new Checks();
    const runtime: Runtime = await createRuntime({ requireSignatures: false, audit: false, sandbox: { threads: 2 } });
    try {
      await runtime.bundles.install({
        manifest: { bundle: "bystander", version: "1.0.0", trust: "deployment", hooks: [{ name: "tag", type: "pre_inject", action: "tag", priority: 50, timeout_ms: BYSTANDER_TIMEOUT_MS, condition: null }] },
        code: await buildGuestText(BYSTANDER),
      });
      await runtime.bundles.install({
        manifest: { bundle: "attacker", version: "1.0.0", trust: "deployment", hooks: [{ name: "deep", type: "post_select", action: "deep", priority: 50, timeout_ms: 3000, condition: null }] },
        code: await buildGuestText(ATTACKER),
      });
      const bystanders: Promise<ChainResult>[] = [];
      for (let i = 0; i < 6; i++) bystanders.push(runtime.fire("pre_inject", { session: `b-${i}`, context: { n: i }, constitution, event: preInject as never }));
      const attack = runtime.fire("post_select", { session: "a-1", context: { a: 1 }, constitution, event: postSelect as never });
      const deepInput = runtime.fire("pre_inject", { session: "a-2", context: deepContext(6000), constitution, event: preInject as never }).then(
        () => "accepted",
        (err: unknown) => (err instanceof VcpError ? err.code : `threw ${String(err)}`),
      );
      const settled = await Promise.allSettled([...bystanders, attack]);
      const outcomes = settled.slice(0, bystanders.length).map((s) => (s.status === "fulfilled" ? s.value.hook_results[0]?.outcome ?? "none" : `rejected: ${String(s.reason)}`));
      checks.check(outcomes.every((o) => o === "ok"), `bystander chains: ${outcomes.join(", ")}`);
      const attacked = settled[bystanders.length]!;
      const attackOutcome = attacked.status === "fulfilled" ? attacked.value.hook_results[0] : undefined;
      checks.check(attackOutcome?.hook === "deep" && attackOutcome.outcome === "invalid_result", `attacker hook: ${attackOutcome ? `${attackOutcome.hook} ${attackOutcome.outcome}` : "chain rejected"}`);
      const deepVerdict = await deepInput;
      checks.check(deepVerdict === "INVALID_INPUT", `6,000-deep input: ${deepVerdict}`);
      const sandbox = runtime.status().sandbox;
      checks.check(sandbox.restarts === 0, `sandbox host restarted ${sandbox.restarts} times`);
      checks.check(sandbox.inFlight === 0, `${sandbox.inFlight} chains left in flight`);
      const after = await runtime.fire("pre_inject", { session: "b-after", context: { n: 99 }, constitution, event: preInject as never });
      const servedAfter = after.hook_results[0]?.outcome === "ok" && (after.context as { tagged?: boolean }).tagged === true;
      return checks.outcome(
        `bystanders ${outcomes.filter((o) => o === "ok").length}/${outcomes.length} ok; attacker ${attackOutcome?.outcome ?? "rejected"}; deep input ${deepVerdict}; restarts ${sandbox.restarts}`,
        servedAfter,
        sandbox.restarts,
      );
    } finally {
      await runtime.close();
    }
  },
};
