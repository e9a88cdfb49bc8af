/**
 * Importer for a repository's `.system/hooks/` directory (repo-yaml@1, spec/related/repo-local-yaml-hooks.md):
 * one YAML per hook with `id`, `event_type`, `enabled`, `match`, `handler: { kind: script, command }`,
 * `blocking`. Script handlers become exec hooks; `kind: action` handlers are already sandboxed
 * (`vcp-hooks build --from repo-yaml`) and are only listed.
 */
import { parse as parseYaml } from "yaml";
import { hookName, resolveCommand, type ImportContext, type ImportedHook, type ImportResult } from "./common.js";

export const REPO_YAML_EVENTS: ReadonlySet<string> = new Set(["UserPromptSubmit", "PreAbilityCall", "PostAbilityCall", "SessionStart", "SessionEnd", "SessionStop"]);

/**
 * `files`: the directory's `*.yaml` / `*.yml` files (name and text), in any order; hooks are taken in
 * file-name order, as the profile registers them.
 *
 * @example
 * ```ts
 * const result = importRepoYaml([{ name: "post-tool.yaml", text }], ctx);
 * ```
 */
export function importRepoYaml(files: ReadonlyArray<{ name: string; text: string }>, ctx: ImportContext): ImportResult {
  const result: ImportResult = { profile: "repo-yaml", format: "repo-yaml", hooks: [], refused: [], notes: [], needsShell: false, envAllow: ["PATH", "HOME", "LANG"] };
  const taken = new Set<string>();
  const sorted = [...files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const file of sorted) {
    let doc: Record<string, unknown>;
    try {
      doc = parseYaml(file.text, { maxAliasCount: 100 }) as Record<string, unknown>;
    } catch (err) {
      result.refused.push({ at: file.name, why: `not YAML: ${(err as Error).message.split("\n")[0]}` });
      continue;
    }
    if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
      result.refused.push({ at: file.name, why: "must be a mapping" });
      continue;
    }
    const event = doc["event_type"];
    if (typeof event !== "string" || !REPO_YAML_EVENTS.has(event)) {
      result.refused.push({ at: `${file.name}: event_type`, why: `unknown repo-yaml event '${String(event)}'` });
      continue;
    }
    const handler = doc["handler"] as { kind?: unknown; command?: unknown; module?: unknown } | undefined;
    if (handler?.kind === "action") {
      result.notes.push(`${file.name}: an action handler (${String(handler.module)}) is already a sandboxed policy: build it with 'vcp-hooks build --from repo-yaml'`);
      continue;
    }
    if (handler?.kind !== "script" || typeof handler.command !== "string") {
      result.refused.push({ at: `${file.name}: handler`, why: "needs kind: script with a command (or kind: action)" });
      continue;
    }
    const id = typeof doc["id"] === "string" ? doc["id"] : file.name.replace(/\.ya?ml$/, "");
    const hook: ImportedHook = { name: hookName(id, taken), event, exec: { command: "", sha256: "" }, original: handler.command, at: `${file.name}: handler.command`, conversions: [], warnings: [] };
    if (hook.name !== id) hook.conversions.push(`id '${id}' → hook name '${hook.name}'`);
    if (doc["enabled"] === false) hook.enabled = false;
    if (typeof doc["match"] === "object" && doc["match"] !== null) hook.match = doc["match"] as Record<string, unknown>;
    if (doc["blocking"] === true) hook.blocking = true;
    try {
      hook.exec = resolveCommand(handler.command, [], ctx, hook);
    } catch (err) {
      result.refused.push({ at: hook.at, why: (err as Error).message });
      continue;
    }
    if (hook.exec.shell) result.needsShell = true;
    result.hooks.push(hook);
  }
  return result;
}
