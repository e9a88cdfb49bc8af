/* corpus {"id":"aimem-hotpath-spin-closed","category":"profile-hooks","title":"a fail_closed ai-memory pre_recall_expand hook spins past the 50 ms class deadline: deny, not a silent allow","hook":{"timeout_ms":5000,"trust":"deployment","condition":null,"fail_closed":true},"calls":1,
 "profile":{"id":"ai-memory","event":"pre_recall_expand","input":{"payload":{"query":"q"}},
  "expect":{"native":{"action":"deny"},"native_matches":{"reason":"atk_aimem_hotpath_spin_closed"}}},
 "expect":{"outcome":"deadline_exceeded","status":"abort","error_matches":"deadline|50","annotations":null,"max_fire_ms":5000,"recycled":"isolate"}} */
export function action() {
  for (;;) {}
}
