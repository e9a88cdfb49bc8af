/* corpus {"id":"repoyaml-session-blocking-spin","category":"profile-hooks","title":"a session-trust repo-yaml hook marked blocking spins: its failure must not block (only deployment trust may)","hook":{"timeout_ms":300,"trust":"session","condition":null},"calls":1,
 "profile":{"id":"repo-yaml","event":"PreAbilityCall","blocking":true,"input":{"ability_id":"fs.write"},"companion":true,
  "expect":{"native_absent":["error"],"exit_code":0}},
 "expect":{"outcome":"timeout","status":"continue","error_matches":"timed out|timeout","annotations":null,"recycled":"isolate"}} */
export function action() {
  for (;;) {}
}
