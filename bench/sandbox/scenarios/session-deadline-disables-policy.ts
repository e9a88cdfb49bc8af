/**
 * A session-trust (observe-only, spec §8.3) hook in one session must not be able to switch off
 * deployment policy, for that session or any other, by spending the whole-chain deadline.
 *
 * Setup: `chainDeadlineMs.pre_inject` and `cascade.disableFailingHooks`; a deployment bundle whose
 * `pre_inject` hook redacts e-mail addresses (the PII policy); an allowlisted session-scope hook that
 * busy-loops, with a priority that puts it first in the chain. Session A registers it and adapts a
 * few times. Then session B, which never registered anything, must still get its PII redacted.
 *
 * Second phase: two session hooks in session C that throw make a real cascade (2 of 3 hooks fail):
 * the runtime disables those two, in session C only, never the PII hook, and `hook.cascade_failure`
 * says so (`disabled: true`, `disabled_hooks`).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRuntime, type ChainResult, type Runtime } from "../../../src/index.js";
import { buildGuestText } from "../../lib/guest-build.js";
import { CONSTITUTION, EVENTS, RUNTIME_OPTIONS } from "../fixtures.js";
import { Checks, type Scenario } from "../scenario.js";

const DEADLINE_MS = 600;
const PII_SOURCE = `export function strip(input) {
  const text = String(input.context.text ?? "");
  const clean = text.replace(/[\\w.+-]+@[\\w-]+\\.[\\w.]+/g, "[email]");
  return clean === text ? { status: "continue" } : { status: "modify", modified_context: { ...input.context, text: clean } };
}`;
const OBSERVER_SOURCE = `export function spend() { for (;;) {} }
export function fail_one() { throw new Error("observer one fails"); }
export function fail_two() { throw new Error("observer two fails"); }`;

function input(session: string, text: string) {
  return {
    session: { id: session },
    context: { text },
    constitution: structuredClone(CONSTITUTION),
    event: structuredClone(EVENTS["pre_inject"]) as never,
  };
}

function outcomeOf(result: ChainResult, hook: string): string {
  return result.hook_results.find((h) => h.hook === hook)?.outcome ?? "absent";
}

export const scenario: Scenario = {
  id: "session-deadline-disables-policy",
  category: "tenant-isolation",
  title: "a session-trust hook that spends the chain deadline cannot get deployment PII redaction disabled or skipped",
  expected: "PII hook runs (ok) in session A, is not recorded as timed out, stays enabled, redacts in session B; a real cascade disables only session C's failing hooks and reports disabled: true",
  async run() {
    const checks = new Checks();
    const dataDir = await mkdtemp(join(tmpdir(), "vcp-scenario-deadline-"));
    let runtime: Runtime | undefined;
    let servedAfter = false;
    const observed: string[] = [];
    try {
      runtime = await createRuntime({
        ...RUNTIME_OPTIONS,
        dataDir,
        chainDeadlineMs: { pre_inject: DEADLINE_MS },
        cascade: { disableFailingHooks: true },
        sessionHookAllowlist: ["observer/spend", "observer/fail_one", "observer/fail_two"],
      });
      await runtime.bundles.install({
        manifest: {
          bundle: "pii", version: "1.0.0", trust: "deployment",
          hooks: [{ name: "strip_pii", type: "pre_inject", action: "strip", priority: 50, timeout_ms: 2000, condition: null }],
        },
        code: await buildGuestText(PII_SOURCE),
      });
      await runtime.bundles.install({
        manifest: {
          bundle: "observer", version: "1.0.0", trust: "session",
          hooks: [
            { name: "spend", type: "pre_inject", action: "spend", priority: 100, timeout_ms: 30000, scope: "session", condition: null },
            { name: "fail_one", type: "pre_inject", action: "fail_one", priority: 100, timeout_ms: 1000, scope: "session", condition: null },
            { name: "fail_two", type: "pre_inject", action: "fail_two", priority: 100, timeout_ms: 1000, scope: "session", condition: null },
          ],
        },
        code: await buildGuestText(OBSERVER_SOURCE),
      });
      const cascades: Array<{ disabled: boolean; disabled_hooks?: string[]; failing_hooks: string[] }> = [];
      runtime.on("hook.cascade_failure", (p) => cascades.push(p));

      // Phase 1: session A's observer spends the deadline, three times.
      await runtime.sessions.registerHook("A", { bundle: "observer", hook: "spend" });
      for (let i = 0; i < 3; i++) {
        const a = await runtime.fire("pre_inject", input("A", `mail a${i}@example.com`));
        observed.push(`A#${i}: spend=${outcomeOf(a, "spend")} strip_pii=${outcomeOf(a, "strip_pii")}`);
        checks.check(outcomeOf(a, "strip_pii") === "ok", `session A call ${i}: the deployment PII hook was ${outcomeOf(a, "strip_pii")}, not run (ok), after a session-trust hook spent the chain deadline`);
        checks.check(a.context["text"] === `mail [email]`, `session A call ${i}: PII was not redacted (${JSON.stringify(a.context["text"])})`);
      }
      const piiHook = (await runtime.hooks.chain("pre_inject")).find((h) => h.name === "strip_pii");
      checks.check(piiHook?.enabled === true, "the deployment PII hook was disabled by a cascade a session-trust hook caused");

      // Session B never registered anything: its PII must be redacted.
      const b = await runtime.fire("pre_inject", input("B", "reach me at bob@example.org"));
      observed.push(`B: strip_pii=${outcomeOf(b, "strip_pii")}`);
      checks.check(b.context["text"] === "reach me at [email]", `session B: PII was not redacted (${JSON.stringify(b.context["text"])}, strip_pii ${outcomeOf(b, "strip_pii")})`);

      // Phase 2: a real cascade in session C (two observers throw, the PII hook is fine).
      await runtime.sessions.registerHook("C", { bundle: "observer", hook: "fail_one" });
      await runtime.sessions.registerHook("C", { bundle: "observer", hook: "fail_two" });
      await runtime.sessions.registerHook("D", { bundle: "observer", hook: "fail_one" });
      const c = await runtime.fire("pre_inject", input("C", "c@example.com"));
      checks.check(c.cascade_failure, "session C: two of three hooks failing was not reported as a cascade");
      const last = cascades.at(-1);
      observed.push(`C: cascade=${c.cascade_failure} event=${JSON.stringify(last)}`);
      checks.check(last?.disabled === true, `hook.cascade_failure reported disabled: ${String(last?.disabled)} although the runtime disables failing hooks`);
      checks.check(JSON.stringify(last?.disabled_hooks ?? []) === JSON.stringify(["fail_one", "fail_two"]), `hook.cascade_failure disabled_hooks ${JSON.stringify(last?.disabled_hooks)}; expected session C's two failing hooks`);
      const inC = await runtime.hooks.chain("pre_inject", "C");
      checks.check(inC.filter((h) => h.scope === "session").every((h) => !h.enabled), "session C's failing hooks were not disabled");
      checks.check((await runtime.hooks.chain("pre_inject", "D")).find((h) => h.name === "fail_one")?.enabled === true, "a cascade in session C disabled session D's hook");
      checks.check((await runtime.hooks.chain("pre_inject")).find((h) => h.name === "strip_pii")?.enabled === true, "the PII hook was disabled by session C's cascade");

      // Counters and audit: the PII hook was never a timeout.
      const stats = runtime.status().hooks.find((h) => h.hook === "strip_pii");
      checks.check(stats !== undefined && stats.timeouts === 0, `status(): strip_pii counted ${stats?.timeouts} timeouts`);
      const records = await runtime.audit.query({ limit: 10_000 });
      const piiNotOk = records.filter((r) => r.kind === "hook" && r.hook === "strip_pii" && r.outcome !== "ok");
      checks.check(piiNotOk.length === 0, `audit: strip_pii recorded ${piiNotOk.map((r) => r.outcome).join(", ")}`);

      // Still serves: session B again.
      const again = await runtime.fire("pre_inject", input("B", "x@y.io"));
      servedAfter = again.context["text"] === "[email]" && again.status === "completed";
      return checks.outcome(observed.join("; "), servedAfter, runtime.status().sandbox.restarts);
    } finally {
      await runtime?.close().catch(() => undefined);
      await rm(dataDir, { recursive: true, force: true });
    }
  },
};
