/* corpus {"id":"clock-edge-counting","category":"exfiltration","title":"count loop iterations between clock edges to build a sub-microsecond timer: every clock is frozen for the whole call, so no edge is ever seen","hook":{"type":"pre_inject","timeout_ms":10000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"edges":{"date_now":0,"vcp_now":0,"new_date":0,"date_string":0,"after_await":0},"same_instant":true,"performance":"undefined","intrinsic_reachable":false},"recycled":"none"}} */
// With a ticking clock of any resolution, iterations-per-edge calibrates a loop into a fine timer
// (the review measured ~0.04 us). The work between readings is bounded by iteration count, not by
// time, and is far longer than a millisecond on any machine.
const SPINS = 2e7;
function edges(read) {
  let seen = 0;
  let last = read();
  for (let i = 0; i < SPINS; i++) {
    if ((i & 0xffff) !== 0) continue;
    const now = read();
    if (now !== last) { seen++; last = now; }
  }
  return seen;
}
function burn() { let x = 0; for (let i = 0; i < SPINS; i++) x += i & 1; return x; }
export async function action(input) {
  const t0 = Date.now();
  const result = {
    date_now: edges(() => Date.now()),
    vcp_now: edges(() => vcp.now()),
    new_date: edges(() => new Date().getTime()),
    date_string: edges(() => Date()),
    after_await: 0,
  };
  burn();
  await null;
  if (Date.now() !== t0 || vcp.now() !== t0) result.after_await = 1;
  const DateProtoCtor = Object.getPrototypeOf(new Date()).constructor;
  return {
    status: "continue",
    annotations: {
      edges: result,
      same_instant: Date.now() === t0 && vcp.now() === t0 && new Date().valueOf() === t0,
      performance: typeof globalThis.performance,
      intrinsic_reachable: DateProtoCtor !== Date || Date.prototype.constructor !== Date,
    },
  };
}
