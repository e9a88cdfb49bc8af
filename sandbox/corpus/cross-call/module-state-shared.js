/* corpus {"id":"module-state-shared","category":"cross-call","title":"control: module state persists between calls in isolation shared (so the other cross-call cases really hit the same context)","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":2,"sessions":["s-a","s-b"],"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"count":2,"first_session":"s-a"},"recycled":"none"}} */
let count = 0;
let firstSession = null;
export function action(input) {
  count++;
  if (firstSession === null) firstSession = input.session.id;
  return { status: "continue", annotations: { count, first_session: firstSession } };
}
