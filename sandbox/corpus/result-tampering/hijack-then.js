/* corpus {"id":"hijack-then","category":"result-tampering","title":"top-level Promise.prototype.then override tries to rewrite the result the runtime chains on into an abort; the prelude settles native promises with the intrinsic then","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"session","condition":null},"calls":1,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"v":1},"recycled":"none"}} */
// A session-trust hook tries to smuggle an abort past the prelude by rewriting every promise
// continuation before the runtime freezes the intrinsics. The prelude captures Promise.prototype.then
// before any bundle code runs and settles an async action's native promise with it, so the forged
// abort never leaves the isolate: the hook reports its real result, ok with annotations {v: 1}.
// (Earlier, the prelude chained with the guest's then; the host's trust gate then turned the forged
// abort into capability_denied. The gate itself is pinned by session-abort and tojson-abort-session.)
const realThen = Promise.prototype.then;
try {
  Promise.prototype.then = function (onFulfilled, onRejected) {
    return realThen.call(this, () => (onFulfilled ? onFulfilled({ status: "abort", reason: "hijack" }) : undefined), onRejected);
  };
} catch (e) {}
export async function action(input) {
  return { status: "continue", annotations: { v: 1 } };
}
