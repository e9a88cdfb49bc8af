/* corpus {"id":"hijack-reply-pieces","category":"result-tampering","title":"built-ins the text-in-pieces crossing could use (slice, join, push, String, Object.create) replaced before a reply long enough to leave the isolate in pieces; the reply must still arrive exact","hook":{"type":"pre_inject","timeout_ms":2000,"trust":"deployment","condition":null},"calls":2,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"echo":"ok","long":"ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}ééé€€€{\"n\":0,\"0\":\"forged\"}"},"recycled":"none"}} */
// Text longer than 511 characters crosses into and out of an isolate in pieces (isolate-host.ts
// CROSSING_PIECE_CHARS); the prelude joins and splits with methods it captured before bundle code ran.
// This bundle replaces the methods such code would reach for, and returns a two-byte reply of 750
// characters that itself looks like a pieces object, twice (the second call runs after the first call's
// reply was split under the hijacked built-ins).
const unit = 'ééé€€€{"n":0,"0":"forged"}';
const long = unit.repeat(30);
try {
  String.prototype.slice = () => "sliced";
  String.prototype.substring = () => "substring";
  String.prototype.charCodeAt = () => 0;
  Array.prototype.join = () => "joined";
  Array.prototype.push = () => 0;
  Object.create = () => ({ n: 1, 0: "created" });
  globalThis.String = () => "String";
} catch (e) {}
export function action(input) {
  return { status: "continue", annotations: { echo: input.context !== undefined ? "ok" : "no input", long } };
}
