import { describe, expect, test } from "vitest";
import { VcpError } from "../../../src/errors.js";
import type { InvokeOutcome } from "../../../src/model/chain.js";
import { CROSSING_PIECE_CHARS, joinPieces } from "../../../src/sandbox-host/isolate-host.js";
import { bundle, request, useHosts } from "./helpers.js";

const host = useHosts();

function returned(o: InvokeOutcome): { resultJson: string; chainStateJson: string } {
  if (o.kind !== "returned") throw new Error(`expected returned, got ${JSON.stringify(o)}`);
  return o;
}

describe("load", () => {
  test("returns the names of exported functions only", async () => {
    const { host: h } = host();
    const b = bundle(`act(input) { return { status: "continue" }; }, other: async () => 1, notAFunction: 42`);
    expect((await h.load(b)).exports.sort()).toEqual(["act", "other"]);
  });

  test("reads esbuild-style getter exports", async () => {
    const { host: h } = host();
    const b = bundle(`return (() => { const ex = {}; Object.defineProperty(ex, "act", { enumerable: true, get: () => function act() { return { status: "continue" }; } }); return ex; })();`);
    expect((await h.load(b)).exports).toEqual(["act"]);
    expect(returned(await h.invoke(request(b, "act"))).resultJson).toBe('{"status":"continue"}');
  });

  test("top-level throw is INVALID_BUNDLE with the guest message and no host path", async () => {
    const { host: h } = host();
    const b = bundle(`act() {}`, { prefix: `throw new Error("boom at top level");` });
    const err = await h.load(b).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VcpError);
    expect((err as VcpError).code).toBe("INVALID_BUNDLE");
    expect((err as VcpError).message).toContain("boom at top level");
    expect(JSON.stringify((err as VcpError).toJSON())).not.toMatch(/\/work\/|file:\/\/|node_modules/);
  });

  test("top-level infinite loop is INVALID_BUNDLE (timeout)", async () => {
    const { host: h } = host();
    const err = await h.load(bundle(`act() {}`, { prefix: `for (;;) {}` })).catch((e: unknown) => e);
    expect((err as VcpError).code).toBe("INVALID_BUNDLE");
    expect((err as VcpError).message).toMatch(/did not finish within 1000 ms/);
  });

  test("syntax error and missing __vcp_bundle are INVALID_BUNDLE", async () => {
    const { host: h } = host();
    const bad = { ...bundle(`act() {}`), code: "function (" };
    expect(((await h.load(bad).catch((e: unknown) => e)) as VcpError).code).toBe("INVALID_BUNDLE");
    const none = { ...bundle(`act() {}`), code: "var x = 1;" };
    const err = (await h.load(none).catch((e: unknown) => e)) as VcpError;
    expect(err.code).toBe("INVALID_BUNDLE");
    expect(err.message).toMatch(/__vcp_bundle/);
  });

  test("code larger than codeBytes is INVALID_BUNDLE", async () => {
    const { host: h } = host({ codeBytes: 100 });
    const err = (await h.load(bundle(`act() {}`, { prefix: "// " + "x".repeat(200) })).catch((e: unknown) => e)) as VcpError;
    expect(err.code).toBe("INVALID_BUNDLE");
    expect(err.message).toMatch(/exceeds 100 bytes/);
  });

  test("__vcp_bundle does not stay on the global", async () => {
    const { host: h } = host();
    const b = bundle(`act() { return { status: "continue", annotations: { has: "__vcp_bundle" in globalThis } }; }`);
    await h.load(b);
    expect(returned(await h.invoke(request(b, "act"))).resultJson).toContain('"has":false');
  });
});

