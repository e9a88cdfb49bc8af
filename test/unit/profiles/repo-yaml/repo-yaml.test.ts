import { describe, expect, it } from "vitest";
import { VcpError } from "../../../../src/errors.js";
import {
  buildFromRepoYaml, compileRepoYamlFilter, registrationJson, repoYamlProfile as p,
} from "../../../../src/profiles/repo-yaml/index.js";
import type { HookOutputEntry, NativeObject, ProfileContext } from "../../../../src/profiles/types.js";

const ctx: ProfileContext = { strict: false, settings: {} };

function answer(entries: HookOutputEntry[], event = "PreAbilityCall") {
  return p.present(p.reduceWithHooks!(entries, event, ctx, {}), event, ctx);
}

describe("repo-yaml inputs and outputs", () => {
  it("validateInput names the wrong field", () => {
    expect(p.validateInput({ session_id: "s", ability_id: "fs.write" }, "PreAbilityCall")).toEqual({ ok: true, value: { session_id: "s", ability_id: "fs.write", event_type: "PreAbilityCall" } });
    expect(p.validateInput({ session_id: "s" }, "PreAbilityCall")).toEqual({ ok: false, error: "ability_id: required (a string) on PreAbilityCall" });
    expect(p.validateInput({ event_type: "SessionStop" }, "SessionStart")).toMatchObject({ ok: false, error: expect.stringContaining("SessionStop") });
    expect(p.validateInput({ changed_files: "a.ts" }, "SessionStop")).toEqual({ ok: false, error: "changed_files: must be an array of strings" });
    expect(p.validateInput({ ability_id: "x", duration_ms: -1 }, "PostAbilityCall")).toMatchObject({ ok: false, error: expect.stringContaining("duration_ms") });
    expect(p.validateInput({}, "PreToolUse")).toMatchObject({ ok: false });
    expect(p.sessionIdOf({ session_id: "s7" })).toBe("s7");
  });

  it("decode: strict schema with the path of the problem; undefined is an empty result", () => {
    expect(p.decode(undefined, "SessionStart", ctx)).toEqual({ ok: true, value: {} });
    expect(p.decode({ logs: [{ level: "loud", message: "x" }] }, "SessionStart", ctx)).toMatchObject({ ok: false, error: expect.stringContaining("logs[0].level") });
    expect(p.decode({ message_to_user: [] }, "SessionStart", ctx)).toMatchObject({ ok: false, error: expect.stringContaining("message_to_user") });
    expect(p.decode({ new_intent: { topic: "t" } }, "SessionStart", ctx)).toMatchObject({ ok: false, error: expect.stringContaining("new_intent.intent") });
    expect(p.decode({ follow_up_actions: [{ kind: "deploy" }] }, "SessionStart", ctx)).toMatchObject({ ok: false, error: expect.stringContaining("follow_up_actions[0].kind") });
    expect(p.decode({ follow_up_actions: [{ kind: "open_file", path: "a.ts" }] }, "SessionStart", ctx)).toEqual({ ok: true, value: { follow_up_actions: [{ kind: "open_file", path: "a.ts" }] } });
  });
});

describe("repo-yaml match filters", () => {
  it("ability_scope globs ability_id; '*' matches everything", () => {
    const f = compileRepoYamlFilter({ ability_scope: "fs.*" }, "PreAbilityCall");
    expect(f({ ability_id: "fs.write" })).toBe(true);
    expect(f({ ability_id: "net.get" })).toBe(false);
    expect(f({})).toBe(false);
    expect(compileRepoYamlFilter({ ability_scope: "*" }, "SessionStart")({})).toBe(true);
  });

  it("min_duration_ms compares duration_ms; a missing duration fails a positive minimum", () => {
    const f = compileRepoYamlFilter({ min_duration_ms: 1_000 }, "PostAbilityCall");
    expect(f({ duration_ms: 1_000 })).toBe(true);
    expect(f({ duration_ms: 999 })).toBe(false);
    expect(f({})).toBe(false);
    expect(compileRepoYamlFilter({ min_duration_ms: 0 }, "PostAbilityCall")({})).toBe(true);
  });

  it("only_if_changed_paths: one changed file must match one glob (changed_files, else files_touched)", () => {
    const f = compileRepoYamlFilter({ only_if_changed_paths: ["services/**", "apps/**"] }, "SessionStop");
    expect(f({ changed_files: ["README.md", "services/billing/src/a.ts"] })).toBe(true);
    expect(f({ changed_files: ["README.md"] })).toBe(false);
    expect(f({})).toBe(false);
    expect(compileRepoYamlFilter({ only_if_changed_paths: ["src/**"] }, "UserPromptSubmit")({ files_touched: ["src/x.ts"] })).toBe(true);
  });

  it("all given filters must hold", () => {
    const f = compileRepoYamlFilter({ ability_scope: "build.*", min_duration_ms: 10 }, "PostAbilityCall");
    expect(f({ ability_id: "build.all", duration_ms: 11 })).toBe(true);
    expect(f({ ability_id: "build.all", duration_ms: 9 })).toBe(false);
    expect(f({ ability_id: "lint", duration_ms: 11 })).toBe(false);
  });

  it.each([
    [{ ability_scop: "x" }, "PreAbilityCall", "unknown field(s): ability_scop"],
    [{ min_duration_ms: -5 }, "PostAbilityCall", "match.min_duration_ms"],
    [{ only_if_changed_paths: [] }, "SessionStop", "match.only_if_changed_paths"],
    [{ ability_scope: "fs.*" }, "SessionStop", "match.ability_scope: SessionStop has no ability_id"],
    [{ min_duration_ms: 5 }, "PreAbilityCall", "match.min_duration_ms: PreAbilityCall has no duration_ms"],
    ["fs.*", "PreAbilityCall", "match"],
  ])("refuses %j on %s naming the field", (match, event, msg) => {
    expect(() => compileRepoYamlFilter(match, event)).toThrow(msg);
  });

  it("matcher is a glob on ability_id, only on ability events", () => {
    expect(p.compileMatcher("fs.*", "PreAbilityCall")({ ability_id: "fs.read" })).toBe(true);
    expect(() => p.compileMatcher("fs.*", "SessionStart")).toThrow(/ability_id/);
  });
});

