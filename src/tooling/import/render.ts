/**
 * The importer's output files, as text keyed by relative path (pure; src/cli/import.ts writes them):
 *
 *   exec/policy.yaml           pinned exec hooks, trust: system, unsigned until `vcp-hooks sign`
 *   profile.yaml               the deployment settings to merge into vcp.yaml (profile, exec lane)
 *   stubs/<hook>/policy.yaml   a sandboxed port's manifest (action instead of exec)
 *   stubs/<hook>/src/index.ts  a typed stub with the original command in a comment
 *   stubs/<hook>/tests/<hook>.yaml   one native test case
 *   report.md                  every conversion, warning and refusal
 *   <agent>-settings.json      claude/gemini/llxprt: the agent's hooks block that sends the imported
 *                              events through `vcp-hooks hook` (agent-settings.ts; Claude: onFailure block)
 */
import { stringify } from "yaml";
import { GENERATED_FILE, renderAgentSettings, SETTINGS_FILE, settingsAgentOf } from "../agent-settings.js";
import { findProfile } from "../../profiles/index.js";
import { sampleInput } from "../sample-input.js";
import type { ImportedHook, ImportResult } from "./common.js";

/** The answer that lets everything through, per profile (a fresh stub's behaviour; goose's PreToolUse and Stop say allow explicitly). */
function neutralAnswer(profile: string, event?: string): Record<string, unknown> {
  if (profile === "goose" && (event === "PreToolUse" || event === "Stop")) return { decision: "allow" };
  return profile === "ai-memory" ? { action: "allow" } : {};
}

/**
 * Profiles whose author types the package exports as `vcp-hooks/profiles/<id>` (package.json "exports";
 * test/cli/import/stubs-typecheck.test.ts checks the two agree).
 */
const AUTHOR_TYPES: ReadonlySet<string> = new Set(["gemini-cli", "llxprt", "claude-code", "codex", "vscode", "cursor", "openhands", "goose"]);

/**
 * The type lines of a stub: the profile's own `HookInput` / `HookOutput` where the package exports them
 * (every event's input extends `HookInput`; the event's own type, e.g. `PreToolUseInput`, narrows it),
 * else plain JSON types, so the stub type-checks as generated.
 */
function stubTypes(profile: string): string {
  if (AUTHOR_TYPES.has(profile)) return `// Narrow HookInput to the event's own input type (e.g. PreToolUseInput) to read its fields.\nimport type { HookInput, HookOutput } from "vcp-hooks/profiles/${profile}";`;
  return "type Json = null | boolean | number | string | Json[] | { [key: string]: Json };\ntype HookInput = { [key: string]: Json };\ntype HookOutput = { [key: string]: Json };";
}

/** `shell-guard` → `shellGuardHook`: an identifier that is never a reserved word. */
const exportName = (hook: string) => `${hook.replace(/[-_]+([a-z0-9])/g, (_m, c: string) => c.toUpperCase()).replace(/^[0-9]/, (d) => `h${d}`)}Hook`;

