import { describe, expect, test } from "vitest";
import { toFrozenJson } from "../../../src/registry/json.js";
import { parseHookDefinition } from "../../../src/registry/validate.js";
import { CLIENT, DEPLOY, catchVcp, def, harness, inSession } from "./fixtures.js";

/** One bad definition per rule of spec §6.2 (and the registry's own rules). */
const BAD: { rule: string; def: Record<string, unknown>; code: string; field: string; received?: unknown }[] = [
  { rule: "§6.2.2 name too long", def: def({ name: "a".repeat(65) }), code: "INVALID_HOOK", field: "name" },
  { rule: "§6.2.2 name uppercase", def: def({ name: "StripPII" }), code: "INVALID_HOOK", field: "name", received: "StripPII" },
  { rule: "§6.2.2 name empty", def: def({ name: "" }), code: "INVALID_HOOK", field: "name", received: "" },
  { rule: "§6.2.2 name with a dot", def: def({ name: "a.b" }), code: "INVALID_HOOK", field: "name" },
  { rule: "§6.2.2 name not a string", def: def({ name: 7 }), code: "INVALID_HOOK", field: "name", received: 7 },
  { rule: "§6.2.3 bad type", def: def({ type: "pre_select" }), code: "INVALID_HOOK", field: "type", received: "pre_select" },
  { rule: "§6.2.4 priority 101", def: def({ priority: 101 }), code: "INVALID_HOOK", field: "priority", received: 101 },
  { rule: "§6.2.4 priority -1", def: def({ priority: -1 }), code: "INVALID_HOOK", field: "priority", received: -1 },
  { rule: "§6.2.4 priority 1.5", def: def({ priority: 1.5 }), code: "INVALID_HOOK", field: "priority", received: 1.5 },
  { rule: '§6.2.4 priority "5"', def: def({ priority: "5" }), code: "INVALID_HOOK", field: "priority", received: "5" },
  { rule: "§6.2.4 priority NaN", def: def({ priority: Number.NaN }), code: "INVALID_HOOK", field: "priority" },
  { rule: "§6.2.5 timeout 0", def: def({ timeout_ms: 0 }), code: "INVALID_HOOK", field: "timeout_ms", received: 0 },
  { rule: "§6.2.5 timeout 30001", def: def({ timeout_ms: 30_001 }), code: "INVALID_HOOK", field: "timeout_ms", received: 30_001 },
  { rule: "§6.2.5 timeout 2.5", def: def({ timeout_ms: 2.5 }), code: "INVALID_HOOK", field: "timeout_ms", received: 2.5 },
  { rule: "§6.2.5 timeout missing", def: def({ timeout_ms: undefined }), code: "INVALID_HOOK", field: "timeout_ms" },
  { rule: "§6.2.6 action missing", def: def({ action: undefined }), code: "INVALID_HOOK", field: "action" },
  { rule: "§6.2.6 action a string", def: def({ action: "strip" }), code: "INVALID_HOOK", field: "action", received: "strip" },
  { rule: "§6.2.6 action export not an identifier", def: def({ action: { bundle: "pii", export: "1x" } }), code: "INVALID_HOOK", field: "action.export" },
  { rule: "§6.2.6 action export missing", def: def({ action: { bundle: "pii" } }), code: "INVALID_HOOK", field: "action.export" },
  { rule: "§6.2.6 action bundle uppercase", def: def({ action: { bundle: "PII", export: "strip" } }), code: "INVALID_HOOK", field: "action.bundle" },
  { rule: "§6.2.6 action unknown field", def: def({ action: { bundle: "pii", export: "strip", code: "x" } }), code: "INVALID_HOOK", field: "action.code" },
  {
    rule: "§6.2.7 condition with a bad operator",
    def: def({ condition: { combine: "and", children: [{ field: "context.x", operator: "like", value: 1 }] } }),
    code: "INVALID_HOOK",
    field: "condition.children[0].operator",
    received: "like",
  },
  { rule: "§6.2.7 condition not an object", def: def({ condition: "always" }), code: "INVALID_HOOK", field: "condition" },
  { rule: "§4.1 unknown field", def: def({ when: "always" }), code: "INVALID_HOOK", field: "when", received: "always" },
  { rule: "§4.1 enabled not a boolean", def: def({ enabled: "yes" }), code: "INVALID_HOOK", field: "enabled" },
  { rule: "§4.1 metadata not a map", def: def({ metadata: [1] }), code: "INVALID_HOOK", field: "metadata" },
  { rule: "§8.3 trust unknown", def: def({ trust: "root" }), code: "INVALID_HOOK", field: "trust" },
  { rule: "§8.3 default session trust cannot be fail_closed", def: def({ fail_closed: true }), code: "INVALID_HOOK", field: "fail_closed" },
  { rule: "§8.3 session trust cannot be fail_closed", def: def({ fail_closed: true, trust: "session" }), code: "INVALID_HOOK", field: "fail_closed" },
  { rule: "metadata must be JSON data", def: def({ metadata: { at: new Date(0) } }), code: "INVALID_HOOK", field: "metadata.at" },
  { rule: "metadata numbers must be finite", def: def({ metadata: { n: Infinity } }), code: "INVALID_HOOK", field: "metadata.n" },
];

