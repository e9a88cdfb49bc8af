/* corpus {"id":"array-fill-6e7","category":"process-killers","title":"new Array(6e7).fill() (isolated-vm issue #186 reported a fatal OOM; measured: the memory limit catches it)","hook":{"type":"pre_inject","timeout_ms":30000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"error","status":"continue","error_matches":"isolate memory limit exceeded","annotations":null,"recycled":"isolate"}} */
// Array#fill ignores termination, so the only thing that can stop it is the memory limit. Its budget is the
// maximum (30 s) so the memory limit always wins: with 5 s a busy 2-core CI machine ran past the budget first
// (7.7 s, outcome `timeout`), which made the asserted outcome depend on scheduling.
export function action(input) {
  const a = new Array(6e7).fill();
  return { status: "continue", annotations: { n: a.length } };
}
