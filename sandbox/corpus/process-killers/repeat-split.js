/* corpus {"id":"repeat-split","category":"process-killers","title":"'1'.repeat(2**27).split('') (measured: the memory limit catches it before V8's invalid-size abort)","hook":{"type":"pre_inject","timeout_ms":5000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"error","status":"continue","error_matches":"isolate memory limit exceeded","annotations":null,"recycled":"isolate"}} */
export function action(input) {
  const parts = "1".repeat(2 ** 27).split("");
  return { status: "continue", annotations: { n: parts.length } };
}
