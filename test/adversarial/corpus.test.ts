/**
 * The adversarial corpus (sandbox/corpus/, format in its README) against the real runtime: sandbox
 * host process, piscina workers, isolated-vm isolates. One test per corpus file, asserting the
 * exact outcome; after every attack the same runtime must still serve the canary chain exactly.
 *
 * SECURITY: corpus files are hostile. They are read as text and bundled by esbuild; they are never
 * imported or evaluated in this process.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
// One module graph: the runtime from the sources starts the compiled sandbox host (src/pool/host-entry.ts).
import { createRuntime, VcpError, type ChainResult, type HookExecution, type ProfileFireResult, type Runtime } from "../../src/index.js";
import { buildGuest, buildGuestSource } from "../support/guest-build.js";
import { CATEGORIES, loadCorpus, type CorpusCase } from "./corpus.js";
import { attackBundle, attackHookName, attackInput, CONSTITUTION, RUNTIME_OPTIONS } from "../../bench/sandbox/fixtures.js";
import { checkProfileAttack, companionBundleName, installCompanion, profileAttackInput } from "../../bench/sandbox/profile-case.js";
import { fireDeadlineMs, startStarvationMeter } from "../../bench/sandbox/starvation.js";

const corpus = loadCorpus();

const EVENTS: Record<string, Record<string, unknown>> = {
  pre_inject: { injection_target: "system", injection_format: "system_prompt", raw_constitution: "be kind" },
  post_select: { candidates: [CONSTITUTION], selection_rationale: "only one", selection_algorithm: "fixed" },
  on_transition: { previous_state: "idle", new_state: "active", trigger: "adversarial-suite" },
  on_conflict: { conflicting_rules: [], composition_strategy: "most_restrictive", conflict_severity: "warning" },
  on_violation: { output: "text", violated_rules: [], severity: "minor", violation_evidence: "none", retry_count: 0 },
  periodic: { elapsed_ms: 1000, interval_ms: 1000, tick_count: 1 },
};

// The canary: a separate, always-installed bundle on a hook type no attack uses.
const CANARY_BUNDLE = "wb-canary";
const CANARY_SOURCE = `
export function canary(input) {
  return {
    status: "modify",
    modified_context: { ...input.context, canary: "served", seen_text: input.context.text },
    annotations: { polluted: typeof ({}).polluted, array_map: [1, 2].map((x) => x * 3) },
  };
}
`;
const CANARY_CONTEXT = { text: "canary-input", dimensions: { data_sensitivity: 1 } };

async function installCanary(runtime: Runtime): Promise<void> {
  await runtime.bundles.install({
    manifest: {
      bundle: CANARY_BUNDLE,
      version: "1.0.0",
      trust: "deployment",
      limits: { memory_mb: 64 },
      hooks: [{ name: "wb_canary", type: "on_transition", action: "canary", priority: 50, timeout_ms: 5000, condition: null }],
    },
    code: await buildGuestSource(CANARY_SOURCE),
  });
}

async function assertCanaryServes(runtime: Runtime): Promise<void> {
  const result = await withDeadline(
    runtime.fire("on_transition", {
      session: { id: "s-canary" },
      context: structuredClone(CANARY_CONTEXT),
      constitution: structuredClone(CONSTITUTION),
      event: structuredClone(EVENTS["on_transition"]) as never,
    }),
    15_000,
    "the canary chain",
  );
  expect(result.status).toBe("completed");
  expect(result.aborted_by).toBeNull();
  expect(result.cascade_failure).toBe(false);
  expect(result.context).toEqual({ ...CANARY_CONTEXT, canary: "served", seen_text: "canary-input" });
  expect(result.constitution).toEqual(CONSTITUTION);
  expect(result.hook_results).toHaveLength(1);
  const [hook] = result.hook_results;
  expect(hook).toMatchObject({ hook: "wb_canary", bundle: CANARY_BUNDLE, scope: "deployment", status: "modify", outcome: "ok" });
  expect(hook?.annotations).toEqual({ polluted: "undefined", array_map: [3, 6] });
  // The runtime's own process (this one) must not have been polluted through parsing a result.
  expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
  expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain("polluted");
}

/** A listener the network probes may aim at; any connection to it fails the case. */
async function startProbeListener(): Promise<{ server: Server; url: string; hits: () => number }> {
  let hits = 0;
  const server = createServer((req, res) => {
    hits++;
    res.end("exfil received");
  });
  server.on("connection", () => hits++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}/exfil`, hits: () => hits };
}


/** Thrown when a fire never returns: the runtime is wedged and the describe block replaces it. */
class WedgedRuntimeError extends Error {}

function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new WedgedRuntimeError(`${what} did not return within ${ms} ms: the runtime is wedged`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

async function runCase(runtime: Runtime, c: CorpusCase, probe: { url: string; hits: () => number }): Promise<void> {
  const code = await buildGuest(c.file);
  const restartsBefore = runtime.status().sandbox.restarts;
  const hitsBefore = probe.hits();
  // The same bundle the sandbox bench installs for this case (bench/sandbox/fixtures.ts).
  const { manifest } = attackBundle(c, code);

  const e = c.expect;
  if (e.kind === "install_error") {
    const error = await runtime.bundles.install({ manifest, code }).then(
      () => undefined,
      (err: unknown) => err,
    );
    if (error === undefined) await runtime.bundles.remove(manifest.bundle);
    expect(error, "install must be refused").toBeInstanceOf(VcpError);
    expect((error as VcpError).code).toBe(e.code);
    expect(runtime.bundles.get(manifest.bundle)).toBeUndefined();
    await assertRecycled(runtime, e.recycled, restartsBefore);
    await assertCanaryServes(runtime);
    return;
  }

  if (c.profile !== null) {
    await runProfileCase(runtime, c, { manifest, code }, restartsBefore);
    return;
  }

  const info = await runtime.bundles.install({ manifest, code });
  try {
    let result: ChainResult | undefined;
    let input = attackInput(c, 0, probe.url);
    let fireMs = 0;
    let starvedMs = 0;
    for (let call = 0; call < c.calls; call++) {
      input = attackInput(c, call, probe.url);
      const sentContext = structuredClone(input.context);
      const t0 = performance.now();
      const meter = startStarvationMeter(() => runtime.status().sandbox.hostPid);
      try {
        // A fire that never returns would otherwise hang this and every later case (vitest only
        // times the test out); fail fast and let the describe block start a fresh runtime.
        result = await withDeadline(runtime.fire(c.hook.type!, input), fireDeadlineMs(e.maxFireMs), `fire #${call + 1} of ${c.id}`);
      } finally {
        starvedMs = meter.stop().starvedMs;
      }
      fireMs = performance.now() - t0;
      input.context = sentContext;
    }
    if (result === undefined) throw new Error("no call was made");

    const mine = result.hook_results.filter((h: HookExecution) => h.bundle === manifest.bundle);
    expect(mine, "exactly one result of the attack hook").toHaveLength(1);
    const hook = mine[0] as HookExecution;
    const detail = `outcome=${hook.outcome} status=${hook.status} error=${String(hook.error).slice(0, 300)} annotations=${JSON.stringify(hook.annotations)?.slice(0, 300)}`;
    // outcome_also: outcomes scheduling may legitimately decide (corpus README); containment is asserted below either way.
    expect([e.outcome, ...e.outcomeAlso], detail).toContain(hook.outcome);
    expect(hook.status, detail).toBe(e.status);
    expect(hook.hook).toBe(attackHookName(c));
    if (e.errorMatches && hook.outcome === e.outcome) expect(String(hook.error), detail).toMatch(e.errorMatches);
    if (e.errorNotMatches) expect(String(hook.error ?? "")).not.toMatch(e.errorNotMatches);
    if (e.annotations) {
      expect(hook.annotations, detail).toBeTypeOf("object");
      for (const [key, value] of Object.entries(e.annotations)) {
        expect(Object.prototype.hasOwnProperty.call(hook.annotations, key), `annotation '${key}' reported (${detail})`).toBe(true);
        expect(hook.annotations?.[key], `annotation '${key}'`).toEqual(value);
      }
    }
    // Runtime-measured duration: a number, never the guest's forgery.
    expect(Number.isFinite(hook.duration_ms) && hook.duration_ms >= 0).toBe(true);
    // The caps exclude the time the machine's load kept the host from a CPU (bench/sandbox/starvation.ts).
    if (e.maxDurationMs !== null) expect(hook.duration_ms - starvedMs).toBeLessThanOrEqual(e.maxDurationMs);
    expect(fireMs - starvedMs, `wall time of the attack chain (${starvedMs.toFixed(0)} ms of ${fireMs.toFixed(0)} ms waiting for a CPU)`).toBeLessThanOrEqual(e.maxFireMs);

    // No attack may abort the chain or change what the next hook sees, unless it is an accepted modify.
    expect(result.status).toBe("completed");
    expect(result.aborted_by).toBeNull();
    expect(result.constitution).toEqual(input.constitution);
    if (e.context) {
      for (const [key, value] of Object.entries(e.context)) expect(result.context[key], `context.${key}`).toEqual(value);
    } else if (e.status !== "modify") {
      expect(result.context).toEqual(input.context);
    }
    expect(Object.getPrototypeOf(result.context)).toBe(Object.prototype);
    expect((result.context as Record<string, unknown>)["polluted"]).toBeUndefined();

    if (e.outcome === "crashed") expect(runtime.status().sandbox.quarantined).toContain(info.digest);
    await assertRecycled(runtime, e.recycled, restartsBefore);
    expect(probe.hits(), "network probe listener must see no connection").toBe(hitsBefore);

    await assertCanaryServes(runtime);
  } finally {
    await withDeadline(runtime.bundles.remove(manifest.bundle), 15_000, `remove ${manifest.bundle}`);
  }
  expect(runtime.bundles.get(manifest.bundle)).toBeUndefined();
}

