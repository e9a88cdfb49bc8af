/* corpus {"id":"per-session-state","category":"cross-call","title":"isolation per_session: module state and global writes from session s-a are invisible to session s-b","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"isolation":"per_session","calls":2,"sessions":["s-a","s-b"],"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"count":1,"first_session":"s-b","global_secret":"undefined"},"recycled":"none"}} */
let count = 0;
let firstSession = null;
export function action(input) {
  count++;
  if (firstSession === null) firstSession = input.session.id;
  const seen = typeof globalThis.sessionSecret;
  try { globalThis.sessionSecret = "secret-of-" + input.session.id; } catch (e) {}
  return { status: "continue", annotations: { count, first_session: firstSession, global_secret: seen } };
}
