// Manifest rules of event profiles (PROFILES §2) in parseManifest, the one validation build and install
// run: bad input → a coded error whose message names the path; the profile catalogue; config profiles:.
import { describe, expect, test } from "vitest";
import { parseManifest, parseManifestYaml } from "../../../src/bundle/manifest.js";
import { manifestProfileHooks } from "../../../src/bundle/hooks.js";
import { resolveConfig } from "../../../src/config/config.js";
import { getProfile, listProfiles, parseProfileRef, registerProfile, vcpProfile } from "../../../src/profiles/index.js";
import { resolveEnabledProfiles } from "../../../src/profiles/enabled.js";
import echoProfile from "../../support/echo-profile.js";
import { MAX_MATCHER_COST } from "../../../src/profiles/common/scan.js";
import { compileRepoYamlFilter, repoYamlProfile } from "../../../src/profiles/repo-yaml/index.js";
import type { VcpError } from "../../../src/errors.js";

registerProfile(echoProfile);

const hook = (extra: Record<string, unknown> = {}) => ({ name: "h", action: "h", priority: 50, timeout_ms: 1000, event: "Check", ...extra });
const manifest = (extra: Record<string, unknown> = {}, hooks: unknown[] = [hook()]) => ({ bundle: "b", version: "1.0.0", profile: "echo", hooks, ...extra });

describe("parseManifest with a profile", () => {
  test("a valid echo manifest parses; vcp manifests without profile are unchanged", () => {
    expect(parseManifest(manifest()).profile).toBe("echo");
    const vcp = parseManifest({ bundle: "v", version: "1.0.0", hooks: [{ name: "v", type: "pre_inject", action: "v", priority: 50, timeout_ms: 1000 }] });
    expect(vcp.profile).toBeUndefined();
    expect(vcp.hooks[0]).not.toHaveProperty("event");
  });

  test.each([
    ["unknown profile", manifest({ profile: "nosuch" }), "UNKNOWN_PROFILE", "profile: unknown profile 'nosuch'"],
    ["pinned version that is not the catalogued one", manifest({ profile: "echo@2" }), "UNKNOWN_PROFILE", "profile: profile 'echo@2': this runtime pins echo@1"],
    ["malformed reference", manifest({ profile: "Echo!" }), "UNKNOWN_PROFILE", "profile: 'Echo!' is not a profile reference"],
    ["unknown event", manifest({}, [hook({ event: "Nope" })]), "UNKNOWN_EVENT", "hooks[0].event: 'Nope' is not an event of profile echo"],
    ["missing event", manifest({}, [hook({ event: undefined })]), "INVALID_BUNDLE", "hooks[0].event: required"],
    ["a VCP type on a profile hook", manifest({}, [hook({ type: "pre_inject" })]), "INVALID_BUNDLE", "hooks[0].type: a echo hook names an event"],
    ["a matcher RE2 cannot compile", manifest({}, [hook(), hook({ name: "g", matcher: "(?<=a)b" })]), "INVALID_MATCHER", "hooks[1].matcher: hook 'g':"],
    ["sequential on a vcp hook", { bundle: "v", version: "1.0.0", hooks: [{ name: "v", type: "pre_inject", action: "v", priority: 50, timeout_ms: 1000, sequential: true }] }, "INVALID_BUNDLE", "hooks[0].sequential: only for bundles of an event profile"],
    ["a vcp hook without type", { bundle: "v", version: "1.0.0", hooks: [{ name: "v", action: "v", priority: 50, timeout_ms: 1000 }] }, "INVALID_BUNDLE", "hooks[0].type: must be one of the six hook types"],
    ["session scope on a profile hook", manifest({}, [hook({ scope: "session" })]), "INVALID_BUNDLE", "hooks[0].scope: session-scope hooks are not supported"],
    ["a matcher that is not a string", manifest({}, [hook({ matcher: 5 })]), "INVALID_BUNDLE", "hooks[0].matcher: must be a string"],
  ])("%s → %s naming the path", (_name, raw, code, message) => {
    let caught: unknown;
    try {
      parseManifest(raw, "policy.yaml");
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ code });
    expect((caught as Error).message).toContain(message);
  });

  test("sequential on a profile that does not run per definition is refused", () => {
    registerProfile({ ...echoProfile, id: "echo-seq", execution: "sequential" });
    expect(() => parseManifest(manifest({ profile: "echo-seq" }, [hook({ sequential: true })]))).toThrow(/hooks\[0\]\.sequential: profile echo-seq runs its hooks sequentially always/);
  });

  test("the YAML form adds the line of the bad matcher", () => {
    const yaml = "bundle: b\nversion: 1.0.0\nprofile: echo\nhooks:\n  - name: h\n    action: h\n    event: Check\n    priority: 50\n    timeout_ms: 1000\n    matcher: \"(?<=a)b\"\n";
    expect(() => parseManifestYaml(yaml, "policy.yaml")).toThrow(/hooks\[0\]\.matcher \(line 10, column \d+\)/);
  });
});