describe("registration validation (spec §6.2)", () => {
  test.each(BAD)("$rule → $code at $field", ({ def: bad, code, field, received }) => {
    const { registry, events } = harness();
    const err = catchVcp(() => registry.register(bad, DEPLOY));
    expect(err.code).toBe(code);
    expect(err.details?.["field"]).toBe(field);
    expect(err.message).toContain(`hooks: ${field}: `);
    if (received !== undefined) expect(err.details?.["received"]).toEqual(received);
    expect(registry.snapshot().revision).toBe(0);
    expect(registry.snapshot().hooks()).toEqual([]);
    expect(events).toEqual([]);
  });

  test("the message names every broken field; details describe the first and list all", () => {
    const { registry } = harness();
    const err = catchVcp(() => registry.register(def({ priority: 101, timeout_ms: 0, extra: 1 }), DEPLOY));
    expect(err.code).toBe("INVALID_HOOK");
    expect(err.message).toMatch(/priority: must be an integer in \[0, 100\]/);
    expect(err.message).toMatch(/timeout_ms: must be an integer in \[1, 30000\]/);
    expect(err.message).toMatch(/extra: is not a field/);
    expect(err.details?.["issues"]).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: "priority" }),
        expect.objectContaining({ field: "timeout_ms" }),
        expect.objectContaining({ field: "extra" }),
      ]),
    );
    expect(err.details?.["hook"]).toBe("strip-pii");
  });

  test("a missing field says it is required; a non-object definition names the definition", () => {
    const { registry } = harness();
    const missing = catchVcp(() => registry.register(def({ name: undefined }), DEPLOY));
    expect(missing.message).toContain("hooks: name: is required");
    for (const notObject of [null, 42, "hook", []]) {
      const err = catchVcp(() => registry.register(notObject, DEPLOY));
      expect(err.code).toBe("INVALID_HOOK");
      expect(err.details?.["field"]).toBe("definition");
    }
  });

  test("boundary values are accepted: name of 64, priority 0 and 100, timeout 1 and 30000", () => {
    const { registry } = harness();
    registry.registerAll(
      [
        def({ name: "a".repeat(64) }),
        def({ name: "p0", priority: 0, timeout_ms: 1 }),
        def({ name: "p100", priority: 100, timeout_ms: 30_000 }),
        def({ name: "under_score-and-dash9" }),
      ],
      DEPLOY,
    );
    expect(registry.snapshot().hooks()).toHaveLength(4);
  });

  test("a condition the predicate compiler rejects fails with its INVALID_PREDICATE error unchanged", () => {
    const { registry } = harness();
    // Both a leaf and a compound: the shape passes zod, compilePredicate rejects it.
    const condition = { field: "context.x", operator: "eq", value: 1, combine: "and", children: [] };
    const err = catchVcp(() => registry.register(def({ condition }), DEPLOY));
    expect(err.code).toBe("INVALID_PREDICATE");
    expect(String(err.details?.["path"])).toMatch(/^condition/);
    expect(registry.snapshot().revision).toBe(0);
  });

  test("predicateOptions reach the predicate compiler", () => {
    const { registry } = harness({ predicateOptions: { maxDepth: 1 } });
    const condition = { combine: "and", children: [{ field: "session.platform", operator: "eq", value: "web" }] };
    expect(catchVcp(() => registry.register(def({ condition }), DEPLOY)).code).toBe("INVALID_PREDICATE");
    expect(harness().registry.register(def({ condition }), DEPLOY).condition).toEqual(condition);
  });

  test("a valid condition is stored", () => {
    const { registry } = harness();
    const condition = { field: "session.platform", operator: "eq", value: "web" };
    const hook = registry.register(def({ condition }), DEPLOY);
    expect(hook.condition).toEqual(condition);
  });

  test("an action the resolver rejects → ACTION_NOT_CALLABLE with the resolver's reason", () => {
    const { registry } = harness({
      resolveAction: (ref) => (ref.export === "strip" ? true : `bundle "${ref.bundle}" exports no function "${ref.export}"`),
    });
    registry.register(def(), DEPLOY);
    const err = catchVcp(() => registry.register(def({ name: "other", action: { bundle: "pii", export: "nope" } }), DEPLOY));
    expect(err.code).toBe("ACTION_NOT_CALLABLE");
    expect(err.details).toMatchObject({ field: "action", bundle: "pii", export: "nope", rule: 'bundle "pii" exports no function "nope"' });
    expect(err.message).toContain('exports no function "nope"');
  });

  test("the resolver sees the parsed action reference", () => {
    const seen: unknown[] = [];
    const { registry } = harness({ resolveAction: (ref) => (seen.push(ref), true) });
    registry.register(def({ action: { bundle: "pii", export: "strip", digest: "sha256:ab" } }), DEPLOY);
    expect(seen).toEqual([{ bundle: "pii", export: "strip", digest: "sha256:ab" }]);
  });
});

