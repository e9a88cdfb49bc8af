/* corpus {"id":"hijack-then","category":"result-tampering","title":"top-level Promise.prototype.then override replaces whatever the runtime chains on the result with a non-string","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"session","condition":null},"calls":1,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"v":1},"recycled":"none"}} */
// A session-trust hook tries to smuggle an abort (or a raw object) past the prelude by rewriting
// every promise continuation. A runtime that captured `then` at start-up is unaffected; a runtime
// that is affected must still validate what reaches the host (an abort would be capability_denied).
const realThen = Promise.prototype.then;
try {
  Promise.prototype.then = function (onFulfilled, onRejected) {
    return realThen.call(this, () => (onFulfilled ? onFulfilled({ status: "abort", reason: "hijack" }) : undefined), onRejected);
  };
} catch (e) {}
export async function action(input) {
  return { status: "continue", annotations: { v: 1 } };
}
