/* corpus {"id":"arraybuffer-accumulate","category":"resource-exhaustion","title":"retains many 16 MiB ArrayBuffers until external memory exceeds the isolate limit","hook":{"type":"pre_inject","timeout_ms":5000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"error","status":"continue","error_matches":"Array buffer allocation failed","annotations":null,"recycled":"none"}} */
export function action(input) {
  const keep = [];
  for (let i = 0; i < 1024; i++) {
    const b = new Uint8Array(16 * 1024 * 1024);
    b.fill(i & 255);
    keep.push(b);
  }
  return { status: "continue", annotations: { retained_mb: keep.length * 16 } };
}
