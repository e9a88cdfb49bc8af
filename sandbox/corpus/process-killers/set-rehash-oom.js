/* corpus {"id":"set-rehash-oom","category":"process-killers","title":"new Set(Array(1e8).keys()): one hash-table rehash larger than the heap (V8 fatal CALL_AND_RETRY_LAST heap OOM, not a catchable limit)","hook":{"type":"pre_inject","timeout_ms":5000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"crashed","status":"continue","error_matches":null,"annotations":null,"recycled":"process"}} */
export function action(input) {
  const s = new Set(Array(1e8).keys());
  return { status: "continue", annotations: { n: s.size } };
}
