/* corpus {"id":"typed-array-copy","category":"process-killers","title":"copy a 40 MiB typed array into a plain Array (isolated-vm issue #527: heap OOM abort below the limit)","hook":{"type":"pre_inject","timeout_ms":10000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"crashed","status":"continue","error_matches":null,"annotations":null,"recycled":"process"}} */
export function action(input) {
  const bytes = new Uint8Array(40 * 1024 * 1024);
  const view = new Array(bytes.length);
  for (let i = view.length - 1; i >= 0; i--) view[i] = bytes[i] + 0.5;
  return { status: "continue", annotations: { n: view.length } };
}