/** Text safe inside a `/* … *\/` comment and on one report line. */
const commentSafe = (s: string) => s.replace(/\*\//g, "*\\/").replace(/[\u0000-\u001f\u007f]/g, " ");
const mdSafe = (s: string) => s.replace(/[\u0000-\u001f\u007f]/g, " ").replace(/`/g, "'");

function manifestHook(h: ImportedHook, form: "exec" | "action"): Record<string, unknown> {
  return {
    name: h.name,
    event: h.event,
    ...(h.matcher !== undefined ? { matcher: h.matcher } : {}),
    ...(h.match !== undefined ? { match: h.match } : {}),
    ...(h.blocking !== undefined ? { blocking: h.blocking } : {}),
    ...(h.sequential !== undefined ? { sequential: h.sequential } : {}),
    ...(h.priority !== undefined ? { priority: h.priority } : {}),
    ...(h.timeout_ms !== undefined ? { timeout_ms: h.timeout_ms } : {}),
    ...(h.fail_closed !== undefined ? { fail_closed: h.fail_closed } : {}),
    ...(h.enabled !== undefined ? { enabled: h.enabled } : {}),
    ...(form === "exec" ? { exec: h.exec } : { action: exportName(h.name) }),
  };
}

/**
 * @example
 * ```ts
 * for (const [path, text] of renderImport(result, "claude", ".claude/settings.json")) write(join(out, path), text);
 * ```
 */
export function renderImport(result: ImportResult, bundle: string): Map<string, string> {
  const files = new Map<string, string>();
  const header = (what: string) => `# ${what}\n# Written by 'vcp-hooks import ${result.format}'. Review report.md before using it.\n`;
  if (result.hooks.length > 0) {
    files.set(
      "exec/policy.yaml",
      `${header("Pinned exec hooks (command lane, PROFILES §6). Unsigned: sign with a system-trust key ('vcp-hooks sign').")}${stringify(
        {
          bundle: `${bundle}-exec`,
          version: "0.1.0",
          description: `Exec hooks imported from ${result.format} configuration`,
          profile: result.profile,
          trust: "system",
          hooks: result.hooks.map((h) => manifestHook(h, "exec")),
        },
        { lineWidth: 0 },
      )}`,
    );
  }
  files.set(
    "profile.yaml",
    `${header("Deployment settings to merge into vcp.yaml (pin the profile version your catalogue enables).")}${stringify(
      {
        profiles: { [result.profile]: { strict: false } },
        exec: { enabled: true, shell: result.needsShell, env_allow: result.envAllow },
      },
      { lineWidth: 0 },
    )}`,
  );
  for (const h of result.hooks) {
    const fn = exportName(h.name);
    const types = stubTypes(result.profile);
    files.set(
      `stubs/${h.name}/src/index.ts`,
      `/*
 * Sandboxed port of an imported ${result.format} command hook (${commentSafe(h.at)}).
 * Event ${h.event}${h.matcher !== undefined ? `, matcher ${commentSafe(h.matcher)}` : ""}.
 * Original command: ${commentSafe(h.original)}
 *
 * Move the script's logic here: the function receives exactly the JSON the script read on stdin and
 * returns exactly the JSON it would print. Until then it allows everything.
 */
${types}

export function ${fn}(input: HookInput): HookOutput {
  void input;
  return ${JSON.stringify(neutralAnswer(result.profile, h.event))};
}
`,
    );
    files.set(
      `stubs/${h.name}/policy.yaml`,
      `${header(`Sandboxed port of ${h.name}`)}${stringify({ bundle: h.name, version: "0.1.0", profile: result.profile, trust: "deployment", hooks: [manifestHook(h, "action")] }, { lineWidth: 0 })}`,
    );
    files.set(
      `stubs/${h.name}/tests/${h.name}.yaml`,
      `${header(`A native case for ${h.name}: replace the expectation with what the original script answers.`)}${stringify(
        { cases: [{ name: `${h.name}: the stub allows`, event: h.event, input: sampleInput(findProfile(result.profile) ?? { id: result.profile }, h.event), expect: { native: neutralAnswer(result.profile, h.event), exit_code: 0 } }] },
        { lineWidth: 0 },
      )}`,
    );
  }
  const agent = settingsAgentOf(result.profile);
  if (agent !== undefined && result.hooks.length > 0) files.set(GENERATED_FILE[agent], renderAgentSettings(agent, result.hooks.map((h) => h.event)));
  files.set("report.md", renderReport(result));
  return files;
}

function renderReport(r: ImportResult): string {
  const lines = [
    `# Import report: ${r.format} → profile ${r.profile}`,
    "",
    `Hooks converted: ${r.hooks.length}. Refused: ${r.refused.length}. Nothing was executed.`,
    "",
    "Next: review this report, then `vcp-hooks sign exec/…` with a key whose `max_trust` is `system`, merge",
    "`profile.yaml` into `vcp.yaml`, and port each hook under `stubs/` into a sandboxed policy.",
    "",
  ];
  const agent = settingsAgentOf(r.profile);
  if (agent !== undefined && r.hooks.length > 0) {
    lines.push(
      `Then replace the imported events' hooks in ${SETTINGS_FILE[agent]} with \`${GENERATED_FILE[agent]}\`: each event goes through`,
      `\`vcp-hooks hook <Event>\`${agent === "claude-code" ? ", with `\"onFailure\": \"block\"` on PreToolUse and PermissionRequest (Claude Code >= 2.1.295)" : ""}.`,
      "",
    );
  }
  if (r.notes.length > 0) {
    lines.push("## Notes", "");
    for (const n of r.notes) lines.push(`- ${mdSafe(n)}`);
    lines.push("");
  }
  lines.push("## Hooks", "");
  for (const h of r.hooks) {
    lines.push(`### ${h.name}`, "");
    lines.push(`- from: \`${mdSafe(h.at)}\``);
    lines.push(`- event: ${h.event}${h.matcher !== undefined ? `, matcher \`${mdSafe(h.matcher)}\`` : ""}`);
    lines.push(`- original command: \`${mdSafe(h.original)}\``);
    lines.push(`- pinned: ${h.exec.shell ? "shell string" : `\`${mdSafe(h.exec.command)}\``} sha256 \`${h.exec.sha256}\`${h.exec.args ? `, args \`${mdSafe(JSON.stringify(h.exec.args))}\`` : ""}`);
    for (const c of h.conversions) lines.push(`- converted: ${mdSafe(c)}`);
    for (const w of h.warnings) lines.push(`- **check**: ${mdSafe(w)}`);
    lines.push("");
  }
  if (r.refused.length > 0) {
    lines.push("## Refused", "");
    for (const x of r.refused) lines.push(`- \`${mdSafe(x.at)}\`: ${mdSafe(x.why)}`);
    lines.push("");
  }
  return lines.join("\n");
}
