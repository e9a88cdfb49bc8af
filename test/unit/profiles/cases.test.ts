/**
 * A pure runner for the profile conformance cases (`test/profiles/<profile>/*.yaml`, one case per
 * file): it simulates the plan the framework builds — matcher, priority order, dedup, sequential vs
 * parallel input — and runs every hook's `output` / `throws` / `action` in-process, then asks the
 * profile to decode, fail, strip, chain, reduce and present, and checks `native`, `exit_code`, `ran`
 * and `outcomes`. The same YAML is run through the real runtime and the HTTP route by the framework's
 * runner; cases marked `pure: false` (timeouts, crashes) are left to it.
 *
 * Assumption shared with the real runner: a hook that throws `Error("boom")` fails with why = "boom".
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { parse } from "yaml";
import { z } from "zod";
import { claudeCodeProfile } from "../../../src/profiles/claude-code/index.js";
import { codexProfile } from "../../../src/profiles/codex/index.js";
import { vscodeProfile } from "../../../src/profiles/vscode/index.js";
import { cursorProfile } from "../../../src/profiles/cursor/index.js";
import { openhandsProfile } from "../../../src/profiles/openhands/index.js";
import { gooseProfile } from "../../../src/profiles/goose/index.js";
import { geminiCliProfile } from "../../../src/profiles/gemini-cli/index.js";
import { llxprtProfile } from "../../../src/profiles/llxprt/index.js";
import type { EventProfile, NativeObject } from "../../../src/profiles/types.js";
import { simulate, type SimHook } from "./simulate.js";

const PROFILES: Readonly<Record<string, EventProfile>> = {
  "gemini-cli": geminiCliProfile,
  llxprt: llxprtProfile,
  "claude-code": claudeCodeProfile,
  codex: codexProfile,
  vscode: vscodeProfile,
  cursor: cursorProfile,
  openhands: openhandsProfile,
  goose: gooseProfile,
};
const ROOT = join(import.meta.dirname, "..", "..", "profiles");

const HookCase = z
  .strictObject({
    name: z.string().regex(/^[a-z0-9_-]{1,64}$/),
    matcher: z.string().optional(),
    sequential: z.boolean().optional(),
    priority: z.number().int().optional(),
    timeout_ms: z.number().int().positive().optional(),
    fail_closed: z.boolean().optional(),
    trust: z.enum(["system", "deployment", "session"]).optional(),
    // Checked by the real runner only (conditions run in the framework's plan): such cases are `pure: false`.
    condition: z.unknown().optional(),
    output: z.unknown().optional(),
    throws: z.string().optional(),
    action: z.string().optional(),
  })
  .refine((h) => [h.output !== undefined, h.throws !== undefined, h.action !== undefined].filter(Boolean).length === 1, "exactly one of output, throws, action");

const Case = z.strictObject({
  name: z.string().min(1),
  upstream: z.string().optional(),
  profile: z.enum(["gemini-cli", "llxprt", "claude-code", "codex", "vscode", "cursor", "openhands", "goose"]),
  event: z.string(),
  strict: z.boolean().optional(),
  pure: z.boolean().optional(),
  hooks: z.array(HookCase),
  input: z.record(z.string(), z.unknown()),
  expect: z.strictObject({
    native: z.record(z.string(), z.unknown()).optional(),
    // Checked by the real runner only (test/profiles/runner.ts): such cases are `pure: false`.
    native_subset: z.record(z.string(), z.unknown()).optional(),
    exit_code: z.union([z.literal(0), z.literal(1), z.literal(2)]),
    ran: z.array(z.string()).optional(),
    outcomes: z.record(z.string(), z.string()).optional(),
    stderr: z.string().optional(),
  }),
});
type Case = z.infer<typeof Case>;
type HookCase = z.infer<typeof HookCase>;

function loadCases(): Array<{ file: string; data: Case }> {
  const out: Array<{ file: string; data: Case }> = [];
  // The agent profiles' folders; the others (amplifier, ai-memory, repo-yaml) have their own pure runner
  // (more-cases.test.ts), and every folder runs through the real runtime in test/profiles/.
  const agentProfiles = new Set(["gemini-cli", "llxprt", "claude-code", "codex", "vscode", "cursor", "openhands", "goose"]);
  for (const profile of readdirSync(ROOT, { withFileTypes: true }).filter((e) => e.isDirectory() && agentProfiles.has(e.name)).map((e) => e.name).sort()) {
    for (const file of readdirSync(join(ROOT, profile)).filter((f) => f.endsWith(".yaml")).sort()) {
      const path = join(ROOT, profile, file);
      const parsed = Case.safeParse(parse(readFileSync(path, "utf8")));
      if (!parsed.success) throw new Error(`${profile}/${file}: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
      if (parsed.data.profile !== profile) throw new Error(`${profile}/${file}: profile ${parsed.data.profile} in the ${profile}/ folder`);
      out.push({ file: `${profile}/${file}`, data: parsed.data });
    }
  }
  return out;
}

const clone = <T>(value: T): T => structuredClone(value);

/**
 * A case hook as a {@link SimHook}: `output`, `throws` or an `action` body run in-process (test-only).
 * Hooks with the same `output` / `throws` / `action` are the same action, so with the same matcher
 * they are one definition and dedup keeps the first (PROFILES §8.6).
 */
