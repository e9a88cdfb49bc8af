/* corpus {"id":"deep-recursion","category":"resource-exhaustion","title":"unbounded recursion overflows the guest stack","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"error","status":"continue","error_matches":"Maximum call stack size exceeded","annotations":null,"recycled":"none"}} */
function down(n) {
  return down(n + 1) + 1;
}
export function action(input) {
  return down(0);
}