describe("invoke", () => {
  test("happy path: result and chain_state come back as JSON text", async () => {
    const { host: h } = host();
    const b = bundle(`act(input) { input.chain_state.seen = (input.chain_state.seen || 0) + 1; return { status: "modify", context: { x: input.context.x * 2 } }; }`);
    await h.load(b);
    const o = await h.invoke(request(b, "act", { input: { context: { x: 21 }, chain_state: { seen: 1 } } }));
    const r = returned(o);
    expect(r.resultJson).toBe('{"status":"modify","context":{"x":42}}');
    expect(r.chainStateJson).toBe('{"seen":2}');
    expect(typeof (o as { cpuMs?: number }).cpuMs).toBe("number");
  });

  test("async action result comes back", async () => {
    const { host: h } = host();
    const b = bundle(`async act(input) { await null; await Promise.resolve(); return { status: "abort", reason: "r" }; }`);
    await h.load(b);
    expect(returned(await h.invoke(request(b, "act"))).resultJson).toBe('{"status":"abort","reason":"r"}');
  });

  test("thrown exception → threw with message and guest-only stack", async () => {
    const { host: h } = host();
    const b = bundle(`act() { throw new TypeError("bad input " + "x".repeat(10)); }`);
    await h.load(b);
    const o = await h.invoke(request(b, "act"));
    expect(o.kind).toBe("threw");
    if (o.kind !== "threw") return;
    expect(o.message).toBe("bad input xxxxxxxxxx");
    expect(o.stack).toContain("vcp-bundle:///");
    expect(o.stack).not.toMatch(/vcp-prelude|\/work\/|node_modules|isolated-vm boundary/);
  });

  test("rejected promise and thrown non-Error values → threw", async () => {
    const { host: h } = host();
    const b = bundle(`async a() { throw new Error("late"); }, b() { throw "plain"; }, c() { throw { get message() { throw 1; } }; }`);
    await h.load(b);
    expect(await h.invoke(request(b, "a"))).toMatchObject({ kind: "threw", message: "late" });
    expect(await h.invoke(request(b, "b"))).toMatchObject({ kind: "threw", message: "plain" });
    expect(await h.invoke(request(b, "c"))).toMatchObject({ kind: "threw", message: "exception could not be converted to a string" });
  });

  test("missing export → threw naming the action", async () => {
    const { host: h } = host();
    const b = bundle(`act() { return {}; }`);
    await h.load(b);
    const o = await h.invoke(request(b, "nope"));
    expect(o).toMatchObject({ kind: "threw" });
    expect((o as { message: string }).message).toMatch(/"nope" is not an exported function/);
  });

  test("unknown digest throws UNKNOWN_BUNDLE; codeSource loads on a miss", async () => {
    const b = bundle(`act() { return { status: "continue" }; }`);
    const { host: h } = host({}, { codeSource: (d) => (d === b.digest ? b : undefined) });
    expect(returned(await h.invoke(request(b, "act"))).resultJson).toBe('{"status":"continue"}');
    const other = bundle(`act() {}`);
    const err = (await h.invoke(request(other, "act")).catch((e: unknown) => e)) as VcpError;
    expect(err).toBeInstanceOf(VcpError);
    expect(err.code).toBe("UNKNOWN_BUNDLE");
  });

  test("invalid results: undefined, cyclic, non-JSON, oversized, non-object chain_state", async () => {
    const { host: h } = host({ resultBytes: 1000 });
    const b = bundle(`
      undef() { return undefined; },
      cyclic() { const o = { status: "continue" }; o.self = o; return o; },
      bigint() { return { n: 1n }; },
      big() { return { status: "continue", pad: "x".repeat(2000) }; },
      bigUtf8() { return { status: "continue", pad: "€".repeat(400) }; },
      badState(input) { input.chain_state = [1]; return { status: "continue" }; },
      dropState(input) { delete input.chain_state; return { status: "continue" }; },
      async asyncUndef() { await null; }`);
    await h.load(b);
    for (const [name, pattern] of [
      ["undef", /undefined/],
      ["cyclic", /not JSON-serializable/],
      ["bigint", /not JSON-serializable/],
      ["big", /exceed 1000 bytes/],
      ["bigUtf8", /exceed 1000 bytes/],
      ["badState", /chain_state must be a JSON object/],
      ["dropState", /chain_state must be a JSON object/],
      ["asyncUndef", /undefined/],
    ] as const) {
      const o = await h.invoke(request(b, name));
      expect(o.kind, name).toBe("invalid");
      expect((o as { message: string }).message, name).toMatch(pattern);
    }
  });

  test("result getter that loops forever → timeout, and the next call works", async () => {
    const { host: h } = host();
    const b = bundle(`loop() { return { get status() { for (;;) {} } }; }, ok() { return { status: "continue" }; }`);
    await h.load(b);
    expect((await h.invoke(request(b, "loop", { budgetMs: 100 }))).kind).toBe("timeout");
    expect(returned(await h.invoke(request(b, "ok"))).resultJson).toBe('{"status":"continue"}');
  });

  test("sync infinite loop → timeout; isolate recreated; next call works", async () => {
    const { host: h } = host();
    const b = bundle(`loop() { for (;;) {} }, ok() { return { status: "continue" }; }`);
    await h.load(b);
    const o = await h.invoke(request(b, "loop", { budgetMs: 50 }));
    expect(o.kind).toBe("timeout");
    expect(returned(await h.invoke(request(b, "ok"))).resultJson).toBe('{"status":"continue"}');
    expect(h.stats()[b.digest]).toMatchObject({ recreated: 1, calls: 2 });
  });

  test("never-settling promise → timeout; next call works", async () => {
    const { host: h } = host();
    const b = bundle(`hang() { return new Promise(() => {}); }, ok() { return { status: "continue" }; }`);
    await h.load(b);
    const o = await h.invoke(request(b, "hang", { budgetMs: 50 }));
    expect(o.kind).toBe("timeout");
    expect(returned(await h.invoke(request(b, "ok"))).resultJson).toBe('{"status":"continue"}');
    expect(h.stats()[b.digest]!.recreated).toBe(1);
  });

  test("microtask storm after an await → timeout; next call works", async () => {
    const { host: h } = host();
    const b = bundle(`async storm() { for (;;) await null; }, ok() { return { status: "continue" }; }`);
    await h.load(b);
    expect((await h.invoke(request(b, "storm", { budgetMs: 50 }))).kind).toBe("timeout");
    expect(returned(await h.invoke(request(b, "ok"))).resultJson).toBe('{"status":"continue"}');
  });

  test("memory exhaustion → threw 'isolate memory limit exceeded'; isolate recreated", async () => {
    const { host: h } = host({ isolateMemoryMb: 16 });
    const b = bundle(`hog() { const a = []; for (;;) a.push({ x: Math.random(), y: [1, 2, 3], s: "abc" + a.length }); }, ok() { return { status: "continue" }; }`, { memoryMb: 64 });
    await h.load(b);
    const o = await h.invoke(request(b, "hog", { budgetMs: 10_000 }));
    expect(o).toMatchObject({ kind: "threw", message: "isolate memory limit exceeded (16 MiB)" });
    expect(returned(await h.invoke(request(b, "ok"))).resultJson).toBe('{"status":"continue"}');
    expect(h.stats()[b.digest]!.recreated).toBe(1);
  });

  test("prototype pollution in call 1 is not visible in call 2", async () => {
    const { host: h } = host();
    const b = bundle(`
      pollute() {
        const attempts = [
          () => { Object.prototype.polluted = 1; },
          () => { Array.prototype.push = function () { return -1; }; },
          () => { JSON.stringify = () => "{}"; },
          () => { globalThis.JSON = {}; },
          () => { Object.getPrototypeOf(function* () {}).prototype.next = () => 1; },
          () => { Object.getPrototypeOf(Uint8Array).prototype.fill = () => 1; },
          () => { Object.getPrototypeOf([][Symbol.iterator]()).next = () => ({ done: true }); },
          () => { Object.getPrototypeOf(async function () {}).constructor.evil = 1; },
          () => { Iterator.prototype.evil = 1; },
          () => { Error.prepareStackTrace = () => "owned"; },
          () => { Math.max = () => 0; },
          () => { String.prototype.trim = () => "owned"; },
        ];
        let failed = 0;
        for (const a of attempts) { try { a(); } catch { failed++; } }
        return { status: "continue", annotations: { failed } };
      },
      check() {
        const arr = []; arr.push(1);
        return { status: "continue", annotations: {
          polluted: ({}).polluted === undefined ? "no" : "yes",
          push: arr.length,
          iter: [...[1, 2]].length,
          json: JSON.stringify({ a: 1 }),
          max: Math.max(1, 2),
          trim: " a ".trim(),
          stack: typeof new Error("x").stack,
          gen: [...(function* () { yield 1; yield 2; })()].length,
          fill: Array.from(new Uint8Array(2).fill(7)).join(","),
          asyncEvil: String(Object.getPrototypeOf(async function () {}).constructor.evil),
          iterEvil: String(Iterator.prototype.evil),
        } };
      }`);
    await h.load(b);
    // Bundle code is classic (sloppy) script, so some writes fail silently instead of throwing.
    expect(returned(await h.invoke(request(b, "pollute"))).resultJson).toMatch(/"failed":\d+/);
    expect(JSON.parse(returned(await h.invoke(request(b, "check"))).resultJson).annotations).toEqual({
      polluted: "no",
      push: 1,
      iter: 2,
      json: '{"a":1}',
      max: 2,
      trim: "a",
      stack: "string",
      gen: 2,
      fill: "7,7",
      asyncEvil: "undefined",
      iterEvil: "undefined",
    });
  });

  test("frozen built-ins still allow instance overrides (Error subclass name, toString)", async () => {
    const { host: h } = host();
    const b = bundle(`act() {
      "use strict";
      class MyError extends Error { constructor(m) { super(m); this.name = "MyError"; } }
      const o = {}; o.toString = () => "custom";
      const e = new MyError("m");
      return { status: "continue", annotations: { name: e.name, proto: Error.prototype.name, s: String(o) } };
    }`);
    await h.load(b);
    expect(JSON.parse(returned(await h.invoke(request(b, "act"))).resultJson).annotations).toEqual({
      name: "MyError",
      proto: "Error",
      s: "custom",
    });
  });
});

