import { describe, expect, test, vi } from "vitest";
import { GUEST_GLOBAL_ALLOWLIST } from "../../../src/sandbox-host/prelude.js";
import { annotations, bundle, request, useHosts } from "./helpers.js";

const host = useHosts();

const EXPECTED_GLOBALS = [
  "AggregateError", "Array", "ArrayBuffer", "AsyncDisposableStack", "BigInt", "BigInt64Array", "BigUint64Array",
  "Boolean", "DataView", "Date", "DisposableStack", "Error", "EvalError", "Float16Array", "Float32Array",
  "Float64Array", "Function", "Infinity", "Int16Array", "Int32Array", "Int8Array", "Iterator", "JSON",
  "Map", "Math", "NaN", "Number", "Object", "Promise", "Proxy", "RangeError", "ReferenceError", "Reflect",
  "RegExp", "Set", "String", "SuppressedError", "Symbol", "SyntaxError", "TypeError", "URIError", "Uint16Array",
  "Uint32Array", "Uint8Array", "Uint8ClampedArray", "WeakMap", "WeakSet", "decodeURI", "decodeURIComponent",
  "encodeURI", "encodeURIComponent", "escape", "eval", "globalThis", "isFinite", "isNaN", "parseFloat",
  "parseInt", "undefined", "unescape", "vcp",
];

describe("guest global", () => {
  test("is exactly the ECMAScript allowlist plus vcp, at top level and during a call", async () => {
    const { host: h } = host();
    const b = bundle(`act() { return { status: "continue", annotations: { top: TOP, call: Reflect.ownKeys(globalThis).map(String).sort() } }; }`, {
      prefix: `var TOP_; Object.defineProperty(globalThis, "TOP", { value: Reflect.ownKeys(globalThis).map(String).filter((k) => k !== "TOP" && k !== "TOP_" && k !== "__vcp_bundle").sort() });`,
    });
    await h.load(b);
    const a = annotations(await h.invoke(request(b, "act")));
    const ownCall = (a.call as string[]).filter((k) => k !== "TOP" && k !== "TOP_");
    expect(ownCall).toEqual(EXPECTED_GLOBALS);
    expect(a.top).toEqual(EXPECTED_GLOBALS);
    // Every expected name except vcp comes from the exported allowlist.
    expect([...GUEST_GLOBAL_ALLOWLIST, "vcp"].sort()).toEqual(EXPECTED_GLOBALS);
  });

  test("dangerous globals are absent", async () => {
    const { host: h } = host();
    const names = ["WebAssembly", "SharedArrayBuffer", "Atomics", "FinalizationRegistry", "WeakRef", "console", "require", "process", "fetch", "setTimeout", "setInterval", "queueMicrotask", "structuredClone"];
    const b = bundle(`act() { return { status: "continue", annotations: { present: ${JSON.stringify(names)}.filter((n) => n in globalThis || typeof globalThis[n] !== "undefined") } }; }`);
    await h.load(b);
    expect(annotations(await h.invoke(request(b, "act"))).present).toEqual([]);
  });
});

describe("prelude internals are unreachable", () => {
  test("stack-frame APIs and .caller do not expose prelude functions or host callbacks", async () => {
    const { host: h } = host();
    // Sloppy bundle code installs a structured stack hook before the freeze and walks every frame.
    const b = bundle(
      `act: function act() {
        const found = [];
        const frames = new Error("probe").stack;
        if (Array.isArray(frames)) {
          for (const f of frames) {
            const fn = f.getFunction(), self = f.getThis();
            if (fn !== undefined && fn !== act) found.push("function:" + String(fn).slice(0, 40));
            if (self !== undefined && self !== null && self !== globalThis) found.push("this:" + typeof self);
          }
        }
        if (act.caller !== null) found.push("caller:" + String(act.caller).slice(0, 40));
        let logCaller = "none";
        try { logCaller = String(vcp.log.caller); } catch (e) { logCaller = e.constructor.name; }
        return { status: "continue", annotations: { frames: Array.isArray(frames) ? frames.length : -1, found, logCaller } };
      }`,
      { prefix: `Error.prepareStackTrace = (e, frames) => frames;` },
    );
    await h.load(b);
    const a = annotations(await h.invoke(request(b, "act")));
    expect(a.frames).toBeGreaterThan(1);
    expect(a.found).toEqual([]);
    expect(a.logCaller).toBe("TypeError");
  });
});

