/* corpus {"id":"aimem-hotpath-spin","category":"profile-hooks","title":"an ai-memory pre_recall_expand hook (HotPath class, 50 ms chain deadline) spins with a 5 s timeout: cut at the class deadline","hook":{"timeout_ms":5000,"trust":"deployment","condition":null},"calls":1,
 "profile":{"id":"ai-memory","event":"pre_recall_expand","input":{"payload":{"query":"q"}},
  "expect":{"native":{"action":"allow"}}},
 "expect":{"outcome":"deadline_exceeded","status":"continue","error_matches":"deadline|50","annotations":null,"max_fire_ms":5000,"recycled":"isolate"}} */
// The hook's own timeout (5 s) must not stretch the event class's deadline: the agent's hot path waits
// about 50 ms, not 5 s.
export function action() {
  for (;;) {}
}
