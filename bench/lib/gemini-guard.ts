/**
 * The 5-hook Gemini CLI `BeforeTool` guard the CPU benches fire (bench/profile-cpu.ts, bench/route-cpu.ts):
 * one bundle, five hooks selected by `run_shell_command`, each a destructive-command pattern of
 * bench/profiles.ts over the shell command. Plain data, no import of src/: route-cpu.ts hands it to
 * whichever build it runs (`--build`), and compare-builds copies the CPU benches into older builds.
 */

/** A pattern over the shell command per hook. */
export const GUARD_PATTERNS = [
  "rm\\s+-[a-zA-Z]*r[a-zA-Z]*f[a-zA-Z]*\\s+(/|~)(\\s|$)",
  "(curl|wget)[^|]*\\|\\s*(ba)?sh",
  "(^|[;&|]\\s*)sudo\\s",
  "git\\s+push\\b.*\\s(--force|-f)(\\s|$)",
  "mkfs|dd\\s.*of=/dev/",
] as const;

/** The bundle's manifest (bundle `bench-cpu`, trust deployment, profile gemini-cli). */
export function guardManifest() {
  return {
    bundle: "bench-cpu",
    version: "1.0.0",
    trust: "deployment",
    profile: "gemini-cli",
    hooks: GUARD_PATTERNS.map((_, i) => ({ name: `hook_${i}`, event: "BeforeTool", matcher: "run_shell_command", action: `h${i}`, priority: 50 - i, timeout_ms: 2000 })),
  };
}

/** The bundle's code: action `h<i>` blocks when pattern i matches the command. */
export function guardCode(): string {
  const actions = GUARD_PATTERNS.map(
    (re, i) => `h${i}: function (input) { var c = String(input.tool_input.command || ""); return new RegExp(${JSON.stringify(re)}).test(c) ? { decision: "block", reason: "r${i}" } : {}; }`,
  );
  return `var __vcp_bundle = {\n${actions.join(",\n")}\n};`;
}

/** A Gemini CLI `BeforeTool` input calling `tool` with a shell `command`. */
export function guardInput(tool: string, command: string) {
  return {
    session_id: "bench", transcript_path: "/tmp/t.jsonl", cwd: "/home/dev/app", hook_event_name: "BeforeTool",
    timestamp: "2026-11-26T00:00:00Z", tool_name: tool, tool_input: { command },
  };
}
