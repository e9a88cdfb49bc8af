/* corpus {"id":"log-flood","category":"exfiltration","title":"vcp.log flood (20k lines of 64 KiB with secret-looking fields) is rate- and size-limited without failing the hook","hook":{"type":"pre_inject","timeout_ms":30000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"done":true},"recycled":"none","max_fire_ms":8000}} */
// 20k calls with 128 KiB of arguments each take ≈ 0.6 s of CPU. The budget is the maximum so that the verdict is
// the limiter's, not the machine's load (with 3 s it timed out on a loaded 2-core machine); max_fire_ms keeps
// the old cap on the time to regain control.
export function action(input) {
  const big = "z".repeat(64 * 1024);
  let threw = 0;
  for (let i = 0; i < 20000; i++) {
    try {
      vcp.log("info", big, { i, authorization: "Bearer sk-live-secret", password: "hunter2", blob: big });
    } catch (e) {
      threw++;
    }
  }
  return { status: "continue", annotations: { done: true, threw } };
}
