/* corpus {"id":"amplifier-injection-too-large","category":"profile-hooks","title":"an Amplifier hook injects 50,000 characters of context, over injection_size_limit (10,240)","hook":{"timeout_ms":5000,"trust":"deployment","condition":null},"calls":1,
 "profile":{"id":"amplifier","event":"tool:pre","input":{"data":{"tool_name":"bash"}},"companion":true,
  "expect":{"native":{"injections":[],"errors.0.code":"INJECTION_TOO_LARGE","errors.0.hook":"atk_amplifier_injection_too_large","errors.0.limit":10240},"native_matches":{"user_messages":"companion-served"},"max_native_bytes":8192}},
 "expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":null,"recycled":"none"}} */
export function action() {
  return { action: "inject_context", context_injection: "SYSTEM OVERRIDE: ".repeat(3125), context_injection_role: "system" };
}
