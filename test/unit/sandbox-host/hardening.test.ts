import { describe, expect, test, vi } from "vitest";
import { annotations, bundle, request, useHosts } from "./helpers.js";

const host = useHosts();

describe("ArrayBuffer memory accounting", () => {
  test("resizable ArrayBuffers are refused (their backing store escapes memoryLimit)", async () => {
    const { host: h } = host();
    const b = bundle(`
      grow() {
        const keep = [];
        for (let i = 0; i < 4; i++) { const buf = new ArrayBuffer(8, { maxByteLength: 2 ** 28 }); buf.resize(2 ** 28); keep.push(buf); }
        return { status: "continue", annotations: { retained: keep.length } };
      },
      probe() {
        const r = {};
        const t = (k, f) => { try { r[k] = f(); } catch (e) { r[k] = e.name + ": " + e.message; } };
        t("small", () => new ArrayBuffer(8, { maxByteLength: 16 }).resizable);
        t("reflect", () => Reflect.construct(ArrayBuffer, [8, { maxByteLength: 16 }]).resizable);
        t("sub", () => { class B extends ArrayBuffer {} return new B(8, { maxByteLength: 16 }).resizable; });
        t("ctorChain", () => new (new Uint8Array(1).buffer.constructor)(8, { maxByteLength: 16 }).resizable);
        t("protoCtor", () => new ArrayBuffer.prototype.constructor(8, { maxByteLength: 16 }).resizable);
        t("resize", () => typeof ArrayBuffer.prototype.resize);
        return { status: "continue", annotations: r };
      }`);
    await h.load(b);
    const o = await h.invoke(request(b, "grow", { budgetMs: 5000 }));
    expect(o.kind).toBe("threw");
    expect((o as { message: string }).message).toMatch(/RangeError|maxByteLength/);
    expect((o as { message: string }).message).toMatch(/maxByteLength/);
    const a = annotations(await h.invoke(request(b, "probe")));
    for (const k of ["small", "reflect", "sub", "ctorChain", "protoCtor"]) expect(a[k], k).toMatch(/^RangeError: .*maxByteLength/);
    expect(a.resize).toBe("undefined");
  });

  test("the ArrayBuffer wrapper behaves like the built-in for fixed-length buffers", async () => {
    const { host: h } = host();
    const b = bundle(`act() {
      const buf = new ArrayBuffer(8);
      const u = new Uint8Array(buf); u[0] = 7;
      class Sub extends ArrayBuffer { tag() { return "sub"; } }
      const s = new Sub(4);
      let noNew; try { ArrayBuffer(1); noNew = "no error"; } catch (e) { noNew = e.name; }
      let neg; try { new ArrayBuffer(-1); neg = "no error"; } catch (e) { neg = e.name; }
      const moved = buf.transfer(16);
      return { status: "continue", annotations: {
        len: buf.byteLength, inst: buf instanceof ArrayBuffer, viewBuf: new Uint8Array(2).buffer instanceof ArrayBuffer,
        ctor: buf.constructor === ArrayBuffer && ArrayBuffer.prototype.constructor === ArrayBuffer,
        isView: ArrayBuffer.isView(u) && !ArrayBuffer.isView(buf), species: ArrayBuffer[Symbol.species] === ArrayBuffer,
        sub: s.tag() + ":" + (s instanceof ArrayBuffer) + ":" + s.byteLength, sliced: buf.slice !== undefined && moved.slice(0, 2).byteLength,
        noNew, neg, name: ArrayBuffer.name, length: ArrayBuffer.length, moved: moved.byteLength + ":" + new Uint8Array(moved)[0] + ":" + buf.detached,
        fixed: new ArrayBuffer(4).transferToFixedLength(8).byteLength, coerced: new ArrayBuffer({ valueOf() { return 3; } }).byteLength,
        resizable: new ArrayBuffer(2, {}).resizable,
      } };
    }`);
    await h.load(b);
    expect(annotations(await h.invoke(request(b, "act")))).toEqual({
      len: 0, // detached by transfer below
      inst: true,
      viewBuf: true,
      ctor: true,
      isView: true,
      species: true,
      sub: "sub:true:4",
      sliced: 2,
      noNew: "TypeError",
      neg: "RangeError",
      name: "ArrayBuffer",
      length: 1,
      moved: "16:7:true",
      fixed: 8,
      coerced: 3,
      resizable: false,
    });
  });

  test("large fixed-length buffers are counted by isolated-vm's allocator and refused", async () => {
    const { host: h } = host();
    const b = bundle(`
      big() { return { status: "continue", annotations: { n: new ArrayBuffer(2 ** 28).byteLength } }; },
      grow() { return { status: "continue", annotations: { n: new ArrayBuffer(8).transfer(2 ** 28).byteLength } }; },
      ok() { return { status: "continue" }; }`);
    await h.load(b);
    for (const name of ["big", "grow"]) {
      const o = await h.invoke(request(b, name));
      expect(o.kind, name).toBe("threw");
      expect((o as { message: string }).message, name).toMatch(/Array buffer allocation failed/);
    }
    expect((await h.invoke(request(b, "ok"))).kind).toBe("returned");
  });
});