describe("repo-yaml match and blocking, default priority (PROFILES §8.5, §8.8)", () => {
  const repoHook = (extra: Record<string, unknown> = {}) => ({ name: "guard", action: "guard", timeout_ms: 1000, event: "PreAbilityCall", ...extra });
  const repo = (hooks: unknown[]) => ({ bundle: "r", version: "1.0.0", profile: "repo-yaml", trust: "deployment", hooks });

  test("match and blocking reach the profile hook definitions; a profile hook without priority has 50", () => {
    const m = parseManifest(repo([repoHook({ match: { ability_scope: "fs.*", only_if_changed_paths: ["src/**"] }, blocking: true })]));
    expect(manifestProfileHooks(m, "d1")[0]).toMatchObject({ name: "guard", priority: 50, blocking: true, match: { ability_scope: "fs.*", only_if_changed_paths: ["src/**"] } });
    expect(manifestProfileHooks(parseManifest(manifest({}, [hook({ priority: undefined })])))[0]!.priority).toBe(50);
  });

  test.each([
    ["gemini-cli", "BeforeTool", 30_000], // upstream 60 s, capped at the sandbox's 30 s
    ["ai-memory", "pre_store", 5_000],
    ["repo-yaml", "SessionStart", 30_000],
  ])("a %s hook without timeout_ms gets the profile's default (%s → %d ms)", (profile, event, ms) => {
    const m = parseManifest({ bundle: "t", version: "1.0.0", profile, trust: "deployment", hooks: [{ name: "h", action: "h", event }] });
    expect(manifestProfileHooks(m)[0]).toMatchObject({ timeout_ms: ms, priority: 50 });
  });

  test.each([
    ["an empty ability_scope glob", repo([repoHook({ match: { ability_scope: "" } })]), "INVALID_MATCHER", "hooks[0].match.ability_scope: hook 'guard':"],
    ["a changed-paths glob that is not a string", repo([repoHook({ match: { only_if_changed_paths: ["src/**", 7] } })]), "INVALID_MATCHER", "hooks[0].match.only_if_changed_paths[1]: hook 'guard':"],
    ["an unknown match filter", repo([repoHook({ match: { abilty_scope: "fs.*" } })]), "INVALID_MATCHER", "hooks[0].match: hook 'guard': unknown field(s): abilty_scope"],
    ["ability_scope on an event without ability_id", repo([repoHook({ event: "UserPromptSubmit", match: { ability_scope: "fs.*" } })]), "INVALID_MATCHER", "hooks[0].match.ability_scope: hook 'guard': UserPromptSubmit has no ability_id"],
    ["min_duration_ms before the call ran", repo([repoHook({ match: { min_duration_ms: 10 } })]), "INVALID_MATCHER", "hooks[0].match.min_duration_ms: hook 'guard': PreAbilityCall has no duration_ms"],
    ["blocking that is not a boolean", repo([repoHook({ blocking: "yes" })]), "INVALID_BUNDLE", "hooks[0].blocking: must be a boolean"],
    ["match on a profile without match filters", manifest({}, [hook({ match: { ability_scope: "x" } })]), "INVALID_BUNDLE", "hooks[0].match: profile echo has no match filters"],
    ["blocking on a profile without blocking hooks", manifest({}, [hook({ blocking: true })]), "INVALID_BUNDLE", "hooks[0].blocking: profile echo has no blocking hooks"],
    ["match on a vcp hook", { bundle: "v", version: "1.0.0", hooks: [{ name: "v", type: "pre_inject", action: "v", priority: 50, timeout_ms: 1000, match: {} }] }, "INVALID_BUNDLE", "hooks[0].match: only for bundles of an event profile"],
    ["a vcp hook without timeout_ms (spec §6.2.5: no default)", { bundle: "v", version: "1.0.0", hooks: [{ name: "v", type: "pre_inject", action: "v", priority: 50 }] }, "INVALID_BUNDLE", "hooks[0].timeout_ms: must be an integer in [1, 30000] (spec §6.2.5)"],
    ["a vcp hook without priority (spec §6.2.4: no default)", { bundle: "v", version: "1.0.0", hooks: [{ name: "v", type: "pre_inject", action: "v", timeout_ms: 1000 }] }, "INVALID_BUNDLE", "hooks[0].priority: must be an integer in [0, 100] (spec §6.2.4)"],
  ])("%s → %s naming the path", (_name, raw, code, message) => {
    let caught: unknown;
    try {
      parseManifest(raw, "policy.yaml");
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ code });
    expect((caught as Error).message).toContain(message);
  });
});

