/**
 * Importer for ai-memory's `hooks.toml` (`[[hook]]` blocks: event, command, priority, timeout_ms, mode,
 * enabled, namespace, fail_mode; upstream alphaonedev/ai-memory-mcp `src/hooks/config.rs`). ai-memory
 * runs `command` as a path with no arguments, so it is pinned as it stands.
 */
import { parse as parseToml } from "smol-toml";
import { capTimeout, hookName, ImportError, resolveCommand, type ImportContext, type ImportedHook, type ImportResult } from "./common.js";

const PHASED = ["store", "recall", "search", "delete", "promote", "link", "consolidate", "governance_decision", "transcript_store", "reflect"];
export const AI_MEMORY_EVENTS: ReadonlySet<string> = new Set([
  ...PHASED.flatMap((e) => [`pre_${e}`, `post_${e}`]),
  "on_index_eviction", "pre_archive", "pre_recall_expand", "pre_compaction", "on_compaction_rollback",
]);

/**
 * @example
 * ```ts
 * const result = importAiMemory(readFileSync("hooks.toml", "utf8"), ctx);
 * ```
 */
export function importAiMemory(text: string, ctx: ImportContext): ImportResult {
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(text) as Record<string, unknown>;
  } catch (err) {
    throw new ImportError(`${ctx.source} is not TOML: ${(err as Error).message.split("\n")[0]}`);
  }
  const blocks = doc["hook"];
  if (!Array.isArray(blocks)) throw new ImportError(`${ctx.source} has no [[hook]] blocks`);
  const result: ImportResult = { profile: "ai-memory", format: "ai-memory", hooks: [], refused: [], notes: [], needsShell: false, envAllow: ["PATH", "HOME", "LANG"] };
  const taken = new Set<string>();
  const priorities = blocks.map((b) => (typeof (b as { priority?: unknown }).priority === "number" ? (b as { priority: number }).priority : 0));
  const rescale = priorities.some((p) => p < 0 || p > 100 || !Number.isInteger(p));
  // Ranks keep the order (priority descending, ties in file order) within the manifest's 0–100.
  const distinct = [...new Set(priorities)].sort((a, b) => a - b);
  if (rescale) result.notes.push(`priorities outside 0–100 rescaled by rank to 0–100 (order kept): ${distinct.join(", ")}`);
  blocks.forEach((raw: unknown, i) => {
    const at = `hook[${i}]`;
    const b = raw as Record<string, unknown>;
    if (typeof b !== "object" || b === null) return result.refused.push({ at, why: "must be a table" });
    const event = b["event"];
    if (typeof event !== "string" || !AI_MEMORY_EVENTS.has(event)) return result.refused.push({ at: `${at}.event`, why: `unknown ai-memory event '${String(event)}'` });
    if (typeof b["command"] !== "string") return result.refused.push({ at: `${at}.command`, why: "must be a string (a path)" });
    const hook: ImportedHook = { name: hookName(`${event}-${i + 1}`, taken), event, exec: { command: "", sha256: "" }, original: b["command"], at, conversions: [], warnings: [] };
    const priority = priorities[i]!;
    if (rescale) {
      hook.priority = distinct.length === 1 ? 50 : Math.round((distinct.indexOf(priority) / (distinct.length - 1)) * 100);
      hook.conversions.push(`priority ${priority} → ${hook.priority}`);
    } else if (typeof b["priority"] === "number") hook.priority = priority;
    if (typeof b["timeout_ms"] === "number") hook.timeout_ms = capTimeout(Math.max(1, Math.round(b["timeout_ms"])), hook.conversions, "timeout_ms");
    if (b["enabled"] === false) {
      hook.enabled = false;
      hook.conversions.push("enabled = false kept (the hook is installed disabled)");
    }
    if (b["fail_mode"] === "closed") {
      hook.fail_closed = true;
      hook.conversions.push('fail_mode = "closed" → fail_closed: true (deny code 503 on error)');
    }
    if (b["mode"] === "daemon" || (b["mode"] === undefined && ["post_recall", "post_search", "pre_recall_expand"].includes(event))) {
      hook.warnings.push("ran in daemon mode upstream; the command lane starts it once per event (port it to a sandboxed action for the hot path)");
    }
    const namespace = b["namespace"];
    if (typeof namespace === "string" && namespace.trim() !== "" && namespace.trim() !== "*") {
      hook.matcher = namespace.trim();
      hook.conversions.push(`namespace '${namespace}' → matcher (exact, or prefix/* as upstream)`);
    }
    try {
      // ai-memory passes no arguments: the whole string is the path.
      if (/\s/.test(b["command"].trim()) && !b["command"].trim().startsWith("/")) throw new ImportError("ai-memory runs the command as a path with no arguments; this is not a path");
      hook.exec = resolveCommand(b["command"].includes(" ") ? `'${b["command"].replace(/'/g, "'\\''")}'` : b["command"], [], ctx, hook);
    } catch (err) {
      return result.refused.push({ at: `${at}.command`, why: (err as Error).message });
    }
    result.hooks.push(hook);
    return undefined;
  });
  result.notes.push("ai-memory kills a hook at its timeout with SIGKILL at once: the profile's term_grace_ms is 0 (PROFILES §3.5)");
  return result;
}
