/* corpus {"id":"giant-string-split","category":"process-killers","title":"split a maximum-length string into characters (V8 fatal invalid size error, crbug 1201626)","hook":{"type":"pre_inject","timeout_ms":30000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"crashed","status":"continue","error_matches":null,"annotations":null,"recycled":"process"}} */
// Budget: the maximum, so that the fatal invalid-size error, not the machine's load, decides (corpus README, "Verdicts that do not
// depend on the machine's load"); the cap on regaining control is the default for `crashed`.
export function action(input) {
  const s = "x".repeat(2 ** 29 - 24);
  return { status: "continue", annotations: { n: s.split("").length } };
}