describe("matcher scan cost at build and install (profiles/common/scan.ts)", () => {
  const repoHook = (extra: Record<string, unknown> = {}) => ({ name: "guard", action: "guard", timeout_ms: 1000, event: "PostAbilityCall", ...extra });
  const repo = (hooks: unknown[]) => ({ bundle: "r", version: "1.0.0", profile: "repo-yaml", trust: "deployment", hooks });
  const bait = "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b";

  test("a match filter that may scan more than maxMatcherCost is INVALID_MATCHER naming the hook and the limit", () => {
    const heavy = { ability_scope: bait, only_if_changed_paths: [bait, "{a,aa,aaa}*{a,aa}*{a,aa}*{a,aa}*{a,aa}*{a,aa}*{a,aa}*{a,aa}*c"] };
    let caught: unknown;
    try {
      parseManifest(repo([repoHook({ name: "ok" }), repoHook({ match: heavy })]), "policy.yaml");
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ code: "INVALID_MATCHER", details: { hook: "guard", limit: "maxMatcherCost", max: MAX_MATCHER_COST } });
    expect((caught as VcpError).message).toContain("hooks[1].match: hook 'guard': its matcher and match filters may scan");
    expect((caught as VcpError).message).toContain(`at most ${MAX_MATCHER_COST} are allowed (limit maxMatcherCost)`);
    expect((caught as VcpError).details!["cost"]).toBeGreaterThan(MAX_MATCHER_COST);
  });

  test("a matcher and a filter are counted together; each alone is accepted", () => {
    // The most `src/**/*.tN` globs a filter may hold alone, then check the bait matcher tips it over.
    const globs = (n: number) => Array.from({ length: n }, (_, i) => `src/**/*.t${i}`);
    const filterCost = (n: number) => compileRepoYamlFilter({ only_if_changed_paths: globs(n) }, "PostAbilityCall").cost;
    let n = 1;
    while (filterCost(n + 1) <= MAX_MATCHER_COST) n++;
    const matcherCost = repoYamlProfile.compileMatcher(bait, "PostAbilityCall").cost;
    expect(filterCost(n) + matcherCost).toBeGreaterThan(MAX_MATCHER_COST); // the premise: together they are over
    expect(() => parseManifest(repo([repoHook({ match: { only_if_changed_paths: globs(n) } })]))).not.toThrow();
    expect(() => parseManifest(repo([repoHook({ matcher: bait })]))).not.toThrow();
    expect(() => parseManifest(repo([repoHook({ matcher: bait, match: { only_if_changed_paths: globs(n) } })]))).toThrow(/hooks\[0\]\.match: .*limit maxMatcherCost/);
  });
});