describe("isolation", () => {
  const counterBundle = (isolation: "shared" | "per_session") =>
    bundle(`return (() => { let n = 0; return { count() { n++; return { status: "continue", annotations: { n } }; } }; })();`, { isolation });

  test("shared keeps module state between calls and sessions", async () => {
    const { host: h } = host();
    const b = counterBundle("shared");
    await h.load(b);
    const ns: number[] = [];
    for (const s of ["a", "b", "a"]) ns.push(JSON.parse(returned(await h.invoke(request(b, "count", { sessionId: s }))).resultJson).annotations.n);
    expect(ns).toEqual([1, 2, 3]);
  });

  test("per_session keeps sessions apart and is LRU-bounded", async () => {
    const { host: h } = host({ perSessionContexts: 2 });
    const b = counterBundle("per_session");
    await h.load(b);
    const n = async (s: string) => JSON.parse(returned(await h.invoke(request(b, "count", { sessionId: s }))).resultJson).annotations.n as number;
    expect(await n("a")).toBe(1);
    expect(await n("a")).toBe(2);
    expect(await n("b")).toBe(1);
    expect(await n("a")).toBe(3);
    expect(await n("c")).toBe(1); // evicts b (least recently used)
    expect(await n("a")).toBe(4);
    expect(await n("b")).toBe(1); // b's context was released: fresh state
  });

  test("releaseSession ends one key's contexts (a sessionless chain's): fresh state after, other sessions untouched", async () => {
    const { host: h } = host({ perSessionContexts: 2 });
    const b = counterBundle("per_session");
    await h.load(b);
    const n = async (s: string) => JSON.parse(returned(await h.invoke(request(b, "count", { sessionId: s }))).resultJson).annotations.n as number;
    expect(await n("kept")).toBe(1);
    expect(await n("(chain c1)")).toBe(1);
    expect(await n("(chain c1)")).toBe(2);
    h.releaseSession("(chain c1)");
    h.releaseSession("never-used");
    // The released key held no LRU place: a third key does not evict "kept".
    expect(await n("(chain c2)")).toBe(1);
    expect(await n("kept")).toBe(2);
    expect(await n("(chain c1)")).toBe(1);
  });
});

