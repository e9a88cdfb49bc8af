/* corpus {"id":"array-prototype-map","category":"cross-call","title":"call 1 replaces Array.prototype.map, push and Symbol.iterator; call 2 finds the built-ins intact","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":2,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"call":2,"map":[2,4],"push":3,"spread":[1,2]},"recycled":"none"}} */
let call = 0;
export function action(input) {
  call++;
  if (call === 1) {
    try { Array.prototype.map = function () { return ["pwned"]; }; } catch (e) {}
    try { Array.prototype.push = function () { return -1; }; } catch (e) {}
    try { Array.prototype[Symbol.iterator] = function* () { yield "pwned"; }; } catch (e) {}
    try { Object.setPrototypeOf(Array.prototype, { injected: true }); } catch (e) {}
    return { status: "continue" };
  }
  const a = [1, 2];
  return { status: "continue", annotations: { call, map: a.map((x) => x * 2), push: [1, 2].push(3), spread: [...a] } };
}
