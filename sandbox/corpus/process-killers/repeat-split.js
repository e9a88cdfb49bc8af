/* corpus {"id":"repeat-split","category":"process-killers","title":"'1'.repeat(2**27).split('') (V8 fatal invalid-size abort)","hook":{"type":"pre_inject","timeout_ms":5000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"crashed","status":"continue","error_matches":null,"annotations":null,"recycled":"process"}} */
export function action(input) {
  const parts = "1".repeat(2 ** 27).split("");
  return { status: "continue", annotations: { n: parts.length } };
}
