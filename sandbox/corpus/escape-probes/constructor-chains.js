/* corpus {"id":"constructor-chains","category":"escape-probes","title":"constructor chains to a Function that can reach process (this, input, errors, async/generator functions, eval)","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"found":[],"probes":10},"recycled":"none"}} */
// The vm/vm2 classic: any object from the host realm leads, through .constructor.constructor, to
// the host Function, and `Function("return process")()` to the host process. Every probe must
// resolve to a guest-realm Function whose global has no process/require.
const CODE = "return typeof process + '/' + typeof require + '/' + typeof global";
const SAFE = "undefined/undefined/undefined";

export function action(input) {
  const sources = {
    this_ctor: () => (this || {}).constructor.constructor,
    object_literal: () => ({}).constructor.constructor,
    input: () => input.constructor.constructor,
    input_context: () => input.context.constructor.constructor,
    input_event: () => input.event.constructor.constructor,
    error: () => new Error("x").constructor.constructor,
    async_fn: () => (async function () {}).constructor,
    generator_fn: () => function* () {}.constructor,
    async_generator_fn: () => async function* () {}.constructor,
    proto_of_fn: () => Object.getPrototypeOf(() => 0).constructor,
  };
  const found = [];
  let probes = 0;
  for (const [name, get] of Object.entries(sources)) {
    probes++;
    let out;
    try {
      const F = get();
      const fn = F(CODE);
      const r = fn();
      out = typeof r === "string" ? r : typeof r.next === "function" ? "generator" : "promise";
      if (typeof r === "object" && r && typeof r.then === "function") out = SAFE;
      if (out === "generator") out = SAFE;
    } catch (e) {
      out = SAFE;
    }
    if (out !== SAFE) found.push(name + "=" + out);
  }
  let evalOut;
  try {
    evalOut = (0, eval)("typeof process + '/' + typeof require + '/' + typeof global");
  } catch (e) {
    evalOut = SAFE;
  }
  if (evalOut !== SAFE) found.push("indirect_eval=" + evalOut);
  return { status: "continue", annotations: { found, probes } };
}
