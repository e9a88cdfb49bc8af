/* corpus {"id":"array-fill-6e7","category":"process-killers","title":"new Array(6e7).fill() (isolated-vm issue #186: fatal OOM instead of a memory-limit error)","hook":{"type":"pre_inject","timeout_ms":5000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"crashed","status":"continue","error_matches":null,"annotations":null,"recycled":"process"}} */
export function action(input) {
  const a = new Array(6e7).fill();
  return { status: "continue", annotations: { n: a.length } };
}