describe("prelude robustness against bundle top-level code", () => {
  test("a replaced Promise.prototype.then cannot rewrite an async result", async () => {
    const { host: h } = host();
    const b = bundle(`async act() { return { status: "continue", annotations: { v: 1 } }; }`, {
      prefix: `const realThen = Promise.prototype.then;
        Promise.prototype.then = function (f, r) { return realThen.call(this, () => (f ? f({ status: "abort", reason: "hijack" }) : undefined), r); };`,
    });
    await h.load(b);
    const o = await h.invoke(request(b, "act"));
    expect(o.kind).toBe("returned");
    expect((o as { resultJson: string }).resultJson).toBe('{"status":"continue","annotations":{"v":1}}');
  });

  test("replaced built-ins, rebound globals and prototype traps do not change how the prelude works", async () => {
    const { host: h } = host();
    const b = bundle(
      `async act(input) { await null; input.chain_state.n = 1; return { status: "continue", annotations: { v: "é".repeat(3) } }; },
       sync() { return { status: "continue", annotations: { s: [1, 2].length } }; },
       pollute() { "use strict"; let failed = 0; for (const p of [[].__proto__, ({}).__proto__, (async () => {})().__proto__]) { try { p.polluted = 1; } catch { failed++; } } return { status: "continue", annotations: { failed } }; },
       check() { return { status: "continue", annotations: { a: typeof [].polluted, o: typeof ({}).polluted, p: typeof (async () => {})().polluted } }; }`,
      {
        prefix: `
        const RealObject = Object, RealArray = Array, RealPromise = Promise;
        JSON.stringify = () => '{"status":"abort","reason":"forged"}';
        JSON.parse = () => ({ forged: true });
        Object.hasOwn = () => false; Object.getPrototypeOf = () => null; Object.freeze = (o) => o; Object.defineProperty = (o) => o;
        Reflect.apply = () => "forged"; Reflect.ownKeys = () => []; Reflect.construct = () => ({});
        String.prototype.slice = () => "forged"; String.prototype.charCodeAt = () => 0;
        RealObject.prototype.value = "inherited"; RealObject.prototype.get = undefined;
        for (let i = 0; i < 200; i++) RealObject.defineProperty(RealArray.prototype, i, { set(v) {}, configurable: true });
        RealObject.defineProperty(RealPromise.prototype, "constructor", { value: function Evil() {}, writable: true, configurable: true });
        globalThis.Object = function FakeObject() {}; globalThis.Array = function FakeArray() {}; globalThis.Promise = function FakePromise() {};
        `,
      },
    );
    await h.load(b);
    const o = await h.invoke(request(b, "act", { input: { chain_state: {} } }));
    expect(o).toMatchObject({ kind: "returned", resultJson: '{"status":"continue","annotations":{"v":"ééé"}}', chainStateJson: '{"n":1}' });
    expect(annotations(await h.invoke(request(b, "sync")))).toEqual({ s: 2 });
    // The intrinsics were frozen although the bundle rebound their global names and trapped array writes.
    expect(annotations(await h.invoke(request(b, "pollute")))).toEqual({ failed: 3 });
    expect(annotations(await h.invoke(request(b, "check")))).toEqual({ a: "undefined", o: "undefined", p: "undefined" });
  });

  test("a settle handler kept from an earlier call cannot answer for a later call", async () => {
    const { host: h } = host();
    const b = bundle(`return (() => { let kept = null; return {
      first() { return { then(ok) { kept = ok; ok({ status: "continue", annotations: { call: 1 } }); } }; },
      second() { return { then() { kept({ status: "abort", reason: "replayed" }); } }; },
    }; })();`);
    await h.load(b);
    expect(annotations(await h.invoke(request(b, "first")))).toEqual({ call: 1 });
    const o = await h.invoke(request(b, "second", { budgetMs: 100 }));
    expect(o.kind).toBe("timeout");
  });
});

describe("host deadline of async work", () => {
  test("an isolate still running a delivery is detached, not disposed under it; the call times out on time", async () => {
    vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("pong"));
    const { host: h, logs } = host({}, { allowHosts: ["api.example.com"] });
    const b = bundle(
      `async slow() {
        await vcp.fetch("https://api.example.com/x");
        // BigInt power and decimal conversion do not observe termination: native code keeps running
        // on isolated-vm's thread pool well past the deadline.
        const n = (7n ** 2000000n).toString().length;
        vcp.log("info", "after " + n);
        return { status: "continue" };
      },
      ok() { vcp.log("info", "ok"); return { status: "continue" }; }`,
      { trust: "system" },
    );
    await h.load(b);
    const t0 = Date.now();
    const o = await h.invoke(request(b, "slow", { budgetMs: 300 }));
    expect(o.kind).toBe("timeout");
    expect(Date.now() - t0).toBeLessThan(1000);
    // The next call gets a fresh isolate at once, while the detached one finishes on the pool.
    expect((await h.invoke(request(b, "ok"))).kind).toBe("returned");
    expect(h.stats()[b.digest]!.recreated).toBe(1);
    await new Promise((r) => setTimeout(r, 2500));
    expect(logs.map((l) => l.message)).toEqual(["ok"]);
    expect((await h.invoke(request(b, "ok"))).kind).toBe("returned");
  }, 15_000);
  test("a detached run that ignores termination past runawayRunMs is reported so the process ends (onRunawayRun), naming its bundle", async () => {
    vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("pong"));
    const runaways: { name: string; digest: string }[] = [];
    const { host: h } = host({}, { allowHosts: ["api.example.com"], onRunawayRun: (b) => runaways.push(b), runawayRunMs: 200 });
    const b = bundle(
      `async slow() {
        await vcp.fetch("https://api.example.com/x");
        // Decimal conversion of a huge BigInt ignores termination for a second or more on the pool thread.
        const n = (7n ** 2000000n).toString().length;
        return { status: "continue", annotations: { n } };
      }`,
      { trust: "system", name: "runaway" },
    );
    await h.load(b);
    expect((await h.invoke(request(b, "slow", { budgetMs: 300 }))).kind).toBe("timeout");
    // Nothing in this process can stop that thread: the host is told to end the process.
    await vi.waitFor(() => expect(runaways).toEqual([{ name: "runaway", digest: b.digest }]), { timeout: 5_000, interval: 20 });
  }, 15_000);
});
