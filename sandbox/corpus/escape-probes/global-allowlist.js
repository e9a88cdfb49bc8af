/* corpus {"id":"global-allowlist","category":"escape-probes","title":"every own key of globalThis (and of its prototype chain) is an ECMAScript built-in or vcp","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"extra":["vcp"],"proto_extra":[]},"recycled":"none"}} */
// ECMA-262 (2025 + stage 4 in V8 13) and ECMA-402 globals, plus Annex B escape/unescape. The
// DESIGN §4.3 exclusions (WebAssembly, SharedArrayBuffer, Atomics, FinalizationRegistry, WeakRef)
// and every host or engine extra (console, ...) are deliberately NOT in this list.
const ES_GLOBALS = new Set([
  "globalThis", "Infinity", "NaN", "undefined", "eval", "isFinite", "isNaN", "parseFloat", "parseInt",
  "decodeURI", "decodeURIComponent", "encodeURI", "encodeURIComponent", "escape", "unescape",
  "AggregateError", "Array", "ArrayBuffer", "BigInt", "BigInt64Array", "BigUint64Array", "Boolean",
  "DataView", "Date", "Error", "EvalError", "Float16Array", "Float32Array", "Float64Array", "Function",
  "Int8Array", "Int16Array", "Int32Array", "Iterator", "Map", "Number", "Object", "Promise", "Proxy",
  "RangeError", "ReferenceError", "RegExp", "Set", "String", "Symbol", "SyntaxError", "TypeError",
  "Uint8Array", "Uint8ClampedArray", "Uint16Array", "Uint32Array", "URIError", "WeakMap", "WeakSet",
  "JSON", "Math", "Reflect", "Intl", "DisposableStack", "AsyncDisposableStack", "SuppressedError",
]);
const OBJECT_PROTO = new Set(Reflect.ownKeys(Object.prototype));

export function action(input) {
  const extra = Reflect.ownKeys(globalThis)
    .filter((k) => typeof k === "symbol" || !ES_GLOBALS.has(k))
    .map(String)
    .sort();
  const protoExtra = [];
  for (let p = Object.getPrototypeOf(globalThis); p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const k of Reflect.ownKeys(p)) if (!OBJECT_PROTO.has(k) && k !== "constructor") protoExtra.push(String(k));
  }
  return { status: "continue", annotations: { extra, proto_extra: protoExtra.sort() } };
}
