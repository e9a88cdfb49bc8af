// Limits on work a guest can start outside the isolate's own accounting: top-level code run inside a
// hook call, the clock, ICU text and regular-expression compilation (the corpus has the attacks;
// these are the mechanics, against a real isolate host).
import { describe, expect, test } from "vitest";
import {
  BUNDLE_PROPERTY_ESCAPE_BUDGET,
  checkBundleCodeText,
  propertyEscapeWeight,
  STRING_PROPERTY_WEIGHT,
} from "../../../src/sandbox-host/compiled-text.js";
import { VcpError } from "../../../src/errors.js";
import { annotations, bundle, request, useHosts } from "./helpers.js";

const host = useHosts();

// Top-level work by iteration count (the guest has no running clock): tens of milliseconds on any
// machine, far more than the 5 ms budgets below, far less than the 1 s load budget.
const SLOW_TOP_LEVEL = `var __slow = 0; for (let i = 0; i < 3e7; i++) __slow += i & 1;`;

describe("top-level code run for a hook call spends the hook's budget", () => {
  test("per_session: a new session's context is created within the call's timeout, or the call times out", async () => {
    const { host: h } = host();
    // `__calls` counts the calls one context has served: a context created again would start at 1.
    const b = bundle(`act(input) { return { status: "continue", annotations: { ok: true, calls: ++__calls } }; }`, { isolation: "per_session", prefix: `${SLOW_TOP_LEVEL} var __calls = 0;` });
    await h.load(b);
    expect((await h.invoke(request(b, "act", { sessionId: "s-a", budgetMs: 5 }))).kind).toBe("timeout");
    expect((await h.invoke(request(b, "act", { sessionId: "s-b", budgetMs: 5 }))).kind).toBe("timeout");
    // With enough budget the same bundle serves, and the session keeps its context afterwards: the
    // second call is served by the same context (counted, not timed: a 5 ms budget for a trivial call
    // timed out on this 2-core machine at load 11).
    expect(annotations(await h.invoke(request(b, "act", { sessionId: "s-c", budgetMs: 5000 })))).toEqual({ ok: true, calls: 1 });
    expect(annotations(await h.invoke(request(b, "act", { sessionId: "s-c", budgetMs: 5000 })))).toEqual({ ok: true, calls: 2 });
  });

  test("shared: an isolate recreated after a timeout reruns top-level code within the next call's timeout", async () => {
    const { host: h } = host();
    const b = bundle(`act(input) { if (input.context.spin) for (;;) {} return { status: "continue", annotations: { ok: true } }; }`, { prefix: SLOW_TOP_LEVEL });
    await h.load(b);
    const spin = { context: { spin: true }, constitution: {}, event: {}, chain_state: {} };
    const calm = { context: {}, constitution: {}, event: {}, chain_state: {} };
    expect((await h.invoke(request(b, "act", { input: spin, budgetMs: 50 }))).kind).toBe("timeout");
    expect((await h.invoke(request(b, "act", { input: calm, budgetMs: 5 }))).kind).toBe("timeout");
    expect(annotations(await h.invoke(request(b, "act", { input: calm, budgetMs: 5000 })))).toEqual({ ok: true });
  });

  test("a bundle's first call on a thread (loaded from the code source) loads within the call's timeout", async () => {
    const b = bundle(`act() { return { status: "continue", annotations: { ok: true } }; }`, { prefix: SLOW_TOP_LEVEL });
    const { host: h } = host({}, { codeSource: (d) => (d === b.digest ? b : undefined) });
    expect((await h.invoke(request(b, "act", { budgetMs: 5 }))).kind).toBe("timeout");
    expect(annotations(await h.invoke(request(b, "act", { budgetMs: 5000 })))).toEqual({ ok: true });
  });
});

