/**
 * Conformance suite for spec §3–§7 as far as the chain layer owns them. It uses only the public
 * API (createRuntime, bundles, fire, on, status), so the same cases run against the in-process test
 * backend and against the real isolated-vm sandbox: see vm.test.ts and sandbox.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { BundleSource, Runtime, RuntimeOptions, LifecycleEventMap, LifecycleEventName } from "../../src/index.js";
import { HOOK_TYPES, type VcpError } from "../../src/index.js";
import { periodicIntervalMs } from "../../src/model/hook.js";
import { contentDigest } from "../../src/integrity/signatures.js";
import { testBundle, withBundles as withBundlesOn } from "../support/bundles.js";
import { constitution, events, fireInput } from "../support/fixtures.js";

type Make = (options?: Partial<RuntimeOptions>) => Promise<Runtime>;

function collect<K extends LifecycleEventName>(runtime: Runtime, name: K): Array<LifecycleEventMap[K]> {
  const seen: Array<LifecycleEventMap[K]> = [];
  runtime.on(name, (payload) => seen.push(payload));
  return seen;
}

let bundleSeq = 0;
const uniq = (base: string) => `${base}-${++bundleSeq}`;

export function defineChainConformance(backendName: string, make: Make): void {
  describe(`conformance (${backendName})`, () => {
    let rt: Runtime;
    beforeAll(async () => {
      // Tests install and remove many bundles quickly; the rate limit has its own case below.
      rt = await make({ registrationsPerMinute: 100_000, sessionHookAllowlist: ["sess-offer/observe_selection", "sess-offer/try_modify", "sess-offer/try_abort"] });
    });
    afterAll(async () => {
      await rt?.close();
    });

    // Each test installs its own bundles and removes them, so cases do not see each other's hooks.
    const withBundles = <T>(sources: BundleSource[], body: () => Promise<T>) => withBundlesOn(rt, sources, body);

    const appendTag = (tag: string) =>
      `function (input) { return { status: "modify", modified_context: Object.assign({}, input.context, { trail: (input.context.trail || []).concat(${JSON.stringify(tag)}) }) }; }`;

    test("§5.1.1 hooks run in descending priority (100 before 0)", async () => {
      const b = uniq("order");
      await withBundles(
        [testBundle(b, [
          { name: "p0", type: "pre_inject", priority: 0 },
          { name: "p100", type: "pre_inject", priority: 100 },
          { name: "p50", type: "pre_inject", priority: 50 },
        ], { p0: appendTag("p0"), p100: appendTag("p100"), p50: appendTag("p50") })],
        async () => {
          const r = await rt.fire("pre_inject", fireInput("pre_inject", {}));
          expect(r.context.trail).toEqual(["p100", "p50", "p0"]);
          expect(r.hook_results.map((h) => h.hook)).toEqual(["p100", "p50", "p0"]);
        },
      );
    });

    test("§5.1.2 equal priority keeps registration order, across bundles too", async () => {
      const first = uniq("reg-first");
      const second = uniq("reg-second");
      await withBundles(
        [
          testBundle(first, [{ name: "zz_first", type: "post_select", priority: 70 }, { name: "aa_second", type: "post_select", priority: 70 }], { zz_first: appendTag("zz_first"), aa_second: appendTag("aa_second") }),
          testBundle(second, [{ name: "mm_third", type: "post_select", priority: 70 }], { mm_third: appendTag("mm_third") }),
        ],
        async () => {
          const r = await rt.fire("post_select", fireInput("post_select", {}));
          expect(r.context.trail).toEqual(["zz_first", "aa_second", "mm_third"]);
        },
      );
    });

    test("§5.1.3 each hook receives the context modified by the previous hook", async () => {
      const b = uniq("chainmod");
      await withBundles(
        [testBundle(b, [
          { name: "set_x", type: "on_transition", priority: 90 },
          { name: "read_x", type: "on_transition", priority: 10 },
        ], {
          set_x: "function (input) { return { status: 'modify', modified_context: { x: 41 } }; }",
          read_x: "function (input) { return { status: 'modify', modified_context: { x: input.context.x + 1, original_gone: !('user' in input.context) } }; }",
        })],
        async () => {
          const r = await rt.fire("on_transition", fireInput("on_transition"));
          expect(r.context).toEqual({ x: 42, original_gone: true });
          expect(r.hook_results.map((h) => h.status)).toEqual(["modify", "modify"]);
        },
      );
    });

    test("§5.1.4 the chain halts on the first abort, with reason and aborted_by", async () => {
      const b = uniq("abort");
      await withBundles(
        [testBundle(b, [
          { name: "before", type: "pre_inject", priority: 90 },
          { name: "stopper", type: "pre_inject", priority: 50 },
          { name: "after", type: "pre_inject", priority: 10 },
        ], {
          before: appendTag("before"),
          stopper: "function () { return { status: 'abort', reason: 'PII present' }; }",
          after: appendTag("after"),
        })],
        async () => {
          const r = await rt.fire("pre_inject", fireInput("pre_inject", {}));
          expect(r.status).toBe("aborted");
          expect(r.reason).toBe("PII present");
          expect(r.aborted_by).toBe("stopper");
          expect(r.hook_results.map((h) => h.hook)).toEqual(["before", "stopper"]);
          // §3.1: the context handed back is the one before the abort (injection must not proceed).
          expect(r.context.trail).toEqual(["before"]);
        },
      );
    });

    test("§5.1.5 the final context and constitution are returned for the next stage", async () => {
      const b = uniq("final");
      await withBundles(
        [testBundle(b, [{ name: "add_rule", type: "post_select" }], {
          add_rule: "function (input) { return { status: 'modify', modified_constitution: Object.assign({}, input.constitution, { rules: input.constitution.rules.concat({ id: 'extra', text: 'Cite sources.' }) }) }; }",
        })],
        async () => {
          const r = await rt.fire("post_select", fireInput("post_select"));
          expect(r.status).toBe("completed");
          expect(r.constitution.rules.map((x) => x.id)).toEqual(["no-harm-1", "tone-1", "extra"]);
        },
      );
    });

    test("§3.2 a post_select modify with a different constitution replaces the selected one", async () => {
      const b = uniq("override");
      await withBundles(
        [testBundle(b, [{ name: "override", type: "post_select" }], {
          override: "function (input) { return { status: 'modify', modified_constitution: input.event.candidates[0].id === 'c-base' ? { id: 'c-compliance', version: '2', rules: input.constitution.rules } : null }; }",
        })],
        async () => {
          const r = await rt.fire("post_select", fireInput("post_select"));
          expect(r.constitution.id).toBe("c-compliance");
        },
      );
    });

    test("§4.3 / §8.2.4 an unsigned replacement constitution reaches the next hook and the caller as returned, its provenance in the hook result", async () => {
      // Issue 11 defect 7: a modification link used to be appended, so an unsigned constitution came out "signed".
      const b = uniq("unsigned-replace");
      const replaced = { id: "c-replaced", version: "2", rules: [...constitution.rules, { id: "extra", text: "Cite sources." }] };
      await withBundles(
        [testBundle(b, [{ name: "replace", type: "pre_inject", priority: 90 }, { name: "observe", type: "pre_inject", priority: 10 }], {
          replace: `function () { return { status: 'modify', modified_constitution: ${JSON.stringify(replaced)} }; }`,
          observe: "function (input) { return { status: 'continue', annotations: { seen: input.constitution } }; }",
        })],
        async () => {
          const r = await rt.fire("pre_inject", fireInput("pre_inject"));
          expect(r.hook_results[1]!.annotations).toEqual({ seen: replaced });
          expect(r.constitution).toEqual(replaced);
          expect(r.hook_results[0]).toMatchObject({
            hook: "replace", bundle: b, status: "modify", modified_constitution: true,
            provenance: { parent_digest: contentDigest(constitution), digest: contentDigest(replaced) },
          });
          expect(r.hook_results[1]!.provenance).toBeUndefined();
        },
      );
    });

    test("§3.1 / §3.2 / §3.3 / §3.5 an abort halts the chain of every pipeline type", async () => {
      const b = uniq("abort-all");
      const hooks = (["pre_inject", "post_select", "on_transition", "on_conflict", "on_violation"] as const).map((type) => ({ name: `stop_${type}`, type }));
      const actions = Object.fromEntries(hooks.map((h) => [h.name, "function (input) { return { status: 'abort', reason: 'no' }; }"]));
      await withBundles([testBundle(b, hooks, actions)], async () => {
        for (const h of hooks) {
          const r = await rt.fire(h.type, fireInput(h.type));
          expect(r.status, h.type).toBe("aborted");
          expect(r.aborted_by, h.type).toBe(h.name);
        }
      });
    });

    test("§3.6 a periodic abort is treated as continue and later hooks still run", async () => {
      const b = uniq("periodic");
      await withBundles(
        [testBundle(b, [
          { name: "tick_abort", type: "periodic", priority: 90, metadata: { interval_ms: 5000 } },
          { name: "tick_after", type: "periodic", priority: 10 },
        ], { tick_abort: "function () { return { status: 'abort', reason: 'stale' }; }", tick_after: appendTag("after") })],
        async () => {
          const r = await rt.fire("periodic", fireInput("periodic", {}));
          expect(r.status).toBe("completed");
          expect(r.aborted_by).toBeNull();
          expect(r.hook_results[0]).toMatchObject({ hook: "tick_abort", status: "continue", outcome: "ok" });
          expect(r.context.trail).toEqual(["after"]);
        },
      );
    });

    test("§3.6 the periodic interval is per hook and never below one second", () => {
      expect(periodicIntervalMs({ metadata: { interval_ms: 60000 } })).toBe(60000);
      expect(periodicIntervalMs({ metadata: { interval_ms: 5 } })).toBe(1000);
      expect(periodicIntervalMs({ metadata: {} })).toBe(60000);
    });

    test("§4.4 a false predicate skips the hook as if it returned continue; the action never runs", async () => {
      const b = uniq("pred");
      const skipped = collect(rt, "hook.skipped");
      await withBundles(
        [testBundle(b, [
          { name: "only_sensitive", type: "pre_inject", condition: { field: "context.dimensions.data_sensitivity", operator: "gte", value: 7 } },
        ], { only_sensitive: appendTag("ran") })],
        async () => {
          const low = await rt.fire("pre_inject", fireInput("pre_inject", { dimensions: { data_sensitivity: 3 } }));
          expect(low.context).toEqual({ dimensions: { data_sensitivity: 3 } });
          expect(low.hook_results[0]).toMatchObject({ outcome: "skipped_predicate", status: "continue" });
          expect(skipped.some((e) => e.hook === "only_sensitive" && e.reason === "predicate_false")).toBe(true);
          const high = await rt.fire("pre_inject", fireInput("pre_inject", { dimensions: { data_sensitivity: 9 } }));
          expect(high.context.trail).toEqual(["ran"]);
        },
      );
    });

    test("§4.4 compound predicates (spec §9.5: severity major or critical)", async () => {
      const b = uniq("compound");
      await withBundles(
        [testBundle(b, [{
          name: "strict_retry", type: "on_violation",
          condition: { combine: "or", children: [{ field: "event.severity", operator: "eq", value: "major" }, { field: "event.severity", operator: "eq", value: "critical" }] },
        }], { strict_retry: appendTag("retry") })],
        async () => {
          const major = await rt.fire("on_violation", { ...fireInput("on_violation", {}), event: { ...events.on_violation, severity: "major" } });
          const minor = await rt.fire("on_violation", { ...fireInput("on_violation", {}), event: { ...events.on_violation, severity: "minor" } });
          expect(major.context.trail).toEqual(["retry"]);
          expect(minor.hook_results[0]!.outcome).toBe("skipped_predicate");
        },
      );
    });

    test("§5.3 hooks of a chain run sequentially: each starts after the previous finished", async () => {
      const b = uniq("seq");
      await withBundles(
        [testBundle(b, [
          { name: "slow_first", type: "on_conflict", priority: 90 },
          { name: "second", type: "on_conflict", priority: 10 },
        ], {
          slow_first: "async function (input) { await null; await null; input.chain_state.first_done = true; return { status: 'continue' }; }",
          second: "function (input) { return { status: 'continue', annotations: { saw_first: input.chain_state.first_done === true } }; }",
        })],
        async () => {
          const r = await rt.fire("on_conflict", fireInput("on_conflict"));
          expect(r.hook_results[1]!.annotations).toEqual({ saw_first: true });
        },
      );
    });

    test("§5.4.1–§5.4.3 a hook over its timeout is terminated, treated as continue, and logged with configured and elapsed time", async () => {
      const b = uniq("timeout");
      const timeouts = collect(rt, "hook.timeout");
      await withBundles(
        [testBundle(b, [
          { name: "spin", type: "pre_inject", priority: 90, timeout_ms: 50 },
          { name: "next", type: "pre_inject", priority: 10 },
        ], { spin: "function () { for (;;) {} }", next: appendTag("next") })],
        async () => {
          const r = await rt.fire("pre_inject", fireInput("pre_inject", {}));
          expect(r.status).toBe("completed");
          expect(r.hook_results[0]).toMatchObject({ hook: "spin", outcome: "timeout", status: "continue" });
          expect(r.context.trail).toEqual(["next"]);
          const event = timeouts.find((e) => e.hook === "spin");
          expect(event).toMatchObject({ hook: "spin", timeout_ms: 50 });
          expect(event!.elapsed_ms).toBeGreaterThanOrEqual(40);
        },
      );
    });

    test("§5.4.1 a never-settling async hook is terminated at its timeout", async () => {
      const b = uniq("never");
      await withBundles(
        [testBundle(b, [{ name: "hang", type: "on_transition", timeout_ms: 50 }], { hang: "function () { return new Promise(function () {}); }" })],
        async () => {
          const r = await rt.fire("on_transition", fireInput("on_transition"));
          expect(r.hook_results[0]).toMatchObject({ outcome: "timeout", status: "continue" });
        },
      );
    });

    test("§5.4.4 timeouts are counted per hook in status()", async () => {
      const b = uniq("tcount");
      await withBundles(
        [testBundle(b, [{ name: "spin_count", type: "on_conflict", timeout_ms: 30 }], { spin_count: "function () { for (;;) {} }" })],
        async () => {
          await rt.fire("on_conflict", fireInput("on_conflict"));
          await rt.fire("on_conflict", fireInput("on_conflict"));
          const stats = rt.status().hooks.find((h) => h.hook === "spin_count");
          expect(stats).toMatchObject({ timeouts: 2, calls: 2 });
        },
      );
    });

    test("§5.4.5 a registration with timeout_ms > 30000 is rejected and nothing is installed", async () => {
      const b = uniq("toolong");
      const before = rt.bundles.list().length;
      await expect(rt.bundles.install(testBundle(b, [{ name: "slow", type: "pre_inject", timeout_ms: 30001 }], { slow: appendTag("x") }))).rejects.toMatchObject({
        code: "INVALID_BUNDLE",
        message: expect.stringContaining("hooks[0].timeout_ms"),
      });
      expect(rt.bundles.list().length).toBe(before);
    });

    test("§5.6 chain_state starts empty, passes along the chain, and is discarded after it", async () => {
      const b = uniq("state");
      await withBundles(
        [testBundle(b, [
          { name: "writer", type: "pre_inject", priority: 90 },
          { name: "reader", type: "pre_inject", priority: 10 },
          { name: "other_type", type: "post_select" },
        ], {
          writer: "function (input) { var was = JSON.stringify(input.chain_state); input.chain_state.compliance_checked = true; return { status: 'continue', annotations: { was: was } }; }",
          reader: "function (input) { return { status: 'continue', annotations: { checked: input.chain_state.compliance_checked === true } }; }",
          other_type: "function (input) { return { status: 'continue', annotations: { state: JSON.stringify(input.chain_state) } }; }",
        })],
        async () => {
          const first = await rt.fire("pre_inject", fireInput("pre_inject"));
          expect(first.hook_results.map((h) => h.annotations)).toEqual([{ was: "{}" }, { checked: true }]);
          const second = await rt.fire("pre_inject", fireInput("pre_inject"));
          expect(second.hook_results[0]!.annotations).toEqual({ was: "{}" });
          const other = await rt.fire("post_select", fireInput("post_select"));
          expect(other.hook_results[0]!.annotations).toEqual({ state: "{}" });
        },
      );
    });

    test("§6.1 deployment hooks run before session hooks of the same priority", async () => {
      const dep = uniq("dep-first");
      await withBundles(
        [
          testBundle("sess-offer", [
            { name: "observe_selection", type: "post_select", priority: 50, scope: "session" },
            { name: "try_modify", type: "pre_inject", scope: "session" },
            { name: "try_abort", type: "on_transition", scope: "session" },
          ], {
            observe_selection: "function (input) { return { status: 'continue', annotations: { position: (input.chain_state.n = (input.chain_state.n || 0) + 1) } }; }",
            try_modify: "function (input) { return { status: 'modify', modified_context: { hijacked: true } }; }",
            try_abort: "function () { return { status: 'abort', reason: 'user says no' }; }",
          }),
          testBundle(dep, [{ name: "org_policy", type: "post_select", priority: 50 }], {
            org_policy: "function (input) { input.chain_state.n = (input.chain_state.n || 0) + 1; return { status: 'continue' }; }",
          }),
        ],
        async () => {
          await rt.sessions.registerHook("s-order", { bundle: "sess-offer", hook: "observe_selection" });
          try {
            const r = await rt.fire("post_select", fireInput("post_select", {}, "s-order"));
            expect(r.hook_results.map((h) => [h.hook, h.scope])).toEqual([
              ["org_policy", "deployment"],
              ["observe_selection", "session"],
            ]);
            // The session hook ran second: it saw the deployment hook's chain_state write.
            expect(r.hook_results[1]!.annotations).toEqual({ position: 2 });
            // Another session does not see that session's hook.
            const other = await rt.fire("post_select", fireInput("post_select", {}, "s-other"));
            expect(other.hook_results.map((h) => h.hook)).toEqual(["org_policy"]);
          } finally {
            rt.sessions.close("s-order");
          }
        },
      );
    });

    test("§8.3 a session-trust hook that returns modify or abort is capability_denied and treated as continue", async () => {
      await withBundles(
        [testBundle("sess-offer", [
          { name: "observe_selection", type: "post_select", scope: "session" },
          { name: "try_modify", type: "pre_inject", scope: "session" },
          { name: "try_abort", type: "on_transition", scope: "session" },
        ], {
          observe_selection: "function () { return { status: 'continue' }; }",
          try_modify: "function () { return { status: 'modify', modified_context: { hijacked: true } }; }",
          try_abort: "function () { return { status: 'abort', reason: 'user says no' }; }",
        })],
        async () => {
          await rt.sessions.registerHook("s-trust", { bundle: "sess-offer", hook: "try_modify" });
          await rt.sessions.registerHook("s-trust", { bundle: "sess-offer", hook: "try_abort" });
          try {
            const modified = await rt.fire("pre_inject", fireInput("pre_inject", { safe: true }, "s-trust"));
            expect(modified.context).toEqual({ safe: true });
            expect(modified.hook_results[0]).toMatchObject({ outcome: "capability_denied", status: "continue", trust: "session" });
            const aborted = await rt.fire("on_transition", fireInput("on_transition", {}, "s-trust"));
            expect(aborted.status).toBe("completed");
            expect(aborted.hook_results[0]).toMatchObject({ outcome: "capability_denied", status: "continue" });
          } finally {
            rt.sessions.close("s-trust");
          }
        },
      );
    });

    test("§8.2.1 a session may only register hooks on the deployment allowlist", async () => {
      const b = uniq("not-allowed");
      await withBundles([testBundle(b, [{ name: "sneaky", type: "pre_inject", scope: "session" }], { sneaky: appendTag("x") })], async () => {
        await expect(rt.sessions.registerHook("s1", { bundle: b, hook: "sneaky" })).rejects.toThrowError(
          expect.objectContaining({ code: "SESSION_HOOK_NOT_ALLOWED" }),
        );
        expect((await rt.hooks.chain("pre_inject", "s1")).map((h) => h.name)).not.toContain("sneaky");
      });
    });

    test("§6.2 registration fails with a descriptive error naming field and rule, and changes nothing", async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ name: "Bad Name", type: "pre_inject" }, "hooks[0].name"],
        [{ name: "x".repeat(65), type: "pre_inject" }, "hooks[0].name"],
        [{ name: "bad_type", type: "pre_answer" }, "hooks[0].type"],
        [{ name: "prio_high", type: "pre_inject", priority: 101 }, "hooks[0].priority"],
        [{ name: "prio_frac", type: "pre_inject", priority: 1.5 }, "hooks[0].priority"],
        [{ name: "prio_neg", type: "pre_inject", priority: -1 }, "hooks[0].priority"],
        [{ name: "t_zero", type: "pre_inject", timeout_ms: 0 }, "hooks[0].timeout_ms"],
        [{ name: "t_frac", type: "pre_inject", timeout_ms: 2.5 }, "hooks[0].timeout_ms"],
        [{ name: "bad_cond", type: "pre_inject", condition: { field: "context.x", operator: "like", value: 1 } }, "hooks[0].condition"],
      ];
      for (const [hook, field] of cases) {
        const b = uniq("invalid");
        const revision = rt.status().registry_revision;
        const error = await rt.bundles.install(testBundle(b, [hook as never], { act: appendTag("x") })).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error, field).toMatchObject({ name: "VcpError", code: "INVALID_BUNDLE" });
        expect((error as VcpError).message, field).toContain(field);
        expect(rt.bundles.get(b), field).toBeUndefined();
        expect(rt.status().registry_revision, field).toBe(revision);
      }
    });

    test("§6.2.1 a hook name already registered in the deployment scope is refused, naming both bundles", async () => {
      const a = uniq("owner-a");
      const b = uniq("owner-b");
      await withBundles([testBundle(a, [{ name: "shared_name", type: "pre_inject" }], { shared_name: appendTag("a") })], async () => {
        const error = await rt.bundles.install(testBundle(b, [{ name: "shared_name", type: "pre_inject" }], { shared_name: appendTag("b") })).catch((e: unknown) => e);
        expect(error).toMatchObject({ code: "DUPLICATE_HOOK" });
        expect((error as VcpError).message).toContain(a);
        expect((error as VcpError).message).toContain(b);
        expect(rt.bundles.get(b)).toBeUndefined();
        const r = await rt.fire("pre_inject", fireInput("pre_inject", {}));
        expect(r.context.trail).toEqual(["a"]);
      });
    });

    test("§6.2.6 an action that is not an exported function is refused", async () => {
      const b = uniq("noexport");
      await expect(rt.bundles.install(testBundle(b, [{ name: "ghost", type: "pre_inject", action: "missingFn" }], { other: appendTag("x") }))).rejects.toMatchObject({
        code: "ACTION_NOT_CALLABLE",
        details: expect.objectContaining({ hook: "ghost", action: "missingFn" }),
      });
      expect(rt.bundles.get(b)).toBeUndefined();
    });

    test("§6.3 a hook removed while a chain runs stays in that chain and is gone from the next", async () => {
      const slow = uniq("slow-first");
      const victim = uniq("victim");
      await rt.bundles.install(testBundle(slow, [{ name: "wait_a_bit", type: "on_violation", priority: 90, timeout_ms: 5000 }], {
        // ≈ 300 ms of one idle core by iteration count: guest clocks are frozen during a call.
        wait_a_bit: "function () { var x = 0; for (var i = 0; i < 6e8; i++) x += i & 1; return { status: 'continue', annotations: { x: x > 0 } }; }",
      }));
      await rt.bundles.install(testBundle(victim, [{ name: "victim_hook", type: "on_violation", priority: 10 }], { victim_hook: appendTag("victim") }));
      try {
        const running = rt.fire("on_violation", fireInput("on_violation", {}));
        await new Promise((r) => setTimeout(r, 100));
        await rt.bundles.remove(victim);
        const during = await running;
        expect(during.hook_results.map((h) => h.hook)).toEqual(["wait_a_bit", "victim_hook"]);
        expect(during.context.trail).toEqual(["victim"]);
        const after = await rt.fire("on_violation", fireInput("on_violation", {}));
        expect(after.hook_results.map((h) => h.hook)).toEqual(["wait_a_bit"]);
      } finally {
        await rt.bundles.remove(slow);
      }
    });

    test("§6.4 lifecycle events: registered, fired, completed, skipped, deregistered", async () => {
      const b = uniq("events");
      const names: string[] = [];
      for (const name of ["hook.registered", "hook.fired", "hook.completed", "hook.skipped", "hook.deregistered"] as const) {
        rt.on(name, (payload) => {
          if ((payload as { hook?: string }).hook?.startsWith("ev_")) names.push(`${name}:${(payload as { hook: string }).hook}`);
        });
      }
      await withBundles(
        [testBundle(b, [
          { name: "ev_run", type: "pre_inject", priority: 90 },
          { name: "ev_off", type: "pre_inject", priority: 10, enabled: false },
        ], { ev_run: appendTag("run"), ev_off: appendTag("off") })],
        async () => {
          const r = await rt.fire("pre_inject", fireInput("pre_inject", {}));
          expect(r.hook_results[1]).toMatchObject({ hook: "ev_off", outcome: "skipped_disabled" });
        },
      );
      expect(names).toEqual([
        "hook.registered:ev_run",
        "hook.registered:ev_off",
        "hook.fired:ev_run",
        "hook.completed:ev_run",
        "hook.skipped:ev_off",
        "hook.deregistered:ev_run",
        "hook.deregistered:ev_off",
      ]);
    });

    test("§7.1 an exception is caught, logged with hook name, input summary and stack, counted, and the chain continues", async () => {
      const b = uniq("throws");
      const errors = collect(rt, "hook.error");
      await withBundles(
        [testBundle(b, [
          { name: "boom", type: "on_conflict", priority: 90 },
          { name: "after_boom", type: "on_conflict", priority: 10 },
        ], { boom: "function () { throw new Error('kaboom'); }", after_boom: appendTag("after") })],
        async () => {
          const r = await rt.fire("on_conflict", fireInput("on_conflict", {}));
          expect(r.status).toBe("completed");
          expect(r.hook_results[0]).toMatchObject({ hook: "boom", outcome: "error", status: "continue" });
          expect(r.hook_results[0]!.error).toContain("kaboom");
          expect(r.context.trail).toEqual(["after"]);
          const event = errors.find((e) => e.hook === "boom");
          expect(event).toMatchObject({ outcome: "error", input_summary: { session_id: "s1", constitution_id: constitution.id } });
          expect(event!.error).toContain("kaboom");
          expect(event!.stack).toBeTruthy();
          expect(rt.status().hooks.find((h) => h.hook === "boom")!.errors).toBe(1);
        },
      );
    });

    test("§7.2 an invalid result is treated as continue, logged as a validation error, and the chain continues", async () => {
      const b = uniq("invalid-result");
      const errors = collect(rt, "hook.error");
      const bad = {
        no_status: "function () { return { annotations: {} }; }",
        bad_status: "function () { return { status: 'maybe' }; }",
        abort_no_reason: "function () { return { status: 'abort' }; }",
        not_object: "function () { return 42; }",
        nothing: "function () { }",
        extra_key: "function () { return { status: 'continue', stauts: 'typo' }; }",
        bad_constitution: "function () { return { status: 'modify', modified_constitution: { rules: 'none' } }; }",
        no_rules: "function () { return { status: 'modify', modified_constitution: { id: 'c' } }; }",
        bad_context: "function () { return { status: 'modify', modified_context: [] }; }",
      };
      // Each error names the real problem: a nullable field's failure is the failure of the branch
      // the value was meant for, not "must be null" (issue 11 defect 9).
      const why: Record<string, string> = {
        no_status: "result.status: is required (spec §4.3)",
        bad_status: 'result.status: must be one of "continue", "abort", "modify" (spec §4.3)',
        abort_no_reason: "result.reason: is required (spec §4.3)",
        not_object: "result: must be an object (spec §4.3)",
        extra_key: "result.stauts: is not a known field (spec §4.3)",
        bad_constitution: "result.modified_constitution.id: is required (spec §4.3)",
        no_rules: "result.modified_constitution.rules: is required (spec §4.3)",
        bad_context: "result.modified_context: must be an object or null (spec §4.3)",
      };
      const hooks = Object.keys(bad).map((name, i) => ({ name, type: "pre_inject" as const, priority: 90 - i }));
      await withBundles([testBundle(b, [...hooks, { name: "still_runs", type: "pre_inject", priority: 1 }], { ...bad, still_runs: appendTag("ok") })], async () => {
        const r = await rt.fire("pre_inject", fireInput("pre_inject", {}));
        expect(r.status).toBe("completed");
        expect(r.hook_results.slice(0, hooks.length).map((h) => [h.hook, h.outcome, h.status])).toEqual(hooks.map((h) => [h.name, "invalid_result", "continue"]));
        expect(r.context.trail).toEqual(["ok"]);
        expect(errors.filter((e) => e.outcome === "invalid_result").map((e) => e.hook)).toEqual(hooks.map((h) => h.name));
        const errorOf = Object.fromEntries(r.hook_results.map((h) => [h.hook, h.error]));
        for (const [name, message] of Object.entries(why)) expect(errorOf[name], name).toBe(message);
      });
    });

    test("§7.3 more than half of the hooks failing raises hook.cascade_failure and the chain still completes", async () => {
      const b = uniq("cascade");
      const cascades = collect(rt, "hook.cascade_failure");
      await withBundles(
        [testBundle(b, [
          { name: "fail_one", type: "on_violation", priority: 90 },
          { name: "fail_two", type: "on_violation", priority: 80, timeout_ms: 30 },
          { name: "fine", type: "on_violation", priority: 10 },
        ], { fail_one: "function () { throw new Error('x'); }", fail_two: "function () { for(;;){} }", fine: appendTag("fine") })],
        async () => {
          const r = await rt.fire("on_violation", fireInput("on_violation", {}));
          expect(r.status).toBe("completed");
          expect(r.cascade_failure).toBe(true);
          expect(r.context.trail).toEqual(["fine"]);
          expect(cascades.at(-1)).toMatchObject({ type: "on_violation", total: 3, failed: 2, failing_hooks: ["fail_one", "fail_two"] });
        },
      );
    });

    test("§7.3 exactly half failing is not a cascade", async () => {
      const b = uniq("half");
      await withBundles(
        [testBundle(b, [
          { name: "half_fail", type: "on_violation", priority: 90 },
          { name: "half_fine", type: "on_violation", priority: 10 },
        ], { half_fail: "function () { throw new Error('x'); }", half_fine: appendTag("fine") })],
        async () => {
          const r = await rt.fire("on_violation", fireInput("on_violation", {}));
          expect(r.cascade_failure).toBe(false);
        },
      );
    });

    test("§7.4 a fail_closed hook that fails aborts the chain with reason 'fail-closed: …'", async () => {
      const b = uniq("failclosed");
      await withBundles(
        [testBundle(b, [
          { name: "guard", type: "pre_inject", priority: 90, fail_closed: true },
          { name: "never", type: "pre_inject", priority: 10 },
        ], { guard: "function () { throw new Error('policy store unreachable'); }", never: appendTag("never") })],
        async () => {
          const r = await rt.fire("pre_inject", fireInput("pre_inject", {}));
          expect(r.status).toBe("aborted");
          expect(r.aborted_by).toBe("guard");
          expect(r.reason).toMatch(/^fail-closed: guard: .*policy store unreachable/);
          expect(r.hook_results.map((h) => h.hook)).toEqual(["guard"]);
          expect(r.hook_results[0]).toMatchObject({ outcome: "error", status: "abort" });
        },
      );
    });

    test("§7.4 a fail_closed hook that times out aborts the chain", async () => {
      const b = uniq("fc-timeout");
      await withBundles([testBundle(b, [{ name: "fc_spin", type: "on_transition", fail_closed: true, timeout_ms: 30 }], { fc_spin: "function () { for(;;){} }" })], async () => {
        const r = await rt.fire("on_transition", fireInput("on_transition"));
        expect(r).toMatchObject({ status: "aborted", aborted_by: "fc_spin" });
        expect(r.hook_results[0]!.outcome).toBe("timeout");
      });
    });

    test("§8.2.5 registrations and deregistrations are rate-limited per principal", async () => {
      const limited = await make({ registrationsPerMinute: 2 });
      try {
        const ops = { id: "ops-1", role: "operator" as const };
        const a = uniq("rl");
        await limited.bundles.install(testBundle(a, [{ name: "rl_one", type: "pre_inject" }], { rl_one: appendTag("x") }), { principal: ops });
        await limited.bundles.remove(a, { principal: ops });
        await expect(
          limited.bundles.install(testBundle(uniq("rl"), [{ name: "rl_two", type: "pre_inject" }], { rl_two: appendTag("x") }), { principal: ops }),
        ).rejects.toMatchObject({ code: "RATE_LIMITED", details: expect.objectContaining({ principal: "ops-1" }) });
        // Another principal has its own budget.
        const b = uniq("rl");
        await limited.bundles.install(testBundle(b, [{ name: "rl_three", type: "pre_inject" }], { rl_three: appendTag("x") }), { principal: { id: "ops-2", role: "operator" } });
        expect(limited.bundles.list().map((x) => x.bundle)).toEqual([b]);
      } finally {
        await limited.close();
      }
    });

    test("DESIGN §4.3 an empty chain returns at once with the input unchanged", async () => {
      const input = fireInput("on_conflict", { untouched: true });
      const r = await rt.fire("on_conflict", input);
      expect(r).toMatchObject({ status: "completed", hook_results: [], context: { untouched: true } });
    });

    test("DESIGN §4.3 a whole-chain deadline gives each hook min(timeout_ms, remaining); hooks it stops or skips did not fail", async () => {
      const deadline = await make({ chainDeadlineMs: { pre_inject: 150 } });
      try {
        const b = uniq("deadline");
        await deadline.bundles.install(testBundle(b, [
          { name: "eat_budget", type: "pre_inject", priority: 90, timeout_ms: 5000 },
          { name: "starved", type: "pre_inject", priority: 10, timeout_ms: 5000 },
        ], { eat_budget: "function () { for(;;){} }", starved: "function () { return { status: 'continue' }; }" }));
        const r = await deadline.fire("pre_inject", fireInput("pre_inject"));
        // Stopped by the deadline before its own timeout_ms: not a spec §5.4 timeout. The next hook
        // never ran: skipped, not timed out, and no cascade (spec §7.3 counts failures of hooks that ran).
        expect(r.hook_results.map((h) => h.outcome)).toEqual(["deadline_exceeded", "skipped_deadline"]);
        expect(r.hook_results[0]!.duration_ms).toBeLessThan(1000);
        expect(r.cascade_failure).toBe(false);
      } finally {
        await deadline.close();
      }
    });

    test("unknown hook types and malformed inputs get errors that name what is wrong", async () => {
      const b = uniq("inputs");
      await withBundles([testBundle(b, [{ name: "any_hook", type: "pre_inject" }], { any_hook: appendTag("x") })], async () => {
        await expect(rt.fire("pre_answer" as never, fireInput("pre_inject") as never)).rejects.toMatchObject({ code: "UNKNOWN_HOOK_TYPE" });
        await expect(rt.fire("pre_inject", { ...fireInput("pre_inject"), event: { injection_target: "x" } as never })).rejects.toMatchObject({
          code: "INVALID_INPUT",
          message: expect.stringContaining("event"),
        });
        await expect(rt.fire("pre_inject", { ...fireInput("pre_inject"), constitution: { id: "c" } as never })).rejects.toMatchObject({
          code: "INVALID_INPUT",
          message: "constitution.rules: is required",
          details: { field: "constitution.rules", rule: "is required" },
        });
        await expect(rt.fire("pre_inject", { ...fireInput("pre_inject"), constitution: { id: "c", rules: [{ id: "r" }] } as never })).rejects.toMatchObject({
          message: "constitution.rules[0].text: is required",
        });
      });
      // A nullable event field: the message lists what it may be, not only its first branch.
      await withBundles([testBundle(`${b}-t`, [{ name: "any_transition", type: "on_transition" }], { any_transition: appendTag("x") })], async () => {
        const input = fireInput("on_transition");
        await expect(rt.fire("on_transition", { ...input, event: { ...input.event, previous_state: 5 } as never })).rejects.toMatchObject({
          code: "INVALID_INPUT",
          message: "event.previous_state: must be a string or null",
        });
      });
    });

    test("every hook type can be fired", async () => {
      const b = uniq("all-types");
      const hooks = HOOK_TYPES.map((type) => ({ name: `all_${type}`, type }));
      await withBundles([testBundle(b, hooks, Object.fromEntries(hooks.map((h) => [h.name, appendTag(h.type)])))], async () => {
        for (const type of HOOK_TYPES) {
          const r = await rt.fire(type, fireInput(type, {}));
          expect(r.context.trail, type).toEqual([type]);
        }
      });
    });
  });
}
