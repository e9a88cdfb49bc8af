/* corpus {"id":"huge-annotations","category":"resource-exhaustion","title":"900 KB of annotations in 40,000 keys, under the result cap: the audit log and the caller's result would carry all of it on every request","hook":{"type":"pre_inject","timeout_ms":30000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"ok","status":"modify","error_matches":null,"annotations":{"_truncated":true,"limit":65536,"cap":"per_hook"},"context":{"checked":"by-huge-annotations"},"recycled":"none","max_fire_ms":8000}} */
// Budget: the maximum, so that the annotation cap, not the machine's load, decides (corpus README, "Verdicts that do not
// depend on the machine's load"); max_fire_ms keeps the old cap on the time to regain control.
// The hook's decision (a modify) must stand: only its annotations are replaced by the marker, so
// whoever can inflate a hook's annotations cannot turn its decision into a failure.
export function action(input) {
  const annotations = {};
  for (let i = 0; i < 40000; i++) annotations["finding_" + i] = "pii";
  return { status: "modify", modified_context: { ...input.context, checked: "by-huge-annotations" }, annotations };
}
