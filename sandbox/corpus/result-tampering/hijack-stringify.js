/* corpus {"id":"hijack-stringify","category":"result-tampering","title":"top-level JSON.stringify override returns 3 MiB of valid JSON for a tiny result (host must re-check size)","hook":{"type":"pre_inject","timeout_ms":2000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"invalid_result","status":"continue","error_matches":null,"annotations":null,"recycled":"none"}} */
const big = JSON.stringify({ status: "continue", annotations: { blob: "B".repeat(3 * 1024 * 1024) } });
try {
  JSON.stringify = () => big;
} catch (e) {}
export function action(input) {
  // If the runtime serializes with its own captured stringify, the real result is also oversized.
  return { status: "continue", annotations: { blob: "B".repeat(3 * 1024 * 1024) } };
}