/**
 * A profile case (corpus README "Profile cases"): the attack hook, and the profile's companion after
 * it, on one native event fired with runtime.fireProfile; one shared check (bench/sandbox/profile-case.ts).
 */
async function runProfileCase(runtime: Runtime, c: CorpusCase, source: Parameters<Runtime["bundles"]["install"]>[0], restartsBefore: number): Promise<void> {
  const p = c.profile!;
  const e = c.expect;
  if (e.kind !== "outcome") throw new Error(`${c.id}: a profile case expects an outcome`);
  if (p.companion) await installCompanion(runtime, p);
  try {
    const info = await runtime.bundles.install(source);
    try {
      let out: ProfileFireResult | undefined;
      let fireMs = 0;
      let starvedMs = 0;
      for (let call = 0; call < c.calls; call++) {
        const t0 = performance.now();
        const meter = startStarvationMeter(() => runtime.status().sandbox.hostPid);
        try {
          out = await withDeadline(runtime.fireProfile(p.id, p.event, { input: profileAttackInput(c, call) }), fireDeadlineMs(e.maxFireMs), `fire #${call + 1} of ${c.id}`);
        } finally {
          starvedMs = meter.stop().starvedMs;
        }
        fireMs = performance.now() - t0;
      }
      const { reasons } = checkProfileAttack(c, out!, source.manifest.bundle, attackHookName(c));
      expect(reasons, JSON.stringify(out!.native).slice(0, 400)).toEqual([]);
      expect(fireMs - starvedMs, `wall time of the attack chain (${starvedMs.toFixed(0)} ms of ${fireMs.toFixed(0)} ms waiting for a CPU)`).toBeLessThanOrEqual(e.maxFireMs);
      if (e.outcome === "crashed") expect(runtime.status().sandbox.quarantined).toContain(info.digest);
      await assertRecycled(runtime, e.recycled, restartsBefore);
      await assertCanaryServes(runtime);
    } finally {
      await withDeadline(runtime.bundles.remove(source.manifest.bundle), 15_000, `remove ${source.manifest.bundle}`);
    }
  } finally {
    if (p.companion) await withDeadline(runtime.bundles.remove(companionBundleName(p.id)), 15_000, "remove the companion");
  }
  expect(runtime.bundles.get(source.manifest.bundle)).toBeUndefined();
}

