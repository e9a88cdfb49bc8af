/**
 * A pure runner for the conformance cases of the amplifier, ai-memory and repo-yaml profiles
 * (`test/profiles/<profile>/*.yaml`, one case per file). It simulates what the framework's executor
 * does — plan (matcher, `match` filter, the profile's ordering then registration order), stamp, run,
 * decode, failure outputs, observer views, chaining, stop, fold, present — with the actions run as
 * plain functions. Cases marked `pure: false` need the real runner (timeouts, deadlines) and are
 * skipped here.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { aiMemoryProfile } from "../../../src/profiles/ai-memory/index.js";
import { amplifierProfile } from "../../../src/profiles/amplifier/index.js";
import { repoYamlProfile } from "../../../src/profiles/repo-yaml/index.js";
import type { EventProfile, HookOutputEntry, NativeObject, PresentedAnswer, ProfileContext } from "../../../src/profiles/types.js";

const PROFILES: Record<string, EventProfile> = { amplifier: amplifierProfile, "ai-memory": aiMemoryProfile, "repo-yaml": repoYamlProfile };
const NOW = "2026-11-26T04:00:00.000Z";
const ROOT = join(import.meta.dirname, "../../profiles");

interface CaseHook {
  name: string;
  priority?: number;
  matcher?: string;
  match?: unknown;
  blocking?: boolean;
  timeout_ms?: number;
  fail_closed?: boolean;
  trust?: string;
  output?: unknown;
  throws?: string;
  action?: string;
}

export interface ProfileCase {
  name: string;
  upstream?: string;
  profile: string;
  event: string;
  strict?: boolean;
  settings?: Record<string, unknown>;
  pure?: boolean;
  hooks: CaseHook[];
  input: unknown;
  expect: { native?: NativeObject; native_subset?: NativeObject; exit_code?: number; ran?: string[]; outcomes?: Record<string, string> };
}

export interface SimulatedRun {
  answer: PresentedAnswer;
  ran: string[];
  outcomes: Record<string, string>;
  /** What each hook received, by name (the chained input). */
  seen: Record<string, NativeObject>;
}

/** Run one case the way the executor would, with no sandbox and no clock (the stamp is {@link NOW}). */
export function simulate(c: ProfileCase): SimulatedRun {
  const p = PROFILES[c.profile];
  if (p === undefined) throw new Error(`unknown profile ${c.profile}`);
  const ctx: ProfileContext = { strict: c.strict ?? false, settings: c.settings ?? {} };
  const validated = p.validateInput(c.input, c.event);
  if (!validated.ok) throw new Error(`input refused: ${validated.error}`);
  let input = validated.value;
  const outcomes: Record<string, string> = {};
  const defs = c.hooks.map((h, index) => ({ ...h, index, priority: h.priority ?? 50 }));
  const plan = defs.filter((h) => {
    const hit = p.compileMatcher(h.matcher, c.event)(input) && (h.match === undefined || p.compileFilter!(h.match, c.event)(input));
    if (!hit) outcomes[h.name] = "skipped_matcher";
    return hit;
  });
  if (p.ordering === "priority_desc") plan.sort((a, b) => b.priority - a.priority || a.index - b.index);
  else if (p.ordering === "priority_asc") plan.sort((a, b) => a.priority - b.priority || a.index - b.index);

  if (plan.length === 0) {
    const agg = p.emptyPlanAnswer?.(c.event, ctx) ?? (p.reduceWithHooks ? p.reduceWithHooks([], c.event, ctx, input) : p.reduce([], c.event, ctx));
    return { answer: p.present(agg, c.event, ctx), ran: [], outcomes, seen: {} };
  }
  const unstamped = input;
  if (p.stampInput) input = p.stampInput(input, c.event, NOW);
  const first = input;
  const entries: HookOutputEntry[] = [];
  const ran: string[] = [];
  const seen: Record<string, NativeObject> = {};
  for (const h of plan) {
    ran.push(h.name);
    seen[h.name] = structuredClone(input);
    let why: string | undefined;
    let raw: unknown;
    try {
      if (h.throws !== undefined) throw new Error(h.throws);
      // Test-only: the case's action body, as the guest would run it.
      raw = h.action !== undefined ? new Function("input", h.action)(structuredClone(input)) : structuredClone(h.output);
    } catch (e) {
      why = (e as Error).message;
      outcomes[h.name] = "error";
    }
    let output: NativeObject | undefined;
    if (why === undefined) {
      const d = p.decode(raw, c.event, ctx);
      if (d.ok) output = d.value;
      else {
        why = d.error;
        outcomes[h.name] = "invalid_result";
      }
    }
    if (h.trust === "session") {
      // As the executor: an observer's output (or failure) is withheld; what it said makes it capability_denied (spec §8.3).
      if (output !== undefined) outcomes[h.name] = p.answerFields(output, c.event).length > 0 ? "capability_denied" : "ok";
      continue;
    }
    let failed = false;
    if (output === undefined) {
      output = p.failureOutput(h.name, why!, (h.fail_closed ?? false) || (h.blocking ?? false), c.event, ctx);
      failed = true;
    } else {
      outcomes[h.name] = "ok";
    }
    const entry: { hook: string; output: NativeObject; failed?: boolean; blocking?: boolean } = { hook: h.name, output };
    if (failed) entry.failed = true;
    if (h.blocking === true) entry.blocking = true;
    entries.push(entry);
    if (p.stopsChain?.(output, c.event, ctx)) break;
    if (!failed && p.chainInput) input = p.chainInput(input, output, c.event, ctx);
  }
  // The fold sees the stamped input only when a hook contributed (Amplifier: no timestamp when no handler ran).
  const agg = p.reduceWithHooks ? p.reduceWithHooks(entries, c.event, ctx, entries.length > 0 ? first : unstamped) : p.reduce(entries.map((e) => e.output), c.event, ctx);
  return { answer: p.present(agg, c.event, ctx), ran, outcomes, seen };
}

export function loadCases(profile: string): Array<{ file: string; c: ProfileCase }> {
  const dir = join(ROOT, profile);
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .sort()
    .map((file) => ({ file, c: parse(readFileSync(join(dir, file), "utf8")) as ProfileCase }));
}

for (const profile of Object.keys(PROFILES)) {
  const cases = loadCases(profile);
  describe(`${profile} conformance cases (pure runner)`, () => {
    it("has at least 12 cases, one per file, each for this profile", () => {
      expect(cases.length).toBeGreaterThanOrEqual(12);
      for (const { file, c } of cases) {
        expect(c.profile, file).toBe(profile);
        expect(typeof c.name, file).toBe("string");
        expect(Array.isArray(c.hooks), file).toBe(true);
        expect(c.expect.native !== undefined || c.expect.native_subset !== undefined, `${file}: expect.native or native_subset`).toBe(true);
      }
    });
    for (const { file, c } of cases) {
      const run = c.pure === false ? it.skip : it;
      run(`${file}: ${c.name}`, () => {
        const r = simulate(c);
        if (c.expect.native !== undefined) expect(r.answer.native).toEqual(c.expect.native);
        if (c.expect.native_subset !== undefined) expect(r.answer.native).toMatchObject(c.expect.native_subset);
        if (c.expect.exit_code !== undefined) expect(r.answer.exit_code).toBe(c.expect.exit_code);
        if (c.expect.ran !== undefined) expect(r.ran).toEqual(c.expect.ran);
        if (c.expect.outcomes !== undefined) expect(r.outcomes).toMatchObject(c.expect.outcomes);
      });
    }
  });
}
