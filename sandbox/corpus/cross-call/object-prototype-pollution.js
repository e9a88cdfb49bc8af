/* corpus {"id":"object-prototype-pollution","category":"cross-call","title":"call 1 writes Object.prototype.polluted and redefines Object.prototype.toString; call 2 sees neither","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":2,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"call":2,"polluted":"undefined","to_string":"[object Object]"},"recycled":"none"}} */
let call = 0;
export function action(input) {
  call++;
  if (call === 1) {
    try { Object.prototype.polluted = "yes"; } catch (e) {}
    try { Object.defineProperty(Object.prototype, "polluted", { value: "yes", configurable: true }); } catch (e) {}
    try { Object.prototype.toString = () => "pwned"; } catch (e) {}
    try { ({}).__proto__.polluted = "yes"; } catch (e) {}
    return { status: "continue" };
  }
  return { status: "continue", annotations: { call, polluted: typeof ({}).polluted, to_string: String({}) } };
}