describe("lifecycle", () => {
  test("unload releases the isolate; dispose closes the host", async () => {
    const { host: h } = host();
    const b = bundle(`act() { return { status: "continue" }; }`);
    await h.load(b);
    expect(Object.keys(h.stats())).toEqual([b.digest]);
    h.unload(b.digest);
    expect(h.stats()).toEqual({});
    await expect(h.invoke(request(b, "act"))).rejects.toMatchObject({ code: "UNKNOWN_BUNDLE" });
    h.dispose();
    await expect(h.load(b)).rejects.toMatchObject({ code: "SANDBOX_CLOSED" });
  });

  test("stats count calls and report heap use", async () => {
    const { host: h } = host();
    const b = bundle(`act() { return { status: "continue" }; }`);
    await h.load(b);
    await h.invoke(request(b, "act"));
    await h.invoke(request(b, "act"));
    const s = h.stats()[b.digest]!;
    expect(s.calls).toBe(2);
    expect(s.recreated).toBe(0);
    expect(s.heapUsedBytes).toBeGreaterThan(0);
  });

  test("an isolate keeps nothing of the inputs of finished calls outside its heap (long and non-Latin-1 inputs included)", async () => {
    const { host: h } = host();
    // Echoes the input back, so the pieces the input crossed in must join to exactly the text sent.
    const b = bundle(`act(input) { return { status: "modify", modified_context: input.context }; },
      async later(input) { await null; return { status: "modify", modified_context: input.context }; }`);
    await h.load(b);
    // Long enough that isolated-vm would hand it over as an external string (1024 bytes or more),
    // with a two-byte character and a surrogate pair placed across the 511-character piece seams.
    const context = { text: "x".repeat(500) + "é€😀".repeat(400) + "y".repeat(3000) };
    const input = { context, constitution: {}, event: {}, chain_state: {} };
    const first = returned(await h.invoke(request(b, "act", { input })));
    expect(JSON.parse(first.resultJson).modified_context).toEqual(context);
    // The long reply leaves the isolate in pieces too, from the sync and the async path.
    const settled = returned(await h.invoke(request(b, "later", { input: { context, constitution: {}, event: {}, chain_state: {} } })));
    expect(JSON.parse(settled.resultJson).modified_context).toEqual(context);
    // The bundle's code and the prelude source are kept outside the heap from the start.
    const after1 = h.stats()[b.digest]!.externalBytes;
    const calls = 300;
    for (let i = 1; i < calls; i++) returned(await h.invoke(request(b, "act", { input })));
    const s = h.stats()[b.digest]!;
    expect(s.calls).toBe(calls + 1);
    // Each input is ≈ 8 KB as UTF-16: kept until a full GC, 299 more would add ≈ 2.4 MB.
    expect(s.externalBytes - after1).toBeLessThan(64 * 1024);
  });
});

