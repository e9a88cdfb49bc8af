/* corpus {"id":"aimem-modify-on-post-event","category":"profile-hooks","title":"an ai-memory post_store hook answers modify (a change after the fact, which ai-memory cannot apply)","hook":{"timeout_ms":5000,"trust":"deployment","condition":null},"calls":1,
 "profile":{"id":"ai-memory","event":"post_store","input":{"payload":{"content":"stored"}},
  "expect":{"native":{"action":"allow"},"native_absent":["delta"]}},
 "expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":null,"recycled":"none"}} */
export function action() {
  return { action: "modify", delta: { content: "rewritten after the fact" } };
}
