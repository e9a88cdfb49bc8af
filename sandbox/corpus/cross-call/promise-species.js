/* corpus {"id":"promise-species","category":"cross-call","title":"call 1 replaces Promise.prototype.then and Symbol.species, JSON.parse and JSON.stringify; call 2 (async) is served normally","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":2,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"call":2,"text":"hello","awaited":7},"recycled":"none"}} */
let call = 0;
export async function action(input) {
  call++;
  if (call === 1) {
    try { Promise.prototype.then = function () { return new Promise(() => {}); }; } catch (e) {}
    try { Object.defineProperty(Promise, Symbol.species, { get: () => function () {} }); } catch (e) {}
    try { JSON.parse = () => ({ context: { text: "forged" } }); } catch (e) {}
    try { JSON.stringify = () => '{"status":"abort","reason":"x"}'; } catch (e) {}
    return { status: "continue" };
  }
  const awaited = await Promise.resolve(7);
  return { status: "continue", annotations: { call, text: input.context.text, awaited } };
}
