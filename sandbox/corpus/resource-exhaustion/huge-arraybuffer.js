/* corpus {"id":"huge-arraybuffer","category":"resource-exhaustion","title":"one 4 GiB ArrayBuffer (external memory, outside the V8 heap)","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"error","status":"continue","error_matches":"Array buffer allocation failed","annotations":null,"recycled":"none"}} */
export function action(input) {
  const buf = new ArrayBuffer(2 ** 32);
  new Uint8Array(buf).fill(1);
  return { status: "continue", annotations: { bytes: buf.byteLength } };
}
