/* corpus {"id":"timer-resolution","category":"exfiltration","title":"clocks have millisecond resolution only: vcp.now() and Date.now() are integers, performance is absent","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"vcp_now_integer":true,"date_now_integer":true,"date_fraction":false,"performance":"undefined","plausible":true},"recycled":"none"}} */
export function action(input) {
  let vcpInt = true;
  let dateInt = true;
  let fraction = false;
  for (let i = 0; i < 2000; i++) {
    if (!Number.isInteger(vcp.now())) vcpInt = false;
    if (!Number.isInteger(Date.now())) dateInt = false;
    if (new Date().valueOf() % 1 !== 0) fraction = true;
  }
  const skew = Math.abs(vcp.now() - Date.now());
  return {
    status: "continue",
    annotations: {
      vcp_now_integer: vcpInt, date_now_integer: dateInt, date_fraction: fraction,
      performance: typeof globalThis.performance,
      plausible: skew < 60000 && vcp.now() > Date.UTC(2024, 0, 1),
    },
  };
}