describe("repo-yaml fold", () => {
  it("blocked_by_policy from a blocking hook on PreAbilityCall blocks: exit 2", () => {
    const a = answer([{ hook: "g", blocking: true, output: { messages_to_user: ["no"], error: "blocked_by_policy" } }]);
    expect(a).toEqual({ native: { messages_to_user: ["no"], error: "blocked_by_policy" }, exit_code: 2 });
    expect(p.verdictOf({ error: "blocked_by_policy" }, "PreAbilityCall")).toBe("block");
  });

  it("the same from a non-blocking hook, or on another event, is a warn log and exit 0", () => {
    expect(answer([{ hook: "g", output: { error: "blocked_by_policy" } }])).toEqual({ native: { logs: [{ level: "warn", message: "g: error: blocked_by_policy" }] }, exit_code: 0 });
    expect(answer([{ hook: "g", blocking: true, output: { error: "blocked_by_policy" } }], "SessionStop").exit_code).toBe(0);
    expect(answer([{ hook: "g", blocking: true, output: { error: "oops" } }]).native).toEqual({ logs: [{ level: "warn", message: "g: error: oops" }] });
  });

  it("a failing blocking (or fail_closed) hook blocks; a failing ordinary hook logs", () => {
    const blocking = p.failureOutput("g", "boom", true, "PreAbilityCall", ctx);
    expect(answer([{ hook: "g", blocking: true, failed: true, output: blocking }]).exit_code).toBe(2);
    expect(answer([{ hook: "g", failed: true, output: blocking }]).exit_code).toBe(2);
    const open = p.failureOutput("g", "boom", false, "PreAbilityCall", ctx);
    expect(answer([{ hook: "g", failed: true, output: open }])).toEqual({ native: { logs: [{ level: "warn", message: "g failed: boom" }] }, exit_code: 0 });
  });

  it("reduce without hook flags never blocks (the executor must use reduceWithHooks)", () => {
    expect(p.present(p.reduce([{ error: "blocked_by_policy" }], "PreAbilityCall", ctx), "PreAbilityCall", ctx).exit_code).toBe(0);
  });

  it("answerFields: every field with something in it (an observer's new_intent and follow-ups too); empty lists say nothing", () => {
    expect(p.answerFields({ error: "blocked_by_policy", logs: [] }, "PreAbilityCall")).toEqual(["error"]);
    expect(p.answerFields({ new_intent: { intent: "i" }, follow_up_actions: [{ kind: "open_file" }], messages_to_user: ["m"] }, "PreAbilityCall")).toEqual([
      "new_intent", "follow_up_actions", "messages_to_user",
    ]);
    expect(p.answerFields({}, "UserPromptSubmit")).toEqual([]);
  });

  it("lists concatenate, first new_intent wins, usage_recorded ORs, empty lists left out", () => {
    const entries: HookOutputEntry[] = [
      { hook: "a", output: { logs: [{ level: "info", message: "1" }], new_intent: { intent: "first" }, usage_recorded: false } },
      { hook: "b", output: { logs: [{ level: "info", message: "2" }], new_intent: { intent: "second" }, usage_recorded: true, suggested_abilities: [] } },
    ];
    expect(answer(entries, "UserPromptSubmit").native).toEqual({ logs: [{ level: "info", message: "1" }, { level: "info", message: "2" }], new_intent: { intent: "first" }, usage_recorded: true });
  });
});