function toSimHook(hook: HookCase): SimHook {
  const action_name = JSON.stringify([hook.output, hook.throws, hook.action]);
  const run = hook.throws !== undefined
    ? () => { throw new Error(hook.throws); }
    : hook.output !== undefined
      ? () => clone(hook.output)
      : (new Function("input", hook.action!) as (input: NativeObject) => unknown);
  return { ...hook, action_name, run };
}

const CASES = loadCases();

test("the case set meets the issue's floor: ≥ 40 gemini-cli + llxprt, ≥ 10 claude-code, every strict switch both ways", () => {
  const count = (p: string) => CASES.filter((c) => c.data.profile === p).length;
  expect(count("gemini-cli") + count("llxprt")).toBeGreaterThanOrEqual(40);
  expect(count("claude-code")).toBeGreaterThanOrEqual(10);
  for (const p of ["gemini-cli", "llxprt"]) {
    // Each strict switch has a strict case and a compat case with the same event.
    const strictEvents = new Set(CASES.filter((c) => c.data.profile === p && c.data.strict === true).map((c) => c.data.event));
    expect(strictEvents.size).toBeGreaterThanOrEqual(PROFILES[p]!.strictFixes.length);
    for (const event of strictEvents) {
      expect(CASES.some((c) => c.data.profile === p && c.data.event === event && c.data.strict !== true && c.data.name.includes("compat"))).toBe(true);
    }
  }
});

test("claude-code: every event of Claude Code 2.1.332 has a case", () => {
  const covered = new Set(CASES.filter((c) => c.data.profile === "claude-code").map((c) => c.data.event));
  expect(Object.keys(claudeCodeProfile.events).filter((event) => !covered.has(event))).toEqual([]);
});

describe.each(CASES.filter((c) => c.data.pure !== false).map((c) => [c.file, c.data] as const))("%s", (_file, c) => {
  test(c.name, () => {
    const got = simulate(PROFILES[c.profile]!, c.event, c.input, c.hooks.map(toSimHook), c.strict ?? false);
    expect(c.expect.native, "a pure case states its whole native answer").toBeDefined();
    expect(got.native).toEqual(c.expect.native);
    expect(got.exit_code).toBe(c.expect.exit_code);
    if (c.expect.stderr !== undefined) expect(got.stderr).toBe(c.expect.stderr);
    if (c.expect.ran !== undefined) expect(got.ran).toEqual(c.expect.ran);
    if (c.expect.outcomes !== undefined) expect(got.outcomes).toMatchObject(c.expect.outcomes);
  });
});
