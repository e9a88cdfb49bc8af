/* corpus {"id":"node-globals","category":"escape-probes","title":"Node.js and CommonJS names (process, require, module, Buffer, global, __dirname, timers) are absent","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"present":[],"checked":17},"recycled":"none"}} */
export function action(input) {
  const names = [
    "process", "require", "module", "exports", "Buffer", "global", "__dirname", "__filename",
    "setTimeout", "setInterval", "setImmediate", "clearTimeout", "queueMicrotask", "structuredClone",
    "TextEncoder", "URL", "ivm",
  ];
  const present = [];
  for (const n of names) {
    let t;
    try {
      t = Function("return typeof " + n)();
    } catch (e) {
      t = "undefined";
    }
    if (t !== "undefined" || Object.prototype.hasOwnProperty.call(globalThis, n)) present.push(n);
  }
  return { status: "continue", annotations: { present, checked: names.length } };
}