describe("resolved hooks", () => {
  test("defaults: enabled, not fail-closed, session trust, empty metadata, null condition", () => {
    const { registry } = harness();
    const hook = registry.register(def(), DEPLOY);
    expect(hook).toEqual({
      name: "strip-pii",
      type: "pre_inject",
      priority: 50,
      timeout_ms: 100,
      action: { bundle: "pii", export: "strip" },
      condition: null,
      enabled: true,
      metadata: {},
      fail_closed: false,
      trust: "session",
      scope: "deployment",
      seq: 1,
    });
    expect("session_id" in hook).toBe(false);
  });

  test("a deployment hook keeps the trust it declares and may then be fail-closed", () => {
    const { registry } = harness();
    const hook = registry.register(def({ trust: "deployment", fail_closed: true, enabled: false, description: "d" }), DEPLOY);
    expect(hook).toMatchObject({ trust: "deployment", fail_closed: true, enabled: false, description: "d" });
  });

  test.each(["system", "deployment", undefined])("a session-scope hook asking for trust %s runs with session trust", (trust) => {
    const { registry } = harness();
    const hook = registry.register(def(trust === undefined ? {} : { trust }), inSession("s1"));
    expect(hook.trust).toBe("session");
    expect(hook.scope).toBe("session");
    expect(hook.session_id).toBe("s1");
  });

  test("a session-scope hook cannot be fail_closed even if it asks for deployment trust", () => {
    const { registry } = harness();
    const err = catchVcp(() => registry.register(def({ trust: "deployment", fail_closed: true }), inSession("s1", CLIENT)));
    expect(err.code).toBe("INVALID_HOOK");
    expect(err.details?.["field"]).toBe("fail_closed");
  });

  test("hooks are deep-frozen copies: the caller's objects stay theirs and the stored hook cannot change", () => {
    const { registry } = harness();
    const metadata = { tags: ["a"], nested: { x: 1 } };
    const condition = { combine: "and", children: [{ field: "session.platform", operator: "in", value: ["web"] }] };
    const input = def({ metadata, condition });
    const hook = registry.register(input, DEPLOY);

    metadata.tags.push("b");
    (condition.children[0]!.value as string[]).push("cli");
    expect(hook.metadata).toEqual({ tags: ["a"], nested: { x: 1 } });
    expect(hook.condition?.children?.[0]?.value).toEqual(["web"]);
    expect(Object.isFrozen(metadata)).toBe(false);

    expect(Object.isFrozen(hook)).toBe(true);
    expect(Object.isFrozen(hook.action)).toBe(true);
    expect(Object.isFrozen(hook.metadata["nested"])).toBe(true);
    expect(Object.isFrozen(hook.condition?.children?.[0]?.value)).toBe(true);
    expect(() => {
      (hook as { priority: number }).priority = 1;
    }).toThrow(TypeError);
    expect(registry.snapshot().hooks()[0]).toBe(hook);
  });

  test('a "__proto__" metadata key stays data and does not replace the prototype', () => {
    const { registry } = harness();
    const metadata = JSON.parse('{"__proto__": {"polluted": true}, "ok": 1}') as Record<string, unknown>;
    const hook = registry.register(def({ metadata }), DEPLOY);
    expect(Object.getPrototypeOf(hook.metadata)).toBe(Object.prototype);
    expect((hook.metadata as Record<string, unknown>)["polluted"]).toBeUndefined();
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
  });

  test('toFrozenJson defines an own "__proto__" key instead of assigning it', () => {
    const input = JSON.parse('{"__proto__": {"polluted": true}, "ok": 1}') as object;
    const copy = toFrozenJson(input, ["metadata"]) as Record<string, unknown>;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(copy["polluted"]).toBeUndefined();
    expect(Object.getOwnPropertyNames(copy).sort()).toEqual(["__proto__", "ok"]);
    expect(Object.getOwnPropertyDescriptor(copy, "__proto__")?.value).toEqual({ polluted: true });
  });

  test("cyclic metadata is rejected, not a stack overflow", () => {
    const { registry } = harness();
    const metadata: Record<string, unknown> = {};
    metadata["self"] = metadata;
    const err = catchVcp(() => registry.register(def({ metadata }), DEPLOY));
    expect(err.code).toBe("INVALID_HOOK");
    expect(String(err.details?.["field"])).toMatch(/^metadata\.self/);
    expect(err.details?.["rule"]).toMatch(/cycle/);
  });

  test("seq is a registry-wide counter across scopes and is not consumed by failed calls", () => {
    const { registry } = harness({ sessionHookAllowlist: ["pii/b"] });
    expect(registry.register(def({ name: "a" }), DEPLOY).seq).toBe(1);
    catchVcp(() => registry.register(def({ name: "bad", priority: 101 }), DEPLOY));
    expect(registry.register(def({ name: "b" }), inSession("s1")).seq).toBe(2);
    expect(registry.registerAll([def({ name: "c" }), def({ name: "d" })], DEPLOY).map((h) => h.seq)).toEqual([3, 4]);
  });
});

describe("over-deep predicates", () => {
  test("a condition nested 5000 levels deep is refused with INVALID_PREDICATE, not a stack overflow", () => {
    let condition: Record<string, unknown> = { field: "context.a", operator: "eq", value: 1 };
    for (let i = 0; i < 5000; i++) condition = { combine: "and", children: [condition] };
    let caught: unknown;
    try {
      parseHookDefinition({ name: "deep", type: "pre_inject", priority: 1, timeout_ms: 10, action: { bundle: "b", export: "a" }, condition });
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ code: "INVALID_PREDICATE", details: { path: expect.stringMatching(/^condition(\.children\[0\]){16}$/) } });
  });
});
