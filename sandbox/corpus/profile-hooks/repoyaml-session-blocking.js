/* corpus {"id":"repoyaml-session-blocking","category":"profile-hooks","title":"a session-trust repo-yaml hook marked blocking returns error: blocked_by_policy on PreAbilityCall","hook":{"timeout_ms":5000,"trust":"session","condition":null},"calls":1,
 "profile":{"id":"repo-yaml","event":"PreAbilityCall","blocking":true,"input":{"ability_id":"fs.write"},"companion":true,
  "expect":{"native_absent":["error"],"exit_code":0}},
 "expect":{"outcome":"capability_denied","status":"continue","error_matches":"session-trust","annotations":null,"recycled":"none"}} */
export function action() {
  return { error: "blocked_by_policy", messages_to_user: ["blocked by the repository"] };
}
