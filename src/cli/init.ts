/**
 * `vcp-hooks init <dir>`: scaffold a policy bundle (DESIGN §3.1) that builds, type-checks and passes
 * its own tests as generated: policy.yaml, src/index.ts (a typed action), src/vcp-env.d.ts (the
 * sandbox's `vcp` global), tests/example.yaml, tsconfig.json.
 */
import { existsSync, readdirSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { EVENT_SCHEMA_IDS, HOOK_TYPES, NAME_PATTERNS, type HookType, type NativeObject } from "../index.js";
import { getProfile, isProfileEvent, listProfiles, type EventProfile } from "../profile-kit.js";
import { GENERATED_FILE, renderAgentSettings, settingsAgentOf, SETTINGS_FILE } from "../tooling/agent-settings.js";
import { sampleInput } from "../tooling/sample-input.js";
import { loadProfileModules } from "./local.js";
import { CheckFailed, EXIT_OK, parseCommand, printJson, stringOption, UsageError, type Command } from "./common.js";

const USAGE = `usage: vcp-hooks init <dir> [--name <bundle>] [--type <hook type>] [--json]
       vcp-hooks init <dir> --profile <name> [--event <Event>] [--name <bundle>] [--json]

Create a new policy directory:
  policy.yaml          the manifest (bundle, version, trust, hooks)
  src/index.ts         the hook action, typed with import type { HookInput, HookResult } from "vcp-hooks"
  src/vcp-env.d.ts     types of the sandbox's vcp global (vcp.log, vcp.sha256, vcp.now)
  tests/example.yaml   three cases (continue, modify, abort) for 'vcp-hooks test'
  tsconfig.json        for type-checking: npx tsc -p <dir>/tsconfig.json
Refuses to write into an existing non-empty directory.

Options:
  --name <bundle>   bundle name, [a-z0-9_-]{1,64} (default: from the directory name)
  --type <type>     hook type of the example hook (default pre_inject): ${HOOK_TYPES.join(", ")}
  --profile <name>  an event-profile policy instead (${listProfiles().map((p) => p.id).join(", ")}): the action
                    takes the agent's native input JSON and returns its native output JSON
  --event <Event>   the profile event of the example hook (default: the profile's first event)
                    claude-code, gemini-cli, llxprt: also <agent>-settings.json, the hooks block of
                    the agent's settings that sends the event through 'vcp-hooks hook' (Claude Code:
                    with "onFailure": "block" on PreToolUse and PermissionRequest)
  --json            print { dir, bundle, files }
Exit: 0 created, 1 the directory exists, 2 usage error.
Next: vcp-hooks test <dir> · vcp-hooks build <dir>`;

/** A valid sample event per type (spec §4.5), for the generated tests. */
const SAMPLE_EVENTS: Record<HookType, unknown> = {
  pre_inject: { injection_target: "system", injection_format: "system_prompt", raw_constitution: "Be helpful and honest." },
  post_select: { candidates: [{ id: "default", rules: [] }], selection_rationale: "default profile", selection_algorithm: "score" },
  on_transition: { previous_state: "professional", new_state: "personal", trigger: "user_request" },
  on_conflict: {
    conflicting_rules: [{ rule_a: { id: "a-1", text: "Be brief." }, rule_b: { id: "b-1", text: "Be thorough." }, conflict_type: "contradiction" }],
    composition_strategy: "merge",
    conflict_severity: "warning",
  },
  on_violation: { output: "…", violated_rules: [{ id: "honesty-1", text: "Be honest." }], severity: "minor", violation_evidence: "…", retry_count: 0 },
  periodic: { elapsed_ms: 60000, interval_ms: 60000, tick_count: 1 },
};

export const initCommand: Command = {
  name: "init",
  summary: "scaffold a policy directory (policy.yaml, src/index.ts, tests/, tsconfig.json)",
  usage: USAGE,
  async run(args, io) {
    const { values, positionals, help } = parseCommand("init", args, { name: { type: "string" }, type: { type: "string" }, profile: { type: "string" }, event: { type: "string" }, "profile-module": { type: "string", multiple: true } }, { min: 1, max: 1, names: "<dir>" });
    if (help) {
      io.out(USAGE);
      return EXIT_OK;
    }
    const dir = positionals[0]!;
    await loadProfileModules((values["profile-module"] as string[] | undefined) ?? []);
    const profileRef = stringOption("init", values, "profile");
    const profile = profileRef === undefined || /^vcp(@|$)/.test(profileRef) ? undefined : getProfile(profileRef);
    const event = stringOption("init", values, "event") ?? (profile !== undefined ? Object.keys(profile.events)[0]! : undefined);
    if (profile !== undefined && !isProfileEvent(profile, event!)) throw new UsageError(`init: profile ${profile.id} has no event '${event}' (its events: ${Object.keys(profile.events).join(", ")})`);
    const type = (stringOption("init", values, "type") ?? "pre_inject") as HookType;
    if (!HOOK_TYPES.includes(type)) throw new UsageError(`init: unknown hook type '${type}' (expected one of ${HOOK_TYPES.join(", ")})`);
    const bundle = stringOption("init", values, "name") ?? defaultName(dir);
    if (!NAME_PATTERNS.BUNDLE_NAME.regex.test(bundle)) throw new UsageError(`init: bundle name '${bundle}' ${NAME_PATTERNS.BUNDLE_NAME.rule} (pass --name)`);
    if (existsSync(dir) && readdirSync(dir).length > 0) {
      throw new CheckFailed(`${dir} already exists and is not empty; refusing to overwrite (choose a new directory)`, "FILE_EXISTS");
    }
    const files = profile !== undefined ? scaffoldProfile(bundle, profile, event!, dir) : scaffold(bundle, type, dir);
    for (const [path, text] of Object.entries(files)) {
      const full = join(dir, path);
      await mkdir(dirname(full), { recursive: true });
      await writeFile(full, text, { flag: "wx" });
    }
    const what = profile !== undefined ? `${profile.id} ${event}` : type;
    const agent = profile !== undefined ? settingsAgentOf(profile.id) : undefined;
    if (io.json) printJson(io, { dir, bundle, ...(profile !== undefined ? { profile: profile.id, event } : { type }), files: Object.keys(files) });
    else {
      io.out(`created ${dir}/ (bundle '${bundle}', one ${what} hook)`);
      for (const f of Object.keys(files)) io.out(`  ${f}`);
      io.out(`next:\n  vcp-hooks test ${dir}\n  vcp-hooks build ${dir}`);
      if (agent !== undefined) io.out(`  merge ${dir}/${GENERATED_FILE[agent]} into ${SETTINGS_FILE[agent]} (the agent runs 'vcp-hooks hook' for ${event})`);
    }
    return EXIT_OK;
  },
};

function defaultName(dir: string): string {
  return basename(resolve(dir)).toLowerCase().replace(/[^a-z0-9_-]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 64) || "my-policy";
}

/** Where this package's type declarations are, relative to `dir` (for the tsconfig `paths` entry). */
function typesPath(dir: string): string {
  // dist/src/cli/init.js → dist/src/index.d.ts
  const dts = fileURLToPath(new URL("../index.d.ts", import.meta.url));
  return relative(resolve(dir), dts).split("\\").join("/");
}

/** This package's manifest JSON Schema, relative to `dir` (editors read it from the modeline). */
function manifestSchemaPath(dir: string): string {
  // dist/src/cli/init.js → schemas/policy.schema.json (shipped in the package too)
  const schema = fileURLToPath(new URL("../../../schemas/policy.schema.json", import.meta.url));
  return relative(resolve(dir), schema).split("\\").join("/");
}

export function scaffold(bundle: string, type: HookType, dir: string): Record<string, string> {
  // The event interface policy code imports: the model's component name (model/json-schema.ts).
  const eventType = EVENT_SCHEMA_IDS[type];
  const hookName = "check_topic";
  // A periodic abort is treated as continue (spec §3.6), so its "blocked" case completes.
  const abortExpect =
    type === "periodic"
      ? `      status: completed\n      hooks:\n        ${hookName}: { outcome: ok }`
      : `      status: aborted\n      aborted_by: ${hookName}\n      reason: { matches: "blocked by policy" }`;
  const constitution = `{ id: default, version: "1", rules: [ { id: honesty-1, text: Be honest., safety_critical: true } ] }`;
  return {
    "policy.yaml": `# yaml-language-server: $schema=${manifestSchemaPath(dir)}
# Policy bundle manifest (DESIGN §3.1): editors with the YAML language server validate it with the schema above.
bundle: ${bundle}
version: 0.1.0
description: Example ${type} policy generated by vcp-hooks init
trust: deployment          # requested: system | deployment | session (session may only observe/annotate)
entry: src/index.ts
limits: { memory_mb: 32 }
hooks:
  - name: ${hookName}
    type: ${type}
    action: checkTopic     # exported function of src/index.ts
    priority: 50           # 0-100, higher runs first
    timeout_ms: 1000       # 1-30000
    fail_closed: false     # true: a failure of this hook aborts the chain
    # condition: { field: context.dimensions.data_sensitivity, operator: gte, value: 7 }
${type === "periodic" ? "    metadata: { interval_ms: 60000 }\n" : ""}`,
    "src/index.ts": `import type { HookInput, HookResult, ${eventType} } from "vcp-hooks";

/**
 * ${hookName} (${type}): refuse blocked topics, normalize the topic's spelling, annotate the rest.
 * Runs in an isolate: ECMAScript built-ins and the frozen \`vcp\` object only (no Node APIs, no
 * network); side effects leave only as data (the result and its annotations, and vcp.log lines).
 */
const BLOCKED_TOPICS: readonly string[] = ["credentials", "weapons"];

export function checkTopic(input: HookInput<${eventType}>): HookResult {
  const topic = input.context["topic"];
  if (typeof topic !== "string") return { status: "continue" };
  const normalized = topic.trim().toLowerCase();
  if (BLOCKED_TOPICS.includes(normalized)) {
    return { status: "abort", reason: \`topic '\${normalized}' is blocked by policy\` };
  }
  if (normalized !== topic) {
    vcp.log("info", "normalized topic", { from: topic.length, to: normalized.length });
    return { status: "modify", modified_context: { ...input.context, topic: normalized }, annotations: { normalized_topic: normalized } };
  }
  return { status: "continue", annotations: { topic } };
}
`,
    "src/vcp-env.d.ts": VCP_ENV_DTS,
    "tests/example.yaml": `# Cases for 'vcp-hooks test' (see vcp-hooks docs/policies.md, "Test cases").
defaults:
  type: ${type}
  input:
    constitution: ${constitution}
    event: ${JSON.stringify(SAMPLE_EVENTS[type])}
cases:
  - name: an ordinary topic passes with an annotation
    input: { context: { topic: cooking } }
    expect:
      status: completed
      hooks:
        ${hookName}: { status: continue, outcome: ok, annotations: { topic: cooking } }
      context_equals: { topic: cooking }
  - name: a topic is normalized (modify)
    input: { context: { topic: "  Cooking " } }
    expect:
      status: completed
      hooks:
        ${hookName}: { status: modify, outcome: ok }
      context: { topic: cooking }
  - name: a blocked topic is refused
    input: { context: { topic: Credentials } }
    expect:
${abortExpect}
`,
    "tsconfig.json": `${JSON.stringify(
      {
        compilerOptions: {
          target: "ES2024",
          lib: ["ES2024"],
          module: "ESNext",
          moduleResolution: "Bundler",
          strict: true,
          noEmit: true,
          types: [],
          skipLibCheck: true,
          paths: { "vcp-hooks": [typesPath(dir)] },
        },
        include: ["src/**/*.ts"],
      },
      null,
      2,
    )}\n`,
    ".gitignore": "dist/\n",
  };
}

/**
 * An event-profile policy (PROFILES §1.3): one hook of `event` whose action takes the agent's native
 * input JSON and returns native output JSON, and a test case whose expectation is the profile's own
 * answer to the scaffolded output (so the generated policy passes its test as generated).
 */
export function scaffoldProfile(bundle: string, profile: EventProfile, event: string, dir: string): Record<string, string> {
  const hookName = "check_event";
  const spec = profile.events[event];
  // An input the profile accepts for the event (its own input schema fills what the event requires).
  const input: NativeObject = sampleInput(profile, event);
  const ctx = { strict: false, settings: {} };
  const decoded = profile.decode({}, event, ctx);
  const answer = profile.present(profile.reduce(decoded.ok ? [decoded.value] : [], event, ctx), event, ctx);
  const inputOk = profile.validateInput(input, event);
  const files = scaffold(bundle, "pre_inject", dir);
  const agent = settingsAgentOf(profile.id);
  return {
    ...files,
    ...(agent !== undefined ? { [GENERATED_FILE[agent]]: renderAgentSettings(agent, [event]) } : {}),
    "policy.yaml": `# yaml-language-server: $schema=${manifestSchemaPath(dir)}
# Policy bundle manifest (DESIGN §3.1) of the event profile ${profile.id}@${profile.version} (PROFILES §2).
bundle: ${bundle}
version: 0.1.0
description: Example ${profile.id} ${event} policy generated by vcp-hooks init
profile: ${profile.id}@${profile.version}
trust: deployment          # session trust only observes: nothing its hooks return reaches the answer
entry: src/index.ts
limits: { memory_mb: 32 }
hooks:
  - name: ${hookName}
    event: ${event}
    action: checkEvent     # exported function of src/index.ts
${spec?.matcher !== undefined ? `    matcher: "*"           # RE2, tested against the input's ${spec.matcher}\n` : ""}    priority: 50           # 0-100, higher runs first
    timeout_ms: 1000       # 1-${Math.min(profile.timeouts.max_ms, 30_000)}
    fail_closed: false     # true: a failure of this hook produces ${profile.id}'s blocking answer
${profile.execution === "per_definition" ? "    sequential: false      # true: the matching hooks run one after another, chaining their input\n" : ""}`,
    "src/index.ts": `/**
 * ${hookName} (${profile.id} ${event}): receives exactly the JSON a ${profile.id} command hook reads on
 * stdin and returns exactly the JSON it would print. Runs in an isolate: ECMAScript built-ins and the
 * frozen \`vcp\` object only (no Node APIs, no network).
 */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type NativeInput = { [key: string]: Json };
type NativeOutput = { [key: string]: Json };

export function checkEvent(input: NativeInput): NativeOutput {
  vcp.log("debug", "event seen", { event: input["hook_event_name"] ?? "${event}" });
  return {};
}
`,
    "tests/example.yaml": `# Cases for 'vcp-hooks test': the agent's native input in, the merged native answer expected.
${inputOk.ok ? "" : `# NOTE: fill in the input: ${profile.id} ${event} wants more (${inputOk.error}).\n`}defaults:
  event: ${event}
cases:
  - name: the scaffolded hook answers ${profile.id}'s neutral answer
    input: ${JSON.stringify(input)}
    expect:
      native: ${JSON.stringify(answer.native)}
      exit_code: ${answer.exit_code}
      hooks:
        ${hookName}: { outcome: ok }
`,
  };
}

/** Ambient types of the sandbox global (DESIGN §4.3); capabilities a trust level lacks are absent. */
export const VCP_ENV_DTS = `// The sandbox's global \`vcp\` object (DESIGN §4.3). Types only: nothing here is bundled.
declare const vcp: {
  /** A log line (rate- and size-limited, redacted, tagged with bundle and hook). */
  log(level: "debug" | "info" | "warn" | "error", message: string, fields?: Record<string, unknown>): void;
  /** SHA-256 of the UTF-8 text, lowercase hex. */
  sha256(text: string): string;
  /** Wall-clock milliseconds since the epoch. */
  now(): number;
  /** system trust only (absent otherwise): fetch from the deployment's host allowlist; never an LLM endpoint. */
  fetch?: (url: string, init?: { method?: string; headers?: Record<string, string>; body?: string }) => Promise<{ status: number; headers: Record<string, string>; body: string }>;
};
`;
