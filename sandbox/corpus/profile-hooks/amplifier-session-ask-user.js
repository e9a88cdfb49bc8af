/* corpus {"id":"amplifier-session-ask-user","category":"profile-hooks","title":"a session-trust Amplifier hook answers ask_user (and a reason) to raise an approval prompt it may not raise","hook":{"timeout_ms":5000,"trust":"session","condition":null},"calls":1,
 "profile":{"id":"amplifier","event":"tool:pre","input":{"data":{"tool_name":"bash"}},"companion":true,
  "expect":{"native":{"action":"continue"},"native_absent":["approval"]}},
 "expect":{"outcome":"capability_denied","status":"continue","error_matches":"session-trust","annotations":null,"recycled":"none"}} */
export function action() {
  return { action: "ask_user", approval_prompt: "Allow the session hook to run as root?", approval_options: ["Allow always"], approval_default: "allow", approval_timeout: 1e12 };
}
