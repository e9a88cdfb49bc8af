/* corpus {"id":"array-fill-6e7","category":"process-killers","title":"new Array(6e7).fill() (isolated-vm issue #186 reported a fatal OOM; measured: the memory limit catches it)","hook":{"type":"pre_inject","timeout_ms":5000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"error","status":"continue","error_matches":"isolate memory limit exceeded","annotations":null,"recycled":"isolate"}} */
export function action(input) {
  const a = new Array(6e7).fill();
  return { status: "continue", annotations: { n: a.length } };
}
