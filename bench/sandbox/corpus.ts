/**
 * Reads the adversarial corpus (sandbox/corpus/README.md) WITHOUT executing it: the metadata is a
 * JSON block comment parsed as text, and the code only ever reaches esbuild and the sandbox.
 *
 * Shared by test/adversarial/corpus.test.ts (which imports this source through vitest) and the
 * sandbox bench (which runs compiled from dist/bench/sandbox/), so the corpus directory is found by
 * walking up to the repository root rather than by a fixed relative path.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

/** The repository root: the nearest ancestor holding sandbox/corpus/README.md. */
export function findRepoRoot(from: string = import.meta.dirname): string {
  let dir = resolve(from);
  for (;;) {
    if (existsSync(join(dir, "sandbox", "corpus", "README.md"))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no sandbox/corpus/README.md above ${from}`);
    dir = parent;
  }
}

export const CORPUS_DIR = join(findRepoRoot(), "sandbox", "corpus");

export const CATEGORIES = [
  "resource-exhaustion",
  "process-killers",
  "escape-probes",
  "exfiltration",
  "result-tampering",
  "cross-call",
  "predicate-dos",
  "profile-hooks",
] as const;
export type Category = (typeof CATEGORIES)[number];

export const OUTCOMES = [
  "ok", "skipped_predicate", "timeout", "error", "invalid_result", "capability_denied", "crashed",
  // Event-profile chains only (PROFILES §2): a matcher that did not match, a hook cut at (or never run
  // for lack of) its event class's chain deadline.
  "skipped_matcher", "deadline_exceeded", "deadline_exhausted",
] as const;
export type ExpectedOutcome = (typeof OUTCOMES)[number];
export type Recycled = "none" | "isolate" | "process";
type HookTypeName = "pre_inject" | "post_select" | "on_conflict" | "on_violation" | "periodic";

export interface OutcomeExpectation {
  kind: "outcome";
  outcome: ExpectedOutcome;
  /**
   * Outcomes also accepted where scheduling legitimately decides which one the last call sees (e.g.
   * when isolated-vm notices a memory overshoot); the case still asserts containment: status, the
   * canary served afterwards, what was recycled. `errorMatches` applies to `outcome` only.
   */
  outcomeAlso: ExpectedOutcome[];
  status: "continue" | "abort" | "modify";
  errorMatches: RegExp | null;
  errorNotMatches: RegExp | null;
  annotations: Record<string, unknown> | null;
  context: Record<string, unknown> | null;
  maxDurationMs: number | null;
  maxFireMs: number;
  recycled: Recycled;
}
export interface InstallErrorExpectation {
  kind: "install_error";
  code: string;
  recycled: Recycled;
}

/**
 * An attack through an event profile (`profile` in the metadata, README "Profile cases"): the action
 * speaks the profile's native protocol and the chain is fired with `runtime.fireProfile`.
 */
export interface ProfileAttack {
  /** Profile name as a manifest and the route say it: `gemini-cli`, `claude-code`, `amplifier`, … */
  id: string;
  event: string;
  /** Native input, merged over the profile's default input for the event (fixtures.ts). */
  input: Record<string, unknown>;
  matcher: string | null;
  sequential: boolean;
  /** repo-yaml `blocking` and `match` filters (PROFILES §8.8). */
  blocking: boolean;
  match: Record<string, unknown> | null;
  /** Install the profile's well-behaved companion hook on the same event; it must run `ok` after the attack. */
  companion: boolean;
  /** Keys (dotted paths) of the native answer, each deep-equal to the value given. */
  native: Record<string, unknown>;
  /** Keys (dotted paths) of the native answer whose JSON text must match the expression. */
  nativeMatches: Record<string, RegExp>;
  /** Dotted paths that must be absent from the native answer. */
  nativeAbsent: string[];
  exitCode: number | null;
  /** Cap on the JSON size of the native answer (what the agent has to read). */
  maxNativeBytes: number;
}

export interface CorpusCase {
  id: string;
  category: Category;
  title: string;
  file: string;
  /** `type` is null for a profile case (its event is `profile.event`). */
  hook: { type: HookTypeName | null; timeout_ms: number; trust: "system" | "deployment" | "session"; condition: unknown; fail_closed: boolean };
  profile: ProfileAttack | null;
  isolation: "shared" | "per_session";
  calls: number;
  sessions: string[];
  input: { context?: Record<string, unknown>; event?: Record<string, unknown>; constitution?: Record<string, unknown> };
  networkProbe: boolean;
  expect: OutcomeExpectation | InstallErrorExpectation;
}

const HEADER = /^\/\*\s*corpus\s+(\{[\s\S]*?\})\s*\*\//;
const ID = /^[a-z0-9-]{1,60}$/;
const HOOK_TYPES = new Set(["pre_inject", "post_select", "on_conflict", "on_violation", "periodic"]);

/** Every case of the corpus, sorted by category then id. Throws on a malformed file. */
export function loadCorpus(dir: string = CORPUS_DIR): CorpusCase[] {
  const cases: CorpusCase[] = [];
  for (const category of readdirSync(dir, { withFileTypes: true })) {
    if (!category.isDirectory()) continue;
    for (const entry of readdirSync(join(dir, category.name), { withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith(".js")) continue;
      cases.push(parseCase(join(dir, category.name, entry.name), category.name));
    }
  }
  const ids = new Set<string>();
  for (const c of cases) {
    if (ids.has(c.id)) throw new Error(`${c.file}: duplicate corpus id '${c.id}'`);
    ids.add(c.id);
  }
  return cases.sort((a, b) => CATEGORIES.indexOf(a.category) - CATEGORIES.indexOf(b.category) || a.id.localeCompare(b.id));
}

export function parseCase(file: string, directory: string): CorpusCase {
  const text = readFileSync(file, "utf8");
  const match = HEADER.exec(text);
  const fail = (why: string): never => {
    throw new Error(`${file}: ${why}`);
  };
  if (!match?.[1]) return fail("must start with a /* corpus {...} */ metadata comment");
  let meta: Record<string, any>;
  try {
    meta = JSON.parse(match[1]) as Record<string, any>;
  } catch (err) {
    return fail(`metadata is not JSON: ${(err as Error).message}`);
  }
  const id = meta["id"];
  if (typeof id !== "string" || !ID.test(id)) fail("id must match [a-z0-9-]{1,60}");
  if (!file.endsWith(`/${id}.js`)) fail(`file name must be ${id}.js`);
  if (!(CATEGORIES as readonly string[]).includes(meta["category"]) || meta["category"] !== directory) {
    fail(`category must be one of ${CATEGORIES.join(", ")} and equal the directory '${directory}'`);
  }
  if (typeof meta["title"] !== "string" || meta["title"].length === 0) fail("title is required");
  const hook = meta["hook"] ?? fail("hook is required");
  const profile = meta["profile"] === undefined ? null : parseProfile(meta["profile"], fail);
  if (profile === null && !HOOK_TYPES.has(hook.type)) fail(`hook.type must be one of ${[...HOOK_TYPES].join(", ")} (on_transition is the canary's)`);
  if (profile !== null && hook.type !== undefined) fail("a profile case names its event in profile.event, not hook.type");
  if (!Number.isInteger(hook.timeout_ms)) fail("hook.timeout_ms must be an integer");
  if (!["system", "deployment", "session"].includes(hook.trust)) fail("hook.trust must be system, deployment or session");
  if (!("condition" in hook)) fail("hook.condition is required (null for none)");
  const calls = meta["calls"];
  if (!Number.isInteger(calls) || calls < 1 || calls > 10) fail("calls must be an integer in [1, 10]");
  const sessions: string[] = Array.isArray(meta["sessions"]) ? meta["sessions"] : Array.from({ length: calls }, () => `s-${id}`);
  if (sessions.length !== calls) fail("sessions must name one session per call");
  const e = meta["expect"] ?? fail("expect is required");
  const recycled = e.recycled;
  if (!["none", "isolate", "process"].includes(recycled)) fail("expect.recycled must be none, isolate or process");

  let expectation: CorpusCase["expect"];
  if (typeof e.install_error === "string") {
    expectation = { kind: "install_error", code: e.install_error, recycled };
  } else {
    if (!(OUTCOMES as readonly string[]).includes(e.outcome)) fail(`expect.outcome must be one of ${OUTCOMES.join(", ")}`);
    const also: unknown = e.outcome_also ?? [];
    if (!Array.isArray(also) || also.some((o) => !(OUTCOMES as readonly string[]).includes(o as string))) fail(`expect.outcome_also must be a list of ${OUTCOMES.join(", ")}`);
    if (!["continue", "abort", "modify"].includes(e.status)) fail("expect.status must be continue, abort or modify");
    if (!("error_matches" in e) || !("annotations" in e)) fail("expect.error_matches and expect.annotations are required (null for none)");
    expectation = {
      kind: "outcome",
      outcome: e.outcome,
      outcomeAlso: also as ExpectedOutcome[],
      status: e.status,
      errorMatches: e.error_matches === null ? null : new RegExp(e.error_matches),
      errorNotMatches: typeof e.error_not_matches === "string" ? new RegExp(e.error_not_matches) : null,
      annotations: e.annotations,
      context: e.context ?? null,
      maxDurationMs: typeof e.max_duration_ms === "number" ? e.max_duration_ms : null,
      maxFireMs: typeof e.max_fire_ms === "number" ? e.max_fire_ms : e.outcome === "crashed" ? 20_000 : hook.timeout_ms + 5_000,
      recycled,
    };
  }
  return {
    id: id as string,
    category: meta["category"],
    title: meta["title"],
    file,
    hook: {
      type: profile === null ? hook.type : null,
      timeout_ms: hook.timeout_ms,
      trust: hook.trust,
      condition: expand(hook.condition),
      fail_closed: hook.fail_closed === true,
    },
    profile,
    isolation: meta["isolation"] === "per_session" ? "per_session" : "shared",
    calls,
    sessions,
    input: (expand(meta["input"] ?? {}) as CorpusCase["input"]),
    networkProbe: meta["network_probe"] === true,
    expect: expectation,
  };
}

const PROFILE_IDS = new Set(["gemini-cli", "llxprt", "claude-code", "amplifier", "ai-memory", "repo-yaml"]);

function parseProfile(p: Record<string, any>, fail: (why: string) => never): ProfileAttack {
  if (typeof p !== "object" || p === null) fail("profile must be an object");
  if (!PROFILE_IDS.has(p["id"])) fail(`profile.id must be one of ${[...PROFILE_IDS].join(", ")}`);
  if (typeof p["event"] !== "string" || p["event"] === "") fail("profile.event is required");
  const input = expand(p["input"] ?? {});
  if (typeof input !== "object" || input === null || Array.isArray(input)) fail("profile.input must be an object");
  const e = p["expect"] ?? {};
  const matches: Record<string, RegExp> = {};
  for (const [k, v] of Object.entries((e["native_matches"] ?? {}) as Record<string, unknown>)) {
    if (typeof v !== "string") fail(`profile.expect.native_matches.${k} must be a regular expression string`);
    matches[k] = new RegExp(v as string);
  }
  const absent: unknown = e["native_absent"] ?? [];
  if (!Array.isArray(absent) || absent.some((a) => typeof a !== "string")) fail("profile.expect.native_absent must be a list of paths");
  return {
    id: p["id"],
    event: p["event"],
    input: input as Record<string, unknown>,
    matcher: typeof p["matcher"] === "string" ? p["matcher"] : null,
    sequential: p["sequential"] === true,
    blocking: p["blocking"] === true,
    match: typeof p["match"] === "object" && p["match"] !== null ? (expand(p["match"]) as Record<string, unknown>) : null,
    companion: p["companion"] === true,
    native: (expand(e["native"] ?? {}) as Record<string, unknown>),
    nativeMatches: matches,
    nativeAbsent: absent as string[],
    exitCode: typeof e["exit_code"] === "number" ? e["exit_code"] : null,
    maxNativeBytes: typeof e["max_native_bytes"] === "number" ? e["max_native_bytes"] : 65_536,
  };
}

/** Expand the compact forms of README "Compact forms". */
export function expand(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(expand);
  if (value === null || typeof value !== "object") return value;
  const o = value as Record<string, unknown>;
  const keys = Object.keys(o);
  if (Array.isArray(o["repeat"]) && keys.every((k) => ["repeat", "prefix", "suffix"].includes(k))) {
    const [unit, count] = o["repeat"] as [string, number];
    return String(o["prefix"] ?? "") + unit.repeat(count) + String(o["suffix"] ?? "");
  }
  if (Array.isArray(o["range"]) && keys.length === 1) {
    const [prefix, count] = o["range"] as [unknown, number];
    // The prefix may itself be a compact form (`{"range": [{"repeat": ["a", 200]}, 3]}`).
    const text = String(expand(prefix));
    return Array.from({ length: count }, (_, i) => `${text}${i}`);
  }
  if (typeof o["nest"] === "number" && "leaf" in o && keys.length === 2) {
    let p: unknown = expand(o["leaf"]);
    for (let i = 0; i < (o["nest"] as number); i++) p = { combine: "and", children: [p] };
    return p;
  }
  return Object.fromEntries(keys.map((k) => [k, expand(o[k])]));
}