describe("joinPieces (replies out of the isolate)", () => {
  test("joins pieces in order and refuses anything else", () => {
    expect(joinPieces("R2:{}", 4)).toBe("R2:{}");
    expect(joinPieces({ n: 3, 0: "R2:", 1: "{}", 2: "{}" }, 4)).toBe("R2:{}{}");
    expect(joinPieces({ n: 5, 0: "a", 1: "b", 2: "c", 3: "d", 4: "e" }, 4)).toBeUndefined(); // more pieces than a reply can have
    expect(joinPieces({ n: 2, 0: "a", 1: 7 }, 4)).toBeUndefined();
    expect(joinPieces({ n: 2, 0: "a" }, 4)).toBeUndefined();
    expect(joinPieces({ n: 2, 0: "a", 1: "x".repeat(CROSSING_PIECE_CHARS + 1) }, 4)).toBeUndefined();
    expect(joinPieces({ n: 1.5, 0: "a" }, 4)).toBeUndefined();
    expect(joinPieces(42, 4)).toBeUndefined();
    expect(joinPieces(null, 4)).toBeUndefined();
  });
});

describe("depth bound inside the isolate (limits.jsonDepth)", () => {
  test("a result or chain_state deeper than the bound never leaves the isolate, even after bundle code replaced built-ins", async () => {
    const { host: h } = host({ jsonDepth: 8 });
    const b = bundle(
      `deep() { let d = {}; for (let i = 0; i < 2300; i++) d = { d }; return { status: "modify", modified_context: { d } }; },
       edge() { let d = 1; for (let i = 0; i < 7; i++) d = [d]; // annotations: 8 levels, the bound
       return { status: "continue", annotations: { d } }; },
       state(input) { let d = {}; for (let i = 0; i < 8; i++) d = { d }; input.chain_state.d = d; return { status: "continue" }; }`,
      // Top-level code runs before the built-ins are frozen: the scanner must not depend on them.
      { prefix: `String.prototype.charCodeAt = () => 0; String.prototype.indexOf = () => -1; Array.prototype.push = () => 0;` },
    );
    await h.load(b);
    expect(await h.invoke(request(b, "deep"))).toMatchObject({ kind: "invalid", message: "result nests deeper than 8 levels below its fields (limits.json_depth)" });
    expect((await h.invoke(request(b, "edge"))).kind).toBe("returned");
    expect(await h.invoke(request(b, "state"))).toMatchObject({ kind: "invalid", message: "chain_state nests deeper than 8 levels (limits.json_depth)" });
  });

  test("brackets inside strings count towards no depth: a shallow result full of them leaves the isolate, a deep one does not", async () => {
    const { host: h } = host({ jsonDepth: 4 });
    // More "{" and "[" characters than the bound (so the isolate scans instead of trusting the count).
    const b = bundle(
      `shallow() { return { status: "continue", annotations: { s: "[[[[[[{{{{{{", t: ["]]]]", "{{{{"] } }; },
       deep() { return { status: "continue", annotations: { d: [[[[["[[[["]]]]] } }; }`,
      { prefix: `String.prototype.indexOf = () => -1;` },
    );
    await h.load(b);
    expect(await h.invoke(request(b, "shallow"))).toMatchObject({ kind: "returned" });
    expect(await h.invoke(request(b, "deep"))).toMatchObject({ kind: "invalid", message: "result nests deeper than 4 levels below its fields (limits.json_depth)" });
  });

  test("vcp.log fields deeper than the bound are replaced in the guest", async () => {
    const { host: h, logs } = host({ jsonDepth: 4 });
    const b = bundle(`act() { vcp.log("info", "deep", { a: [[[[1]]]] }); vcp.log("info", "ok", { a: [[1]] }); return { status: "continue" }; }`);
    await h.load(b);
    await h.invoke(request(b, "act"));
    expect(logs.map((l) => l.fields)).toEqual([{ _too_deep: true }, { a: [[1]] }]);
  });

  test("jsonDepth outside 2..256 is INVALID_CONFIG", () => {
    expect(() => host({ jsonDepth: 5000 })).toThrowError(expect.objectContaining({ code: "INVALID_CONFIG" }));
  });
});
