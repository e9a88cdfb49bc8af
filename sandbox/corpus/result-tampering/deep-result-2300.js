/* corpus {"id":"deep-result-2300","category":"result-tampering","title":"modified_context nested 2,300 objects deep: serializes in the isolate, but no structured clone from the worker can carry it","hook":{"type":"pre_inject","timeout_ms":2000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"invalid_result","status":"continue","error_matches":"nests deeper than 64 levels","annotations":null,"recycled":"none"}} */
// Shallow enough for JSON.stringify inside the isolate and JSON.parse in the worker, deep enough that
// the reply could not be deserialized by the sandbox host: before the depth bound the chain never
// settled, the watchdog killed the host twice, and the bundle was never quarantined.
export function action(input) {
  let deep = { leaf: true };
  for (let i = 0; i < 2300; i++) deep = { next: deep };
  return { status: "modify", modified_context: { ...input.context, deep } };
}
