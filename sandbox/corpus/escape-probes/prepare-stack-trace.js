/* corpus {"id":"prepare-stack-trace","category":"escape-probes","title":"Error.prepareStackTrace CallSites (getThis/getFunction) from guest and host-callback frames reach no host object","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"escaped":[],"host_paths":false},"recycled":"none"}} */
// vm2 CVE-2022-36067 and gf3/sandbox#65: V8 calls Error.prepareStackTrace with CallSite objects;
// getThis()/getFunction() of a host frame hand out host objects. Installed at top level (before the
// runtime freezes intrinsics) and again inside the action.
const seen = [];
function hook(err, sites) {
  for (const s of sites) {
    try { seen.push({ t: s.getThis(), f: s.getFunction(), file: String(s.getFileName()) }); } catch (e) {}
  }
  return "stack";
}
try { Error.prepareStackTrace = hook; } catch (e) {}

function probe(obj) {
  if (obj === undefined || obj === null) return null;
  try {
    const F = obj.constructor && obj.constructor.constructor;
    if (typeof F !== "function") return null;
    const r = F("return typeof process")();
    return r === "undefined" ? null : r;
  } catch (e) {
    return null;
  }
}

export function action(input) {
  try { Error.prepareStackTrace = hook; } catch (e) {}
  try { Error.captureStackTrace && Error.captureStackTrace({}); } catch (e) {}
  try { new Error("guest").stack; } catch (e) {}
  // Errors raised by host callbacks: bad argument types and a throwing toString.
  for (const k of Object.keys(vcp)) {
    try { void vcp[k]({ toString() { throw new Error("x"); } }).stack; } catch (e) { try { void e.stack; } catch (e2) {} }
    try { void vcp[k](Symbol("s")); } catch (e) { try { void e.stack; } catch (e2) {} }
  }
  const escaped = [];
  for (const s of seen) {
    const a = probe(s.t);
    const b = probe(s.f);
    if (a) escaped.push("this:" + a);
    if (b) escaped.push("function:" + b);
  }
  const hostPaths = seen.some((s) => /\/work\/|node_modules|file:\/\/|\.ts\b|sandbox-host|\/src\//.test(s.file));
  return { status: "continue", annotations: { escaped, host_paths: hostPaths, frames: seen.length } };
}
