/* corpus {"id":"typed-array-copy","category":"process-killers","title":"copy a 40 MiB typed array into a plain Array (isolated-vm issue #527 reported a heap OOM abort; measured: the memory limit catches it)","hook":{"type":"pre_inject","timeout_ms":30000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"error","status":"continue","error_matches":"isolate memory limit exceeded","annotations":null,"recycled":"isolate","max_fire_ms":15000}} */
// Budget: the maximum, so that the memory limit, not the machine's load, decides (corpus README, "Verdicts that do not
// depend on the machine's load"); max_fire_ms keeps the old cap on the time to regain control.
export function action(input) {
  const bytes = new Uint8Array(40 * 1024 * 1024);
  const view = new Array(bytes.length);
  for (let i = view.length - 1; i >= 0; i--) view[i] = bytes[i] + 0.5;
  return { status: "continue", annotations: { n: view.length } };
}
