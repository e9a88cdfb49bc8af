/* corpus {"id":"log-flood","category":"exfiltration","title":"vcp.log flood (20k lines of 64 KiB with secret-looking fields) is rate- and size-limited without failing the hook","hook":{"type":"pre_inject","timeout_ms":3000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"done":true},"recycled":"none"}} */
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
