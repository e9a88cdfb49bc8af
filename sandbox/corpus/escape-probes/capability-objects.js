/* corpus {"id":"capability-objects","category":"escape-probes","title":"vcp is frozen, holds exactly log/now/sha256 at deployment trust, and its functions lead only to guest-realm constructors","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"keys":["log","now","sha256"],"frozen":true,"replaced":false,"escaped":[],"reference_like":[],"now_type":"number","sha256_type":"string"},"recycled":"none"}} */
// isolated-vm README: leaking a Reference/ExternalCopy/Callback to the guest is "usually trivial"
// to turn into a host escape. Look for their methods on every capability and its prototype chain.
const REF_METHODS = ["deref", "derefInto", "apply", "applySync", "applyIgnored", "applySyncPromise", "copy", "copyInto", "copySync", "get", "getSync", "set", "setSync", "release", "typeof"];

export function action(input) {
  const keys = Reflect.ownKeys(vcp).map(String).sort();
  const frozen = Object.isFrozen(vcp);
  let replaced = false;
  try { vcp.now = () => 0; } catch (e) {}
  try { delete vcp.log; } catch (e) {}
  try { Object.defineProperty(vcp, "extra", { value: 1 }); } catch (e) {}
  if (vcp.now() === 0 || !("log" in vcp) || "extra" in vcp) replaced = true;

  const escaped = [];
  const referenceLike = [];
  const objects = [vcp, ...Reflect.ownKeys(vcp).map((k) => vcp[k])];
  for (const o of objects) {
    for (let p = o; p; p = Object.getPrototypeOf(p)) {
      for (const m of REF_METHODS) {
        if (p !== Function.prototype && p !== Object.prototype && Object.prototype.hasOwnProperty.call(p, m)) referenceLike.push(m);
      }
      try {
        const F = p.constructor && p.constructor.constructor;
        if (typeof F === "function" && F("return typeof process")() !== "undefined") escaped.push(String(p.constructor.name));
      } catch (e) {}
    }
    try {
      if (typeof o === "function" && o.constructor("return typeof process")() !== "undefined") escaped.push("fn-ctor");
    } catch (e) {}
  }
  return {
    status: "continue",
    annotations: {
      keys, frozen, replaced, escaped, reference_like: [...new Set(referenceLike)],
      now_type: typeof vcp.now(), sha256_type: typeof vcp.sha256("abc"),
    },
  };
}
