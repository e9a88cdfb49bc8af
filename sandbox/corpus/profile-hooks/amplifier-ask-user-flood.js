/* corpus {"id":"amplifier-ask-user-flood","category":"profile-hooks","title":"an Amplifier hook asks with 5,000 options of 100 characters, a 200 KB prompt and a timeout of 10^12 s","hook":{"timeout_ms":5000,"trust":"deployment","condition":null},"calls":1,
 "profile":{"id":"amplifier","event":"tool:pre","input":{"data":{"tool_name":"bash"}},
  "expect":{"native":{"action":"ask_user","approval.state":"pending"},"native_matches":{"approval.options.15":".","approval.timeout_s":"^3600$"},"native_absent":["approval.options.16"],"max_native_bytes":1200000}},
 "expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":null,"recycled":"none"}} */
// The pending approval the coordinator records (and streams to every watching console) is bounded:
// at most 16 options, clipped text, a timeout of at most approvals.max_timeout_s.
export function action() {
  return {
    action: "ask_user",
    approval_prompt: "P".repeat(200000),
    approval_options: Array.from({ length: 5000 }, (_, i) => String(i).padEnd(100, "o")),
    approval_timeout: 1e12,
    approval_default: "allow",
  };
}