describe("repo-yaml builder", () => {
  const action = (module: string, exp: string) => ({ kind: "action", module, export: exp });

  it("builds definitions in file-name order, script handlers reported for the command lane, disabled left out", () => {
    const b = buildFromRepoYaml([
      { name: "z_tracker.yaml", doc: { id: "z_tracker", event_type: "PostAbilityCall", handler: action("tracker.js", "track"), match: { ability_scope: "*", min_duration_ms: 0 } } },
      { name: "a_guard.yaml", doc: { id: "a_guard", event_type: "PreAbilityCall", blocking: true, summary: "guard", handler: action("guard.js", "guard"), effects: ["x"] } },
      { name: "m_build.yaml", doc: { id: "m_build", event_type: "SessionStop", handler: { kind: "script", command: "./scripts/hooks/build.sh" } } },
      { name: "n_off.yaml", doc: { id: "n_off", event_type: "SessionStart", enabled: false, handler: action("x.js", "x") } },
    ]);
    expect(b.hooks.map((h) => h.name)).toEqual(["a_guard", "z_tracker"]);
    expect(b.hooks[0]).toEqual({ name: "a_guard", event: "PreAbilityCall", handler: { kind: "action", module: "guard.js", export: "guard" }, blocking: true, summary: "guard", file: "a_guard.yaml" });
    expect(b.hooks[1]).toMatchObject({ match: { ability_scope: "*", min_duration_ms: 0 }, blocking: false });
    expect(b.needsCommandLane).toEqual([{ name: "m_build", event: "SessionStop", command: "./scripts/hooks/build.sh", blocking: false, file: "m_build.yaml" }]);
    expect(b.disabled).toEqual([{ name: "n_off", file: "n_off.yaml" }]);
    expect(registrationJson(b)).toEqual({
      PreAbilityCall: [{ id: "a_guard", handler: { kind: "action", module: "guard.js", export: "guard" } }],
      PostAbilityCall: [{ id: "z_tracker", handler: { kind: "action", module: "tracker.js", export: "track" } }],
      SessionStop: [{ id: "m_build", handler: { kind: "script", command: "./scripts/hooks/build.sh" } }],
    });
  });

  it.each([
    [null, "(root)"],
    [{ event_type: "PreAbilityCall", handler: { kind: "action", module: "m.js", export: "f" } }, "id"],
    [{ id: "h", handler: { kind: "action", module: "m.js", export: "f" } }, "event_type"],
    [{ id: "h", event_type: "PreToolUse", handler: { kind: "action", module: "m.js", export: "f" } }, "event_type"],
    [{ id: "h", event_type: "PreAbilityCall" }, "handler"],
    [{ id: "h", event_type: "PreAbilityCall", handler: { kind: "python", command: "x" } }, "handler.kind"],
    [{ id: "h", event_type: "PreAbilityCall", handler: { kind: "action", module: "m.js", export: "not-an-identifier" } }, "handler.export"],
    [{ id: "h", event_type: "SessionStart", handler: { kind: "action", module: "m.js", export: "f" }, match: { ability_scope: "fs.*" } }, "match.ability_scope"],
    [{ id: "h", event_type: "PreAbilityCall", blocking: "yes", handler: { kind: "action", module: "m.js", export: "f" } }, "blocking"],
  ])("a bad file is BUILD_FAILED naming the file and field (%#)", (doc, field) => {
    let err: unknown;
    try {
      buildFromRepoYaml([{ name: "bad.yaml", doc }]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(VcpError);
    const v = err as VcpError;
    expect(v.code).toBe("BUILD_FAILED");
    expect(v.details).toMatchObject({ file: "bad.yaml", field });
    expect(v.message.startsWith(`bad.yaml: ${field}`)).toBe(true);
  });

  it("a repeated id is refused naming both files", () => {
    const doc = { id: "same", event_type: "SessionStart", handler: { kind: "action", module: "m.js", export: "f" } };
    expect(() => buildFromRepoYaml([{ name: "b.yaml", doc }, { name: "a.yaml", doc }])).toThrow(/b\.yaml: id: "same" is already defined in a\.yaml/);
  });
});

describe("repo-yaml profile shape", () => {
  it("priority order (PROFILES §8.5; default 50 keeps file-name order), sequential, only PreAbilityCall can block, exit code 0 by default", () => {
    expect(p.ordering).toBe("priority_desc");
    expect(p.execution).toBe("sequential");
    expect(Object.entries(p.events).filter(([, s]) => s.can_block).map(([e]) => e)).toEqual(["PreAbilityCall"]);
    expect(p.present({} as NativeObject, "SessionStart", ctx)).toEqual({ native: {}, exit_code: 0 });
  });
});