describe("the profile catalogue", () => {
  test("vcp@1 is built in and cannot be replaced; references parse", () => {
    expect(getProfile("vcp")).toBe(vcpProfile);
    expect(getProfile("vcp@1")).toBe(vcpProfile);
    expect(Object.keys(vcpProfile.events)).toEqual(["pre_inject", "post_select", "on_transition", "on_conflict", "on_violation", "periodic"]);
    expect(vcpProfile).toMatchObject({ ordering: "priority_desc", execution: "sequential" });
    expect(parseProfileRef("gemini-cli@0.x")).toEqual({ name: "gemini-cli", version: "0.x" });
    expect(() => registerProfile({ ...echoProfile, id: "vcp" })).toThrow(/built in/);
    expect(listProfiles().map((p) => p.id)).toEqual(expect.arrayContaining(["vcp", "echo"]));
  });
});

describe("deployment profiles:", () => {
  test("absent: every catalogued profile is enabled, non-strict, with the default session TTL", () => {
    const enabled = resolveEnabledProfiles(undefined);
    expect([...enabled.keys()]).toEqual(expect.arrayContaining(listProfiles().map((p) => p.id)));
    expect(enabled.get("echo")).toMatchObject({ strict: false, sessionTtlMs: 86_400_000 });
  });

  test("listed: only those (and vcp), with their strict switch, TTL and own settings", () => {
    const enabled = resolveEnabledProfiles({ "echo@1": { strict: true, session_ttl_s: 60, flavour: "x" } });
    expect([...enabled.keys()].sort()).toEqual(["echo", "vcp"]);
    expect(enabled.get("echo")).toMatchObject({ strict: true, sessionTtlMs: 60_000, settings: { flavour: "x" } });
  });

  test.each([
    [{ nosuch: {} }, "profiles.nosuch"],
    [{ "echo@9": {} }, "profiles.echo@9"],
    [{ echo: {}, "echo@1": {} }, "listed twice"],
    [{ echo: { strict: "yes" } }, "profiles.echo.strict"],
  ])("bad profiles %j → INVALID_CONFIG naming %s", (config, where) => {
    expect(() => resolveEnabledProfiles(config as never)).toThrow(expect.objectContaining({ code: "INVALID_CONFIG", message: expect.stringContaining(where) }));
  });

  test("a profile's own settings reach its context, checked by its settings schema", () => {
    const enabled = resolveEnabledProfiles({ "ai-memory@0.7": { strict: true, required_events: ["pre_store"] }, amplifier: { injection_size_limit: 4096 } });
    expect(enabled.get("ai-memory")).toMatchObject({ strict: true, settings: { required_events: ["pre_store"] } });
    expect(enabled.get("amplifier")!.settings).toEqual({ injection_size_limit: 4096 });
  });

  test.each([
    [{ "ai-memory@0.7": { required_events: ["pre_stor"] } }, "profiles.ai-memory@0.7.required_events[0]: not an ai-memory event"],
    [{ amplifier: { injection_size_limmit: 4096 } }, "profiles.amplifier.injection_size_limmit: unknown setting"],
    [{ amplifier: { injection_budget_per_turn: 0 } }, "profiles.amplifier.injection_budget_per_turn:"],
    [{ "gemini-cli": { required_events: [] } }, "profiles.gemini-cli.required_events: unknown setting"],
    [{ "repo-yaml": { blocking: true } }, "profiles.repo-yaml.blocking: unknown setting"],
  ])("bad profile settings %j → INVALID_CONFIG naming %s (runtime and vcp.yaml)", (config, where) => {
    expect(() => resolveEnabledProfiles(config as never)).toThrow(expect.objectContaining({ code: "INVALID_CONFIG", message: expect.stringContaining(where) }));
    expect(() => resolveConfig({ profiles: config }, "/tmp", "vcp.yaml")).toThrow(expect.objectContaining({ code: "INVALID_CONFIG", message: expect.stringContaining(`vcp.yaml: ${where}`) }));
  });

  test("vcp.yaml profiles: is validated against the catalogue at load", () => {
    expect(resolveConfig({ profiles: { "echo@1": { strict: true } } }, "/tmp").profiles).toEqual({ "echo@1": { strict: true, session_ttl_s: 86_400 } });
    expect(() => resolveConfig({ profiles: { nosuch: {} } }, "/tmp")).toThrow(expect.objectContaining({ code: "INVALID_CONFIG", message: expect.stringContaining("profiles.nosuch") }));
    expect(() => resolveConfig({ profiles: { echo: { session_ttl_s: 0 } } }, "/tmp")).toThrow(expect.objectContaining({ code: "INVALID_CONFIG" }));
  });
});

