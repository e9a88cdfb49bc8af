/* corpus {"id":"recursion-swallowed","category":"resource-exhaustion","title":"stack overflow caught by the guest; the same isolate still answers correctly","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"caught":"RangeError","after":42},"recycled":"none"}} */
function down(n) {
  return down(n + 1) + 1;
}
export function action(input) {
  let caught = "none";
  try {
    down(0);
  } catch (e) {
    caught = e && e.name;
  }
  return { status: "continue", annotations: { caught, after: 6 * 7 } };
}
