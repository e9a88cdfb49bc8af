/* corpus {"id":"host-callback-errors","category":"escape-probes","title":"errors thrown by vcp.* host callbacks are guest-realm values without host stacks","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"escaped":[],"host_paths":[]},"recycled":"none"}} */
// vm2 #32: an exception thrown by a host function is a host object; e.constructor.constructor is
// the host Function. Provoke errors from every capability with hostile arguments.
export function action(input) {
  const hostile = [
    [Symbol("s")],
    [{ toString() { throw new RangeError("guest"); } }],
    [new Proxy({}, { get() { throw new TypeError("proxy"); } })],
    ["info", "m", { get a() { throw new Error("getter"); } }],
    [1n],
    ["x".repeat(1 << 20), "y".repeat(1 << 20)],
  ];
  const escaped = [];
  const hostPaths = [];
  for (const k of Object.keys(vcp)) {
    for (const args of hostile) {
      try {
        vcp[k](...args);
      } catch (e) {
        try {
          if (e !== null && (typeof e === "object" || typeof e === "function")) {
            const F = e.constructor && e.constructor.constructor;
            const r = typeof F === "function" ? F("return typeof process")() : "undefined";
            if (r !== "undefined") escaped.push(k + ":" + r);
            if (!(e instanceof Error) && typeof e.stack === "string") escaped.push(k + ":foreign-error");
            const text = String(e.stack || "") + String(e.message || "");
            if (/\/work\/|node_modules|file:\/\/|\.ts:\d|\/src\//.test(text)) hostPaths.push(k);
          }
        } catch (e2) {}
      }
    }
  }
  return { status: "continue", annotations: { escaped, host_paths: [...new Set(hostPaths)] } };
}
