/* corpus {"id":"set-rehash-oom","category":"process-killers","title":"new Set(Array(1e8).keys()): one hash-table rehash larger than the heap (V8 fatal CALL_AND_RETRY_LAST heap OOM, not a catchable limit)","hook":{"type":"pre_inject","timeout_ms":30000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"crashed","status":"continue","error_matches":null,"annotations":null,"recycled":"process"}} */
// Filling the Set up to the fatal rehash is ordinary, interruptible code (≈ 0.4 s of CPU): with 5 s of wall clock a
// loaded 2-core machine ended it first (`timeout`). The budget is the maximum so that the fatal OOM decides; the
// host then dies at once (no onCatastrophicError: src/sandbox-host/isolate-host.ts), whatever the load.
export function action(input) {
  const s = new Set(Array(1e8).keys());
  return { status: "continue", annotations: { n: s.size } };
}