describe("a profile hook's condition reads the native input (PROFILES §2, issue 25)", () => {
  const gemini = (condition: unknown, event = "BeforeTool") => ({
    bundle: "g", version: "1.0.0", profile: "gemini-cli", trust: "deployment",
    hooks: [{ name: "guard", action: "guard", event, timeout_ms: 1000, condition }],
  });
  const refusal = (raw: unknown): VcpError => {
    try {
      parseManifest(raw, "policy.yaml");
    } catch (err) {
      return err as VcpError;
    }
    throw new Error("the manifest was accepted");
  };

  test.each([
    ["gemini-cli BeforeTool tool_input.command", gemini({ field: "tool_input.command", operator: "matches", value: "rm -rf" })],
    ["gemini-cli BeforeTool tool_name", gemini({ field: "tool_name", operator: "eq", value: "run_shell_command" })],
    ["gemini-cli BeforeModel llm_request.messages.0.content", gemini({ field: "llm_request.messages.0.content", operator: "matches", value: "x" }, "BeforeModel")],
    ["ai-memory payload.namespace", { bundle: "m", version: "1.0.0", profile: "ai-memory", hooks: [{ name: "m", action: "m", event: "pre_store", timeout_ms: 1000, condition: { field: "payload.namespace", operator: "eq", value: "x" } }] }],
    ["claude-code PreToolUse tool_input.file_path", { bundle: "c", version: "1.0.0", profile: "claude-code", hooks: [{ name: "c", action: "c", event: "PreToolUse", timeout_ms: 1000, condition: { field: "tool_input.file_path", operator: "matches", value: "^/etc/" } }] }],
  ])("%s builds", (_name, raw) => {
    expect(() => parseManifest(raw, "policy.yaml")).not.toThrow();
  });

  test.each([
    // The VCP habit that used to build and then never match (silently skipped_predicate).
    ["event.tool_input.command", gemini({ field: "event.tool_input.command", operator: "matches", value: "rm -rf" }), "the gemini-cli BeforeTool input has no field 'event'", "write 'tool_input.command'"],
    ["a field the input never has", gemini({ field: "tool_inptu.command", operator: "eq", value: "x" }), "the gemini-cli BeforeTool input has no field 'tool_inptu'", "tool_input"],
    ["a field below a string", gemini({ field: "prompt.text", operator: "eq", value: "x" }, "BeforeAgent"), "the gemini-cli BeforeAgent input cannot have 'prompt.text': 'prompt' is a string", ""],
    ["a name on an array", gemini({ field: "llm_request.messages.first", operator: "eq", value: "x" }, "BeforeModel"), "'llm_request.messages' is an array", ""],
    ["inside a compound", gemini({ combine: "or", children: [{ field: "tool_name", operator: "eq", value: "x" }, { field: "context.x", operator: "eq", value: 1 }] }), "the gemini-cli BeforeTool input has no field 'context'", ""],
  ])("%s is refused at build with INVALID_PREDICATE naming the path and the event", (_name, raw, rule, hint) => {
    const err = refusal(raw);
    expect(err.code).toBe("INVALID_PREDICATE");
    expect(err.message).toContain("hooks[0].condition");
    expect(err.message).toContain(rule);
    expect(err.message).toContain(hint);
  });

  test("VCP hooks keep their HookInput paths", () => {
    const vcp = (field: string) => ({ bundle: "v", version: "1.0.0", hooks: [{ name: "v", type: "pre_inject", action: "v", priority: 50, timeout_ms: 1000, condition: { field, operator: "eq", value: 1 } }] });
    expect(() => parseManifest(vcp("context.dimensions.safety_level"))).not.toThrow();
    expect(refusal(vcp("tool_input.command")).message).toContain("field must start with one of context, constitution, event, session, chain_state");
  });
});
