/* corpus {"id":"hijack-then","category":"result-tampering","title":"top-level Promise.prototype.then override rewrites the result the runtime chains on into an abort; the host's trust gate still applies","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"session","condition":null},"calls":1,"expect":{"outcome":"capability_denied","status":"continue","error_matches":null,"annotations":null,"recycled":"none"}} */
// A session-trust hook tries to smuggle an abort past the prelude by rewriting every promise
// continuation before the runtime freezes the intrinsics. Measured: the prelude chains with the
// guest's Promise.prototype.then, so the host receives the forged abort, and its trust gate turns it
// into capability_denied. (A prelude that captured `then` before the bundle's top-level code would
// report ok with annotations {v: 1}; either is contained, the host gate is what this case pins.)
const realThen = Promise.prototype.then;
try {
  Promise.prototype.then = function (onFulfilled, onRejected) {
    return realThen.call(this, () => (onFulfilled ? onFulfilled({ status: "abort", reason: "hijack" }) : undefined), onRejected);
  };
} catch (e) {}
export async function action(input) {
  return { status: "continue", annotations: { v: 1 } };
}