async function assertRecycled(runtime: Runtime, recycled: "none" | "isolate" | "process", before: number): Promise<void> {
  if (recycled === "process") {
    await vi.waitFor(() => expect(runtime.status().sandbox.restarts).toBeGreaterThan(before), { timeout: 15_000, interval: 50 });
  } else {
    expect(runtime.status().sandbox.restarts, "the sandbox host must not have died").toBe(before);
  }
}

test(`the corpus has at least 40 cases and every category is covered`, () => {
  expect(corpus.length).toBeGreaterThanOrEqual(40);
  for (const category of CATEGORIES) {
    expect(corpus.filter((c) => c.category === category).length, category).toBeGreaterThanOrEqual(1);
  }
  expect(new Set(corpus.map((c) => c.id)).size).toBe(corpus.length);
});

for (const category of CATEGORIES) {
  const cases = corpus.filter((c) => c.category === category);
  describe(category, () => {
    let runtime: Runtime | undefined;
    let probe: Awaited<ReturnType<typeof startProbeListener>>;

    async function freshRuntime(): Promise<Runtime> {
      const created = await createRuntime(RUNTIME_OPTIONS as Parameters<typeof createRuntime>[0]);
      await installCanary(created);
      await assertCanaryServes(created);
      return created;
    }

    async function retire(old: Runtime): Promise<void> {
      // A wedged runtime may never finish closing; do not let it hold up the suite.
      await withDeadline(old.close(), 10_000, "close").catch(() => undefined);
    }

    beforeAll(async () => {
      probe = await startProbeListener();
      runtime = await freshRuntime();
    }, 60_000);

    afterAll(async () => {
      if (runtime) await retire(runtime);
      await new Promise<void>((resolve) => (probe ? probe.server.close(() => resolve()) : resolve()));
    }, 60_000);

    for (const c of cases) {
      // A safety net only: a starved host legitimately takes longer than a case's caps (fireDeadlineMs).
      const timeout = 90_000 + (c.expect.kind === "outcome" ? fireDeadlineMs(c.expect.maxFireMs) * c.calls : 0);
      test(`${c.category}/${c.id}: ${c.title}`, { timeout }, async () => {
        runtime ??= await freshRuntime();
        try {
          await runCase(runtime, c, probe);
        } catch (err) {
          if (err instanceof WedgedRuntimeError) {
            const wedged = runtime;
            runtime = undefined; // the next case starts on a fresh runtime
            void retire(wedged);
          }
          throw err;
        }
      });
    }
  });
}