describe("vcp capabilities", () => {
  const probe = `act() {
    const keys = Object.keys(vcp).sort();
    return { status: "continue", annotations: {
      keys, frozen: Object.isFrozen(vcp), hasFetch: "fetch" in vcp,
      ctorIsGuestFunction: keys.every((k) => vcp[k].constructor === Function && Object.getPrototypeOf(vcp[k]) === Function.prototype),
      cannotReplace: (() => { try { vcp.log = null; } catch {} return typeof vcp.log; })(),
      cannotRedefine: (() => { try { globalThis.vcp = {}; } catch {} return Object.keys(vcp).length === keys.length; })(),
      sha: vcp.sha256("abc"),
      nowInt: Number.isInteger(vcp.now()),
    } };
  }`;
  test.each([
    ["system", ["fetch", "log", "now", "sha256"], true],
    ["deployment", ["log", "now", "sha256"], false],
    ["session", ["log", "now", "sha256"], false],
  ] as const)("%s trust sees %j", async (trust, keys, hasFetch) => {
    const { host: h } = host();
    const b = bundle(probe, { trust });
    await h.load(b);
    expect(annotations(await h.invoke(request(b, "act")))).toEqual({
      keys,
      frozen: true,
      hasFetch,
      ctorIsGuestFunction: true,
      cannotReplace: "function",
      cannotRedefine: true,
      sha: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
      nowInt: true,
    });
  });

  test("fetch refuses LLM hosts (even allowlisted) and non-allowlisted hosts before any I/O", async () => {
    const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async () => {
      throw new Error("network must not be used");
    });
    const { host: h } = host({}, { allowHosts: ["api.example.com", "api.openai.com"] });
    const b = bundle(
      `async act() {
        const urls = ["https://api.openai.com/v1/chat/completions", "https://API.Anthropic.com./v1/messages",
          "https://eu.api.openai.com/x", "https://evil.example.org/", "ftp://api.example.com/", "https://user:pw@api.example.com/", "not a url"];
        const out = [];
        for (const u of urls) { try { await vcp.fetch(u); out.push("allowed"); } catch (e) { out.push(e instanceof TypeError ? e.message : "other"); } }
        return { status: "continue", annotations: { out } };
      }`,
      { trust: "system" },
    );
    await h.load(b);
    const out = annotations(await h.invoke(request(b, "act"))).out as string[];
    expect(out[0]).toMatch(/api\.openai\.com is an LLM endpoint and is always refused/);
    expect(out[1]).toMatch(/api\.anthropic\.com is an LLM endpoint/);
    expect(out[2]).toMatch(/eu\.api\.openai\.com is an LLM endpoint/);
    expect(out[3]).toMatch(/evil\.example\.org is not on the allowlist/);
    expect(out[4]).toMatch(/scheme ftp: is not allowed/);
    expect(out[5]).toMatch(/credentials/);
    expect(out[6]).toMatch(/invalid URL/);
    expect(spy).not.toHaveBeenCalled();
  });

  test("fetch to an allowlisted host delivers {status, headers, body} into the guest (fetch mocked)", async () => {
    const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("pong", { status: 201, headers: { "x-a": "1" } }));
    const { host: h } = host({}, { allowHosts: ["api.example.com"] });
    const b = bundle(
      `async act() {
        const r = await vcp.fetch("https://api.example.com/ping", { method: "POST", headers: { "content-type": "text/plain" }, body: "ping" });
        return { status: "continue", annotations: { status: r.status, a: r.headers["x-a"], body: r.body } };
      }`,
      { trust: "system" },
    );
    await h.load(b);
    expect(annotations(await h.invoke(request(b, "act")))).toEqual({ status: 201, a: "1", body: "pong" });
    expect(spy).toHaveBeenCalledTimes(1);
    const [url, init] = spy.mock.calls[0]!;
    expect(String(url)).toBe("https://api.example.com/ping");
    expect(init).toMatchObject({ method: "POST", body: "ping", redirect: "manual", headers: { "content-type": "text/plain" } });
  });

  test("log lines are tagged, truncated, redacted and rate-limited per call", async () => {
    const { host: h, logs } = host({ logLinesPerCall: 3, logLineBytes: 64 });
    const b = bundle(`act() {
      vcp.log("info", "0123456789".repeat(10), { n: 1, apiKey: "sk-123", ["__proto__"]: { polluted: 1 } });
      vcp.log("warn", "é".repeat(40));
      vcp.log("error", "third", { big: "x".repeat(100) });
      vcp.log("debug", "dropped");
      let bad = "none"; try { vcp.log("fatal", "x"); } catch (e) { bad = e.constructor.name; }
      return { status: "continue", annotations: { bad } };
    }`);
    await h.load(b);
    expect(annotations(await h.invoke(request(b, "act"))).bad).toBe("TypeError");
    expect(logs).toEqual([
      { bundle: b.name, hook: "test_hook", level: "info", message: "0123456789".repeat(6) + "0123", fields: { n: 1, apiKey: "[REDACTED]" } },
      { bundle: b.name, hook: "test_hook", level: "warn", message: "é".repeat(32) },
      { bundle: b.name, hook: "test_hook", level: "error", message: "third", fields: { _truncated: true } },
    ]);
    expect(Object.getPrototypeOf(logs[0]!.fields)).toBe(Object.prototype);
    // The budget is per call: the next call may log again.
    await h.invoke(request(b, "act"));
    expect(logs).toHaveLength(6);
  });

  test("log fields are JSON-copied: functions and cycles do not cross", async () => {
    const { host: h, logs } = host();
    const b = bundle(`act() { const c = {}; c.c = c; vcp.log("info", "a", { f() {}, k: 1 }); vcp.log("info", "b", c); return { status: "continue" }; }`);
    await h.load(b);
    await h.invoke(request(b, "act"));
    expect(logs.map((l) => l.fields)).toEqual([{ k: 1 }, { _unserializable: true }]);
  });

  test("sha256 refuses oversized input", async () => {
    const { host: h } = host();
    const b = bundle(`act() { try { vcp.sha256("x".repeat((1 << 20) + 1)); return { status: "continue" }; } catch (e) { return { status: "continue", annotations: { e: e.constructor.name } }; } }`);
    await h.load(b);
    expect(annotations(await h.invoke(request(b, "act"))).e).toBe("RangeError");
  });
});
