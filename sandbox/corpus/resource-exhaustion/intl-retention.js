/* corpus {"id":"intl-retention","category":"resource-exhaustion","title":"retain 200,000 Intl.Collator objects: ICU memory outside the V8 heap is not counted by memoryLimit, so Intl is absent","hook":{"type":"pre_inject","timeout_ms":5000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"error","status":"continue","error_matches":"Intl is not defined","annotations":null,"recycled":"none"}} */
// Each Intl.Collator holds ICU state in native memory that isolated-vm does not account for; a
// 15 MiB isolate retained ~243 MB this way. The sandbox therefore offers no Intl at all.
const kept = [];
export function action(input) {
  for (let i = 0; i < 200000; i++) kept.push(new Intl.Collator("en", { sensitivity: "base" }));
  return { status: "continue", annotations: { kept: kept.length } };
}
