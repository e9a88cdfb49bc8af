/* corpus {"id":"gemini-parallel-heap","category":"profile-hooks","title":"a hook of a parallel Gemini BeforeTool group retains memory until the isolate limit; the other hook's answer stands","hook":{"timeout_ms":30000,"trust":"deployment","condition":null},"calls":1,
 "profile":{"id":"gemini-cli","event":"BeforeTool","input":{"tool_name":"run_shell_command","tool_input":{"command":"ls"}},"companion":true,
  "expect":{"native_matches":{"systemMessage":"^\"Warning: atk_gemini_parallel_heap: .*\\\\ncompanion-served\"$"},"native":{"continue":true},"exit_code":0}},
 "expect":{"outcome":"error","status":"continue","error_matches":"memory limit","annotations":null,"recycled":"isolate","max_fire_ms":10000}} */
// The heap fills in ≈ 0.4 s of CPU; the budget is the maximum so that the memory limit, not the machine's load,
// decides (with 5 s a loaded 2-core machine ran past it first). max_fire_ms keeps the old cap.
export function action() {
  const keep = [];
  for (let i = 0; ; i++) keep.push({ i, s: "x" + i, a: [i, i + 1, i + 2] });
}
