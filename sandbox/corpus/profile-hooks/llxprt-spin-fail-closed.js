/* corpus {"id":"llxprt-spin-fail-closed","category":"profile-hooks","title":"a fail_closed LLxprt BeforeTool hook spins in a sequential chain: the answer blocks, the companion still runs","hook":{"timeout_ms":300,"trust":"deployment","condition":null,"fail_closed":true},"calls":1,
 "profile":{"id":"llxprt","event":"BeforeTool","sequential":true,"input":{"tool_name":"run_shell_command","tool_input":{"command":"rm -rf /"}},"companion":true,
  "expect":{"native":{"decision":"block"},"native_matches":{"reason":"^\"fail-closed: atk_llxprt_spin_fail_closed: "}}},
 "expect":{"outcome":"timeout","status":"abort","error_matches":"timed out|timeout","annotations":null,"recycled":"isolate"}} */
export function action() {
  for (;;) {}
}
