/* corpus {"id":"stack-trace-hook-loop","category":"escape-probes","title":"top-level Error.prepareStackTrace that loops forever, then the action throws (the runtime must not format the stack outside the timeout)","hook":{"type":"pre_inject","timeout_ms":300,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"timeout","status":"continue","error_matches":null,"annotations":null,"recycled":"isolate"}} */
try {
  Error.prepareStackTrace = function () {
    for (;;) {}
  };
} catch (e) {}
export function action(input) {
  throw new Error("boom");
}