describe("the clock is frozen for the duration of a call", () => {
  test("Date.now, new Date, Date() and vcp.now give the call's start instant, before and after work and awaits", async () => {
    const { host: h } = host();
    const b = bundle(`async act() {
      const t0 = Date.now();
      let spins = 0;
      while (Date.now() === t0 && spins < 3e7) spins++;
      const views = [Date.now(), vcp.now(), new Date().getTime(), new (class extends Date {})().getTime(), Reflect.construct(Date, []).valueOf()];
      await null;
      views.push(Date.now(), vcp.now());
      return { status: "continue", annotations: {
        t0, spins, same: views.every((v) => v === t0), str: Date() === new Date(t0).toString(),
        ctor: Object.getPrototypeOf(new Date()).constructor === Date && Date.prototype.constructor === Date,
        explicit: new Date(0).getTime() === 0 && Date.UTC(2020, 0, 1) === 1577836800000 && Date.parse("2020-01-01T00:00:00Z") === 1577836800000,
        nowName: Date.now.name, len: Date.length,
      } };
    }`);
    await h.load(b);
    const before = Date.now();
    const a = annotations(await h.invoke(request(b, "act", { budgetMs: 5000 })));
    const after = Date.now();
    expect(a).toMatchObject({ spins: 3e7, same: true, str: true, ctor: true, explicit: true, nowName: "now", len: 7 });
    expect(a.t0).toBeGreaterThanOrEqual(Math.floor(before));
    expect(a.t0).toBeLessThanOrEqual(after);
    expect(Number.isInteger(a.t0)).toBe(true);
  });

  test("time moves between calls; top-level code sees the time its context was created", async () => {
    const { host: h } = host();
    const b = bundle(`act() { return { status: "continue", annotations: { top: TOP, now: Date.now() } }; }`, { prefix: `var TOP = Date.now();` });
    const before = Date.now();
    await h.load(b);
    const first = annotations(await h.invoke(request(b, "act")));
    await new Promise((r) => setTimeout(r, 5));
    const second = annotations(await h.invoke(request(b, "act")));
    expect(first.top).toBeGreaterThanOrEqual(before);
    expect(second.now as number).toBeGreaterThan(first.now as number);
    expect(second.top).toBe(first.top);
  });
});

describe("text compiled at run time and bundle code", () => {
  test("property escapes are counted like the regular-expression parser sees them", () => {
    expect(propertyEscapeWeight("\\p{L}\\P{Lu}", 100)).toBe(2);
    expect(propertyEscapeWeight("\\\\p{L}", 100)).toBe(0); // an escaped backslash, then a literal "p{L}"
    expect(propertyEscapeWeight("\\\\\\p{L}", 100)).toBe(1);
    expect(propertyEscapeWeight("\\p{RGI_Emoji}\\p{RGI_Emoji_Flag_Sequence}", 100)).toBe(2 * STRING_PROPERTY_WEIGHT);
  });

  test("bundle code over the property-escape budget is INVALID_BUNDLE before V8 parses it", async () => {
    const literals = Array.from({ length: BUNDLE_PROPERTY_ESCAPE_BUDGET / STRING_PROPERTY_WEIGHT + 1 }, () => "/\\p{RGI_Emoji}/v").join(", ");
    expect(() => checkBundleCodeText("x", literals)).toThrow(VcpError);
    const { host: h } = host();
    const b = bundle(`act() { return { status: "continue", n: [${literals}].length }; }`);
    await expect(h.load(b)).rejects.toMatchObject({ code: "INVALID_BUNDLE", message: expect.stringMatching(/property escapes/) });
    const ok = bundle(`act() { return { status: "continue", annotations: { m: /\\p{L}+/u.test("é") } }; }`);
    await h.load(ok);
    expect(annotations(await h.invoke(request(ok, "act")))).toEqual({ m: true });
  });

  test("ordinary RegExp, eval, Function and ICU use keeps working under the wrappers", async () => {
    const { host: h } = host();
    const b = bundle(`act() {
      const re = new RegExp("(\\\\d+)-(\\\\d+)", "g");
      return { status: "continue", annotations: {
        replace: "1-2 3-4".replace(re, "$2-$1"), same: RegExp(re) === re, copy: new RegExp(re, "i").flags,
        sub: new (class extends RegExp {})("a").test("a"), compile: /x/.compile("y").source,
        match: "abc".match("b").index, all: [..."a1b2".matchAll("\\\\d")].map((m) => m[0]), search: "abc".search("c"),
        split: "a,b".split(/,/), legacy: typeof RegExp.$1, eval: eval("1 + 1"), fn: Function("a", "b", "return a * b")(3, 4),
        gen: [...new (Object.getPrototypeOf(function* () {}).constructor)("yield 1")()],
        nfkd: "ﬁ".normalize("NFKD"), cmp: "a".localeCompare("b"), up: "i".toLocaleUpperCase(["tr"]), low: "I".toLocaleLowerCase("en"),
        num: (1234.5).toLocaleString("en-US"), big: (12345n).toLocaleString("en-US"), date: new Date(0).toLocaleDateString("en-US", { timeZone: "UTC" }),
      } };
    }`);
    await h.load(b);
    expect(annotations(await h.invoke(request(b, "act")))).toEqual({
      replace: "2-1 4-3", same: true, copy: "i", sub: true, compile: "y", match: 1, all: ["1", "2"], search: 2,
      split: ["a", "b"], legacy: "undefined", eval: 2, fn: 12, gen: [1],
      nfkd: "fi", cmp: -1, up: "İ", low: "i", num: "1,234.5", big: "12,345", date: "1/1/1970",
    });
  });
});
