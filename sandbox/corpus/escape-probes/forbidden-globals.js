/* corpus {"id":"forbidden-globals","category":"escape-probes","title":"WebAssembly, SharedArrayBuffer, Atomics, FinalizationRegistry, WeakRef, fetch, performance are absent however they are looked up","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"reachable":[],"checked":8},"recycled":"none"}} */
export function action(input) {
  const names = ["WebAssembly", "SharedArrayBuffer", "Atomics", "FinalizationRegistry", "WeakRef", "fetch", "performance", "XMLHttpRequest"];
  const reachable = [];
  for (const n of names) {
    const ways = [];
    try { if (globalThis[n] !== undefined) ways.push("global"); } catch (e) {}
    try { if (Reflect.getOwnPropertyDescriptor(globalThis, n)) ways.push("descriptor"); } catch (e) {}
    try { if (Function("return typeof " + n)() !== "undefined") ways.push("function"); } catch (e) {}
    try { if ((0, eval)("typeof " + n) !== "undefined") ways.push("eval"); } catch (e) {}
    if (ways.length) reachable.push(n + ":" + ways.join(","));
  }
  // A SharedArrayBuffer is also reachable from a shared WebAssembly.Memory; a growable SAB from a
  // typed array's buffer constructor.
  try {
    const SAB = new Uint8Array(1).buffer.constructor;
    if (SAB.name !== "ArrayBuffer") reachable.push("buffer.constructor:" + SAB.name);
  } catch (e) {}
  return { status: "continue", annotations: { reachable, checked: names.length } };
}
