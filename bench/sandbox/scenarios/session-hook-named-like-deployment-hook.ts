/**
 * Attribution: an allowlisted session-scope hook carries the name of another bundle's deployment
 * hook (`redact`) and kills the sandbox host. The crashed chain holds both hooks; the innocent one
 * runs first. Blame must follow the hook that was running (its position in the chain the sandbox
 * host was given), not its name: the attacker's bundle is quarantined, the redaction policy keeps
 * redacting for every other session.
 */
import type { Scenario } from "../scenario.js";
import { Checks } from "../scenario.js";
import { DETONATOR_SOURCE, REDACTOR_SOURCE, describeChain, digestOf, installKitBundle, kitInput, quarantined, startKitRuntime } from "../attribution-kit.js";

export const scenario: Scenario = {
  id: "session-hook-named-like-deployment-hook",
  category: "attribution",
  title: "a session hook named like another bundle's deployment hook crashes the host",
  expected: "only the session hook's bundle is quarantined; the same-named deployment policy keeps serving",
  async run() {
    const checks = new Checks();
    const runtime = await startKitRuntime({ sessionHookAllowlist: ["tenant-tools/redact"] });
    try {
      await installKitBundle(runtime, "pii-policy", "1.0.0", [{ name: "redact", type: "pre_inject", priority: 90 }], REDACTOR_SOURCE);
      await installKitBundle(runtime, "tenant-tools", "1.0.0", [{ name: "redact", type: "pre_inject", priority: 10, scope: "session" }], DETONATOR_SOURCE);
      const innocent = digestOf(runtime, "pii-policy");
      const attacker = digestOf(runtime, "tenant-tools");
      await runtime.sessions.registerHook("s-attacker", { bundle: "tenant-tools", hook: "redact" });

      const before = runtime.status().sandbox.restarts;
      const crashed = await runtime.fire("pre_inject", kitInput("pre_inject", "s-attacker", { text: "secret", detonate: true }));
      const restarts = runtime.status().sandbox.restarts - before;
      checks.check(restarts >= 1, `the attack did not crash the sandbox host (restarts ${restarts}); the scenario proves nothing`);
      const blamed = crashed.hook_results.find((h) => h.outcome === "crashed");
      checks.check(
        blamed?.bundle === "tenant-tools" && blamed.scope === "session",
        `the crashed chain blames ${blamed ? `${blamed.bundle}/${blamed.hook} (${blamed.scope})` : "no hook"}, not the session hook of tenant-tools`,
      );
      const q = quarantined(runtime);
      checks.check(!q.includes(innocent), "pii-policy (the same-named deployment hook's bundle) was quarantined");
      checks.check(q.includes(attacker), "tenant-tools (whose session hook crashed the host) was not quarantined");

      // The innocent policy keeps redacting in another session.
      const served = await runtime.fire("pre_inject", kitInput("pre_inject", "s-bystander", { text: "secret" }));
      const redact = served.hook_results.find((h) => h.bundle === "pii-policy");
      const servedAfter = redact?.outcome === "ok" && served.context["text"] === "[redacted]";
      return checks.outcome(
        `crash chain: ${describeChain(crashed)}; quarantined: ${q.map((d) => (d === attacker ? "tenant-tools" : d === innocent ? "pii-policy" : d)).join(", ") || "none"}; bystander chain: ${describeChain(served)}`,
        servedAfter,
        restarts,
      );
    } finally {
      await runtime.close();
    }
  },
};
