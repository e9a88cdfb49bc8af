/* corpus {"id":"aimem-session-deny","category":"profile-hooks","title":"a session-trust ai-memory hook denies pre_delete with code 451 (only deployment trust may block)","hook":{"timeout_ms":5000,"trust":"session","condition":null},"calls":1,
 "profile":{"id":"ai-memory","event":"pre_delete","input":{"payload":{"id":"m1"}},"companion":true,
  "expect":{"native":{"action":"allow"},"native_absent":["code","reason"]}},
 "expect":{"outcome":"capability_denied","status":"continue","error_matches":"session-trust","annotations":null,"recycled":"none"}} */
export function action() {
  return { action: "deny", reason: "a session hook says no", code: 451 };
}
