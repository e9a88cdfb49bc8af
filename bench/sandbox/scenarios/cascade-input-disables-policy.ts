/**
 * One client's *input* must not switch deployment policy off for other tenants through cascade
 * disabling (spec §7.3.4, `cascade.disableFailingHooks`).
 *
 * Setup: three deployment hooks on `pre_inject`, the PII redaction among them, each of which reads
 * `context.text` as a string. Tenant A sends a context whose `text` is a number: all three throw, a
 * cascade (3 of 3 failed) at deployment trust and scope, so the runtime may disable them, but only in
 * session A. Then tenant B's chain must still run them and get its PII redacted; the deployment hooks
 * stay enabled globally; `hook.cascade_failure` and the chain's audit record say the disable is
 * session-local; re-enabling in session A and closing session A both bring the hooks back there.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRuntime, type ChainResult, type Runtime } from "../../../src/index.js";
import { buildGuestText } from "../../lib/guest-build.js";
import { CONSTITUTION, EVENTS, RUNTIME_OPTIONS } from "../fixtures.js";
import { Checks, type Scenario } from "../scenario.js";

// `.replace` / `.length` on a number throw: the shape of A's input makes every policy hook fail.
const POLICY_SOURCE = `export function strip(input) {
  const text = input.context.text;
  const clean = text.replace(/[\\w.+-]+@[\\w-]+\\.[\\w.]+/g, "[email]");
  return clean === text ? { status: "continue" } : { status: "modify", modified_context: { ...input.context, text: clean } };
}
export function classify(input) { return input.context.text.trim().length > 0 ? { status: "continue" } : { status: "continue" }; }
export function lang(input) { return input.context.text.toLowerCase() ? { status: "continue" } : { status: "continue" }; }`;
const POLICY_HOOKS = ["strip_pii", "classify", "lang"];

function input(session: string, text: unknown) {
  return {
    session: { id: session },
    context: { text },
    constitution: structuredClone(CONSTITUTION),
    event: structuredClone(EVENTS["pre_inject"]) as never,
  };
}

function outcomes(result: ChainResult): string {
  return result.hook_results.map((h) => `${h.hook}=${h.outcome}`).join(",");
}

export const scenario: Scenario = {
  id: "cascade-input-disables-policy",
  category: "tenant-isolation",
  title: "a client whose input makes deployment hooks cascade gets them disabled in its own session only, never for other tenants",
  expected: "tenant A's cascade disables the policy hooks in session A only (reported disabled_scope: session); tenant B's chain still runs them and its PII is redacted; they stay enabled globally",
  async run() {
    const checks = new Checks();
    const dataDir = await mkdtemp(join(tmpdir(), "vcp-scenario-cascade-input-"));
    let runtime: Runtime | undefined;
    const observed: string[] = [];
    try {
      runtime = await createRuntime({ ...RUNTIME_OPTIONS, dataDir, cascade: { disableFailingHooks: true } });
      await runtime.bundles.install({
        manifest: {
          bundle: "policy", version: "1.0.0", trust: "deployment",
          hooks: [
            { name: "strip_pii", type: "pre_inject", action: "strip", priority: 50, timeout_ms: 2000, condition: null },
            { name: "classify", type: "pre_inject", action: "classify", priority: 40, timeout_ms: 2000, condition: null },
            { name: "lang", type: "pre_inject", action: "lang", priority: 30, timeout_ms: 2000, condition: null },
          ],
        },
        code: await buildGuestText(POLICY_SOURCE),
      });
      const cascades: Array<{ disabled: boolean; disabled_hooks: string[]; disabled_scope?: string; disabled_session?: string }> = [];
      runtime.on("hook.cascade_failure", (p) => cascades.push(p));
      const tenantA = { id: "tenant-a", role: "client" } as const;
      const tenantB = { id: "tenant-b", role: "client" } as const;
      await runtime.sessions.open({ session_id: "sa", context: { text: "" }, constitution: structuredClone(CONSTITUTION) }, { principal: tenantA });
      await runtime.sessions.open({ session_id: "sb", context: { text: "" }, constitution: structuredClone(CONSTITUTION) }, { principal: tenantB });

      // Tenant A: input shaped so that every policy hook throws.
      const a = await runtime.fire("pre_inject", { ...input("sa", 42), principal: tenantA });
      observed.push(`A: cascade=${a.cascade_failure} ${outcomes(a)}`);
      checks.check(a.cascade_failure, "tenant A: three of three hooks failing was not reported as a cascade");
      const event = cascades.at(-1);
      observed.push(`event=${JSON.stringify(event)}`);
      checks.check(event?.disabled === true && JSON.stringify([...(event?.disabled_hooks ?? [])].sort()) === JSON.stringify([...POLICY_HOOKS].sort()), `hook.cascade_failure disabled ${JSON.stringify(event?.disabled_hooks)}; expected the three policy hooks, in session sa`);
      checks.check(event?.disabled_scope === "session" && event.disabled_session === "sa", `hook.cascade_failure does not say the disable is session-local (disabled_scope ${String(event?.disabled_scope)}, disabled_session ${String(event?.disabled_session)})`);

      // Tenant B: its PII must still be redacted, by the policy hooks actually running.
      const b = await runtime.fire("pre_inject", { ...input("sb", "reach me at bob@example.org"), principal: tenantB });
      observed.push(`B: ${outcomes(b)}`);
      checks.check(b.context["text"] === "reach me at [email]", `tenant B: PII was not redacted (${JSON.stringify(b.context["text"])}) after tenant A's cascade`);
      for (const hook of POLICY_HOOKS) {
        const outcome = b.hook_results.find((h) => h.hook === hook)?.outcome ?? "absent";
        checks.check(outcome === "ok", `tenant B: deployment hook ${hook} was ${outcome}, not run, after tenant A's cascade`);
      }
      const global = await runtime.hooks.chain("pre_inject");
      checks.check(global.every((h) => h.enabled), `deployment hooks disabled globally by tenant A's input: ${global.filter((h) => !h.enabled).map((h) => h.name).join(", ")}`);

      // In session A the hooks are off (that is the point of disabling), until re-enabled there.
      const again = await runtime.fire("pre_inject", { ...input("sa", "a@example.com"), principal: tenantA });
      observed.push(`A again: ${outcomes(again)}`);
      checks.check(again.hook_results.every((h) => h.outcome === "skipped_disabled"), `tenant A's session did not skip its disabled hooks: ${outcomes(again)}`);
      try {
        await runtime.hooks.setEnabled("strip_pii", true, { sessionId: "sa" });
        const reenabled = await runtime.fire("pre_inject", { ...input("sa", "a@example.com"), principal: tenantA });
        checks.check(reenabled.context["text"] === "[email]", `re-enabling strip_pii in session sa did not bring redaction back there (${outcomes(reenabled)})`);
      } catch (err) {
        checks.check(false, `hooks.setEnabled("strip_pii", true, { sessionId: "sa" }) failed: ${err instanceof Error ? err.message : String(err)}`);
      }

      // The chain's audit record names the session-local disable.
      const records = await runtime.audit.query({ limit: 10_000 });
      const chainRecord = records.find((r) => r.kind === "chain" && r.chain_id === a.chain_id);
      const details = (chainRecord?.details ?? {}) as Record<string, unknown>;
      checks.check(details["disabled_scope"] === "session" && details["disabled_session"] === "sa", `audit: the cascading chain's record does not say the disable is session-local (${JSON.stringify(details)})`);

      // Closing session A forgets its disables: the same id opened again runs everything.
      await runtime.sessions.close("sa", { principal: tenantA });
      await runtime.sessions.open({ session_id: "sa", context: { text: "" }, constitution: structuredClone(CONSTITUTION) }, { principal: tenantA });
      const reopened = await runtime.fire("pre_inject", { ...input("sa", "z@example.com"), principal: tenantA });
      checks.check(reopened.hook_results.every((h) => h.outcome === "ok"), `a reopened session still had the closed session's disables: ${outcomes(reopened)}`);

      const after = await runtime.fire("pre_inject", { ...input("sb", "x@y.io"), principal: tenantB });
      const servedAfter = after.context["text"] === "[email]" && after.status === "completed";
      return checks.outcome(observed.join("; "), servedAfter, runtime.status().sandbox.restarts);
    } finally {
      await runtime?.close().catch(() => undefined);
      await rm(dataDir, { recursive: true, force: true });
    }
  },
};
