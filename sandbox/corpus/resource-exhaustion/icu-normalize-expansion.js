/* corpus {"id":"icu-normalize-expansion","category":"resource-exhaustion","title":"NFKD-normalize 8 Mi copies of U+FDFA (18x expansion in ICU, outside the isolate's memory limit and deaf to termination): refused before ICU runs","hook":{"type":"pre_inject","timeout_ms":2000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"error","status":"continue","error_matches":"String\\.prototype\\.normalize: a string of 8388608 characters exceeds the sandbox limit","annotations":null,"max_duration_ms":1000,"recycled":"none"}} */
// One character of the input becomes 18 in the output: ICU would build a 151 M-character result in
// native memory (≈ 600 MB of host RSS from a 64 MiB isolate) before V8 could refuse it.
export function action(input) {
  const s = String.fromCharCode(0xfdfa).repeat(2 ** 23);
  return { status: "continue", annotations: { length: s.normalize("NFKD").length } };
}
