import { z } from "zod";
import { VcpError } from "../../errors.js";
import { describeIssues } from "../../model/zod-errors.js";
import { compileRepoYamlFilter, type RepoYamlMatch } from "./filter.js";

export const REPO_YAML_EVENTS_LIST = ["UserPromptSubmit", "PreAbilityCall", "PostAbilityCall", "SessionStart", "SessionEnd", "SessionStop"] as const;

const Handler = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("action"), module: z.string().min(1), export: z.string().regex(/^[A-Za-z_$][A-Za-z0-9_$]*$/, "must be a JavaScript identifier") }),
  z.looseObject({ kind: z.literal("script"), command: z.string().min(1) }),
]);

/** One `.system/hooks/<id>.yaml` (spec/related/repo-local-yaml-hooks.md §2.1). Extra keys (env flags) are kept. */
const HookFile = z.looseObject({
  id: z.string().regex(/^[A-Za-z0-9_.-]+$/, "must be letters, digits, '_', '-' or '.'"),
  event_type: z.enum(REPO_YAML_EVENTS_LIST),
  enabled: z.boolean().default(true),
  summary: z.string().optional(),
  match: z.unknown().optional(),
  handler: Handler,
  effects: z.unknown().optional(),
  blocking: z.boolean().default(false),
});

/** A hook file already read and parsed (no fs here): its file name and its YAML document. */
export interface RepoYamlFile {
  readonly name: string;
  readonly doc: unknown;
}

/** A manifest hook definition built from one file (`handler.kind: action`). */
export interface RepoYamlHookDefinition {
  name: string;
  event: string;
  handler: { kind: "action"; module: string; export: string };
  match?: RepoYamlMatch;
  blocking: boolean;
  summary?: string;
  /** The file it came from, for messages. */
  file: string;
}

/** A `handler.kind: script` hook: it can only run in the command lane (PROFILES §6), never in the sandbox. */
export interface RepoYamlScriptHook {
  name: string;
  event: string;
  command: string;
  blocking: boolean;
  match?: RepoYamlMatch;
  file: string;
}

export interface RepoYamlBuild {
  /** Sandboxed action hooks, in file-name order (their registration order). */
  hooks: RepoYamlHookDefinition[];
  /** Script hooks that need the command lane (`exec`), in file-name order. */
  needsCommandLane: RepoYamlScriptHook[];
  /** Hooks with `enabled: false`, left out. */
  disabled: Array<{ name: string; file: string }>;
}

function fail(file: string, field: string, rule: string): never {
  throw new VcpError("BUILD_FAILED", `${file}: ${field}: ${rule}`, { file, field, rule });
}

/**
 * Turn a `.system/hooks/` directory's parsed YAML documents into manifest hook definitions, in
 * file-name order (PROFILES §8.5, §8.8). Pure: the caller reads the directory. A document that is not
 * an object, misses `id`/`event_type`, names an unknown event, has a bad `match` or `handler`, or
 * repeats an `id` is a `BUILD_FAILED` naming the file and the field.
 *
 * @example
 * ```ts
 * buildFromRepoYaml([{ name: "guard.yaml", doc: { id: "guard", event_type: "PreAbilityCall", blocking: true,
 *   handler: { kind: "action", module: "guard.js", export: "guard" } } }]).hooks[0];
 * // { name: "guard", event: "PreAbilityCall", handler: { kind: "action", module: "guard.js", export: "guard" }, blocking: true, file: "guard.yaml" }
 * ```
 */
export function buildFromRepoYaml(files: readonly RepoYamlFile[]): RepoYamlBuild {
  const ordered = [...files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const out: RepoYamlBuild = { hooks: [], needsCommandLane: [], disabled: [] };
  const seen = new Map<string, string>();
  for (const { name: file, doc } of ordered) {
    if (typeof doc !== "object" || doc === null || Array.isArray(doc)) fail(file, "(root)", "must be a YAML mapping with id, event_type and handler");
    const parsed = HookFile.safeParse(doc);
    if (!parsed.success) {
      const first = describeIssues(parsed.error)[0]!;
      fail(file, first.field, first.rule);
    }
    const h = parsed.data;
    const earlier = seen.get(h.id);
    if (earlier !== undefined) fail(file, "id", `${JSON.stringify(h.id)} is already defined in ${earlier}`);
    seen.set(h.id, file);
    let match: RepoYamlMatch | undefined;
    if (h.match !== undefined && h.match !== null) {
      try {
        compileRepoYamlFilter(h.match, h.event_type);
      } catch (e) {
        const msg = (e as Error).message;
        const field = /^(match(?:\.[a-z_]+)?)/.exec(msg)?.[1] ?? "match";
        fail(file, field, msg.replace(/^match(?:\.[a-z_]+)?: /, ""));
      }
      match = h.match as RepoYamlMatch;
    }
    if (!h.enabled) {
      out.disabled.push({ name: h.id, file });
      continue;
    }
    if (h.handler.kind === "script") {
      const s: RepoYamlScriptHook = { name: h.id, event: h.event_type, command: h.handler.command, blocking: h.blocking, file };
      if (match !== undefined) s.match = match;
      out.needsCommandLane.push(s);
      continue;
    }
    const def: RepoYamlHookDefinition = {
      name: h.id,
      event: h.event_type,
      handler: { kind: "action", module: h.handler.module, export: h.handler.export },
      blocking: h.blocking,
      file,
    };
    if (match !== undefined) def.match = match;
    if (h.summary !== undefined) def.summary = h.summary;
    out.hooks.push(def);
  }
  return out;
}

/**
 * The registration JSON of the template's registration script, `{ event_type: [{ id, handler }] }`, for
 * `vcp-hooks hooks list --format repo-yaml` (enabled hooks, file-name order, events in vocabulary order).
 */
export function registrationJson(build: RepoYamlBuild): Record<string, Array<{ id: string; handler: Record<string, unknown> }>> {
  const all = [
    ...build.hooks.map((h) => ({ file: h.file, event: h.event, id: h.name, handler: { ...h.handler } as Record<string, unknown> })),
    ...build.needsCommandLane.map((h) => ({ file: h.file, event: h.event, id: h.name, handler: { kind: "script", command: h.command } as Record<string, unknown> })),
  ].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  const out: Record<string, Array<{ id: string; handler: Record<string, unknown> }>> = {};
  for (const event of REPO_YAML_EVENTS_LIST) {
    const hooks = all.filter((h) => h.event === event).map(({ id, handler }) => ({ id, handler }));
    if (hooks.length > 0) out[event] = hooks;
  }
  return out;
}
