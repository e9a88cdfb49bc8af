/* corpus {"id":"wasm-memory-growth","category":"resource-exhaustion","title":"looks for WebAssembly anywhere and grows a Memory to 4 GiB (escapes the heap limit) if found","hook":{"type":"pre_inject","timeout_ms":2000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"wasm":"undefined","grown_pages":0},"recycled":"none"}} */
export function action(input) {
  let W;
  try {
    W = globalThis.WebAssembly || Function("return typeof WebAssembly === 'undefined' ? undefined : WebAssembly")();
  } catch (e) {
    W = undefined;
  }
  let grown = 0;
  if (W && W.Memory) {
    const mem = new W.Memory({ initial: 1, maximum: 65536 });
    while (grown < 65535) {
      mem.grow(1024);
      grown += 1024;
    }
  }
  return { status: "continue", annotations: { wasm: typeof W, grown_pages: grown } };
}
