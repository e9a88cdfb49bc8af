/* corpus {"id":"resizable-arraybuffer","category":"resource-exhaustion","title":"resizable ArrayBuffers grown to 1 GiB in total (isolated-vm 7 does not count their backing stores against memoryLimit)","hook":{"type":"pre_inject","timeout_ms":5000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"error","status":"continue","error_matches":"Array buffer allocation failed|maxByteLength|resizable|isolate memory limit exceeded","annotations":null,"recycled":"none"}} */
// Measured against a bare isolated-vm 7.0.1 isolate (memoryLimit 64): eight 256 MiB resizable
// buffers were retained with externally_allocated_size 0 and the process RSS at 2.2 GB, while a
// plain `new ArrayBuffer(2 ** 28)` or `buf.transfer(2 ** 28)` is refused. The sandbox must refuse
// this growth (or kill the isolate) before it reaches 1 GiB; the attack stops at 1 GiB so that a
// vulnerable runtime fails this case without harming the machine.
export function action(input) {
  const keep = [];
  const chunk = 2 ** 28;
  for (let i = 0; i < 4; i++) {
    const buf = new ArrayBuffer(8, { maxByteLength: chunk });
    buf.resize(chunk);
    new Uint8Array(buf).fill(i + 1);
    keep.push(buf);
  }
  return { status: "continue", annotations: { retained_mb: (keep.length * chunk) / 2 ** 20 } };
}
