/* corpus {"id":"microtask-storm","category":"resource-exhaustion","title":"self-rescheduling promise chain never drains the microtask queue","hook":{"type":"pre_inject","timeout_ms":200,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"timeout","status":"continue","error_matches":null,"annotations":null,"recycled":"isolate"}} */
function storm() {
  return Promise.resolve().then(storm);
}
export function action(input) {
  storm();
  return new Promise(() => {});
}
