// POST /v1/profiles/{profile}/events/{event}, GET /v1/profiles, GET /v1/hooks?profile=…&event=…
// (PROFILES §2, §8.1–§8.3) on a real server and sandbox, with the toy echo profile loaded into the
// sandbox workers (test/support/echo-profile.ts).
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { registerProfile } from "../../src/profile-kit.js";
import echoProfile from "../support/echo-profile.js";
import { bundleCode } from "../support/bundles.js";
import { call, cl, op, settings, sha256, signed, startHarness, TOKENS, type Harness } from "./helpers.js";

const ECHO_MODULE = pathToFileURL(fileURLToPath(new URL("../support/echo-profile.ts", import.meta.url))).href;
const OTHER_CLIENT = "cl-token-e2e-other-0123456789";

const manifest = {
  bundle: "echo-guard",
  version: "1.0.0",
  trust: "deployment",
  profile: "echo@1",
  hooks: [
    { name: "no_rm", event: "Check", matcher: "^rm$", action: "noRm", priority: 60, timeout_ms: 1000 },
    { name: "note", event: "Check", action: "note", priority: 50, timeout_ms: 1000 },
    { name: "note_again", event: "Check", action: "note", priority: 40, timeout_ms: 1000 },
  ],
};
const code = bundleCode({
  noRm: "() => ({ decision: 'block', reason: 'rm is not allowed' })",
  note: "(input) => ({ message: 'checked ' + input.tool })",
});

let h: Harness;
beforeAll(async () => {
  registerProfile(echoProfile);
  h = await startHarness({
    runtime: { profileModules: [ECHO_MODULE] },
    settings: settings({
      auth: [
        { id: "ops", role: "operator", token_sha256: sha256(TOKENS.operator) },
        { id: "app", role: "client", token_sha256: sha256(TOKENS.client) },
        { id: "other", role: "client", token_sha256: sha256(OTHER_CLIENT) },
      ],
    }),
  });
  const installed = await op(h, "PUT", "/v1/bundles/echo-guard", signed(manifest, code));
  expect(installed.status).toBe(201);
}, 60_000);
afterAll(async () => {
  await h?.close();
});

describe("profile routes", () => {
  test("the envelope: native answer, exit code, stderr and the chain with per-hook outcomes", async () => {
    const res = await cl(h, "POST", "/v1/profiles/echo/events/Check", { session_id: "s-env", tool: "rm" });
    expect(res.status).toBe(200);
    expect(res.body.native).toEqual({ decision: "block", reason: "rm is not allowed", message: "checked rm" });
    expect(res.body.exit_code).toBe(2);
    expect(res.body.stderr).toBe("rm is not allowed");
    expect(res.body.result.profile).toBe("echo");
    expect(res.body.result.event).toBe("Check");
    expect(res.body.result.hook_results.map((r: { hook: string; outcome: string }) => [r.hook, r.outcome])).toEqual([
      ["no_rm", "ok"],
      ["note", "ok"],
      ["note_again", "deduplicated"],
    ]);
    const other = await cl(h, "POST", "/v1/profiles/echo/events/Check", { session_id: "s-env", tool: "ls" });
    expect(other.body.native).toEqual({ message: "checked ls" });
    expect(other.body.result.hook_results[0]).toMatchObject({ hook: "no_rm", outcome: "skipped_matcher" });
  }, 30_000);

  test("?answer=native: the native JSON alone as the 200 body, the exit code in X-VCP-Exit-Code", async () => {
    const res = await call(h.url, "POST", "/v1/profiles/echo/events/Check?answer=native", { token: TOKENS.client, body: { tool: "rm" } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ decision: "block", reason: "rm is not allowed", message: "checked rm" });
    expect(res.headers.get("x-vcp-exit-code")).toBe("2");
  }, 30_000);

  test("unknown profile and unknown event are 404 with their codes; invalid native input is 400 naming the field", async () => {
    const profile = await cl(h, "POST", "/v1/profiles/nosuch/events/Check", { tool: "x" });
    expect(profile.status).toBe(404);
    expect(profile.body.error.code).toBe("UNKNOWN_PROFILE");
    const event = await cl(h, "POST", "/v1/profiles/echo/events/Nope", { tool: "x" });
    expect(event.status).toBe(404);
    expect(event.body.error.code).toBe("UNKNOWN_EVENT");
    expect(event.body.error.message).toContain("Nope");
    const bad = await cl(h, "POST", "/v1/profiles/echo/events/Check", { tool: 42 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("INVALID_INPUT");
    expect(bad.body.error.message).toContain("tool: must be a string");
  });

  test("a body over the limit is 413 and never reaches the sandbox; a too-deep body is 400", async () => {
    const big = await cl(h, "POST", "/v1/profiles/echo/events/Check", { tool: "x", pad: "a".repeat(70 * 1024) });
    expect(big.status).toBe(413);
    const deep = await cl(h, "POST", "/v1/profiles/echo/events/Check", { tool: "x", deep: JSON.parse("[".repeat(200) + "]".repeat(200)) });
    expect(deep.status).toBe(400);
    expect(deep.body.error.code).toBe("INVALID_INPUT");
  });

  test("implicit session ids are per client: another client sending the same session_id gets its own session, never a 404 that reveals or squats the first", async () => {
    // The stranger first: a squatter must not lock the rightful client out of its own id.
    const stranger = await call(h.url, "POST", "/v1/profiles/echo/events/Check", { token: OTHER_CLIENT, body: { session_id: "mine", tool: "ls" } });
    expect(stranger.status).toBe(200);
    const first = await cl(h, "POST", "/v1/profiles/echo/events/Check", { session_id: "mine", tool: "ls" });
    expect(first.status).toBe(200);
    const strangerAgain = await call(h.url, "POST", "/v1/profiles/echo/events/Check", { token: OTHER_CLIENT, body: { session_id: "mine", tool: "ls" } });
    expect(strangerAgain.status).toBe(200);
    const again = await cl(h, "POST", "/v1/profiles/echo/events/Check", { session_id: "mine", tool: "ls" });
    expect(again.status).toBe(200);
  }, 30_000);

  test("firing is for clients: an operator token is refused", async () => {
    const res = await op(h, "POST", "/v1/profiles/echo/events/Check", { tool: "ls" });
    expect(res.status).toBe(403);
  });

  test("GET /v1/profiles lists the enabled profiles; GET /v1/hooks?profile&event shows the resolved plan", async () => {
    const list = await cl(h, "GET", "/v1/profiles");
    expect(list.status).toBe(200);
    const echo = list.body.profiles.find((p: { id: string }) => p.id === "echo");
    expect(echo).toMatchObject({ id: "echo", version: "1", upstream: { commit: "0000000" }, events: ["Check", "Notice"], strict: false });
    expect(list.body.profiles.map((p: { id: string }) => p.id)).toContain("vcp");
    const plan = await cl(h, "GET", "/v1/hooks?profile=echo&event=Check");
    expect(plan.status).toBe(200);
    expect(plan.body.hooks.map((x: { name: string; matcher: string | null; deduplicated_by: string | null }) => [x.name, x.matcher, x.deduplicated_by])).toEqual([
      ["no_rm", "^rm$", null],
      ["note", null, null],
      ["note_again", null, "note"],
    ]);
    // `profile` alone is valid: every hook of the profile (issue 25); `event` needs no `profile` either.
    const half = await cl(h, "GET", "/v1/hooks?profile=echo");
    expect(half.status).toBe(200);
    expect(half.body.hooks.map((x: { name: string }) => x.name)).toEqual(["no_rm", "note", "note_again"]);
  });

  test("GET /v1/hooks lists every hook, VCP and profile, keyed by (profile, event); profile, event and bundle filter in any combination", async () => {
    const vcp = { bundle: "vcp-mark", version: "1.0.0", trust: "deployment", hooks: [{ name: "mark", type: "pre_inject", action: "mark", priority: 50, timeout_ms: 1000 }] };
    expect((await op(h, "PUT", "/v1/bundles/vcp-mark", signed(vcp, bundleCode({ mark: "() => ({ status: 'continue' })" })))).status).toBe(201);
    try {
      const all = await cl(h, "GET", "/v1/hooks");
      expect(all.status).toBe(200);
      expect(all.body.hooks.map((x: { profile: string; event: string; name: string }) => `${x.profile}/${x.event}/${x.name}`)).toEqual([
        "vcp/pre_inject/mark", "echo/Check/no_rm", "echo/Check/note", "echo/Check/note_again",
      ]);
      // The VCP entry keeps every field it had; a profile hook shows its plan entry and its action.
      expect(all.body.hooks[0]).toMatchObject({ name: "mark", type: "pre_inject", priority: 50, timeout_ms: 1000, scope: "deployment", trust: "deployment", enabled: true, fail_closed: false, condition: null, metadata: {}, action: { bundle: "vcp-mark", export: "mark" }, bundle: "vcp-mark" });
      expect(all.body.hooks[1]).toMatchObject({ profile: "echo", event: "Check", bundle: "echo-guard", matcher: "^rm$", deduplicated_by: null, action: { bundle: "echo-guard", export: "noRm" } });
      expect(all.body.hooks[1].type).toBeUndefined();
      const names = async (query: string) => {
        const res = await cl(h, "GET", `/v1/hooks?${query}`);
        expect(res.status, res.text).toBe(200);
        return res.body.hooks.map((x: { name: string }) => x.name);
      };
      expect(await names("profile=vcp")).toEqual(["mark"]);
      expect(await names("event=pre_inject")).toEqual(["mark"]);
      expect(await names("type=pre_inject")).toEqual(["mark"]);
      expect(await names("event=Check")).toEqual(["no_rm", "note", "note_again"]);
      expect(await names("bundle=echo-guard")).toEqual(["no_rm", "note", "note_again"]);
      expect(await names("bundle=vcp-mark")).toEqual(["mark"]);
      expect(await names("profile=echo&bundle=vcp-mark")).toEqual([]);
      expect(await names("profile=echo&event=Notice")).toEqual([]);
      expect(await names("profile=echo@1&event=Check&bundle=echo-guard")).toEqual(["no_rm", "note", "note_again"]);
      // An unknown profile or event is a 400 naming it.
      for (const [query, field, named] of [["profile=nope", "querystring.profile", "nope"], ["event=NoSuchEvent", "querystring.event", "NoSuchEvent"], ["profile=echo&event=pre_inject", "querystring.event", "pre_inject"]] as const) {
        const res = await cl(h, "GET", `/v1/hooks?${query}`);
        expect({ status: res.status, code: res.body.error?.code, field: res.body.error?.details?.field }).toEqual({ status: 400, code: "INVALID_REQUEST", field });
        expect(res.body.error.message).toContain(named);
      }
    } finally {
      expect((await op(h, "DELETE", "/v1/bundles/vcp-mark")).status).toBe(200);
    }
  });

  test("GET /v1/profiles lists the agent profiles of issue 26 with their pinned upstream and events", async () => {
    const list = await cl(h, "GET", "/v1/profiles");
    expect(list.status).toBe(200);
    const byId = new Map<string, { upstream: { repo: string }; events: string[] }>(list.body.profiles.map((p: { id: string }) => [p.id, p]));
    const expected: Record<string, { repo: string; events: string[] }> = {
      codex: { repo: "openai/codex", events: ["PreToolUse", "PermissionRequest", "PostToolUse", "SessionStart", "UserPromptSubmit", "Stop", "Interrupt"] },
      cursor: { repo: "cursor/cursor", events: ["beforeShellExecution", "beforeMCPExecution", "beforeReadFile", "afterFileEdit", "beforeSubmitPrompt", "stop"] },
      goose: { repo: "block/goose", events: ["PreToolUse", "PreToolUseResult", "PostToolUse", "Stop", "BeforeShellExecution"] },
      openhands: { repo: "OpenHands/software-agent-sdk", events: ["PreToolUse", "PostToolUse", "UserPromptSubmit", "SessionStart", "SessionEnd", "Stop"] },
      vscode: { repo: "microsoft/vscode", events: ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact", "SubagentStart", "SubagentStop", "Stop"] },
    };
    for (const [id, want] of Object.entries(expected)) {
      expect(byId.get(id), `${id} is listed`).toBeDefined();
      expect(byId.get(id)!.upstream.repo).toBe(want.repo);
      expect(byId.get(id)!.events).toEqual(expect.arrayContaining(want.events));
    }
  });

  test("repo-yaml match and blocking over HTTP: a bad filter is refused naming hooks[i].match.<field>; the plan shows both; a blocking guard answers exit 2", async () => {
    const repo = (hooks: unknown[], version = "1.0.0") => ({ bundle: "repo-guard", version, trust: "deployment", profile: "repo-yaml", hooks });
    const guardCode = bundleCode({ guard: "() => ({ error: 'blocked_by_policy' })" });
    // Signing runs the same parseManifest as install (the install refusal is in test/integration/profiles).
    expect(() => signed(repo([{ name: "guard", event: "PreAbilityCall", action: "guard", timeout_ms: 1000, match: { ability_scope: 7 } }]), guardCode)).toThrow(
      expect.objectContaining({ code: "INVALID_MATCHER", message: expect.stringContaining("hooks[0].match.ability_scope") }),
    );
    const good = await op(h, "PUT", "/v1/bundles/repo-guard", signed(repo([{ name: "guard", event: "PreAbilityCall", action: "guard", timeout_ms: 1000, match: { ability_scope: "db.*" }, blocking: true }]), guardCode));
    expect(good.status).toBe(201);
    try {
      const plan = await cl(h, "GET", "/v1/hooks?profile=repo-yaml&event=PreAbilityCall");
      expect(plan.body.hooks).toEqual([expect.objectContaining({ name: "guard", priority: 50, match: { ability_scope: "db.*" }, blocking: true })]);
      const blocked = await cl(h, "POST", "/v1/profiles/repo-yaml/events/PreAbilityCall", { session_id: "r1", ability_id: "db.migrate" });
      expect(blocked.body).toMatchObject({ native: { error: "blocked_by_policy" }, exit_code: 2 });
      const other = await cl(h, "POST", "/v1/profiles/repo-yaml/events/PreAbilityCall", { session_id: "r1", ability_id: "fs.read" });
      expect(other.body).toMatchObject({ native: {}, exit_code: 0 });
    } finally {
      expect((await op(h, "DELETE", "/v1/bundles/repo-guard")).status).toBeLessThan(300);
    }
  }, 30_000);

  test("the audit log names the profile and its event on profile chains", async () => {
    await cl(h, "POST", "/v1/profiles/echo/events/Check", { session_id: "audited", tool: "rm" });
    const audit = await op(h, "GET", "/v1/audit?limit=1000");
    expect(audit.status).toBe(200);
    const records = (audit.body.records ?? audit.body) as Array<Record<string, unknown>>;
    const chain = records.filter((r) => r["kind"] === "chain" && r["session"] === "audited");
    expect(chain.length).toBeGreaterThan(0);
    expect(chain[0]).toMatchObject({ profile: "echo", profile_event: "Check" });
    expect(chain[0]!["hook_type"]).toBeUndefined();
  });
});

describe("a profile the deployment did not enable", () => {
  test("install is refused with PROFILE_DISABLED and nothing installed changes", async () => {
    const only = await startHarness({ runtime: { profileModules: [ECHO_MODULE], profiles: { vcp: {} } } });
    try {
      const before = await op(only, "GET", "/v1/bundles");
      const res = await op(only, "PUT", "/v1/bundles/echo-guard", signed(manifest, code));
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("PROFILE_DISABLED");
      expect(res.body.error.message).toContain("echo");
      const after = await op(only, "GET", "/v1/bundles");
      expect(after.body).toEqual(before.body);
      const fire = await cl(only, "POST", "/v1/profiles/echo/events/Check", { tool: "x" });
      expect(fire.body.error.code).toBe("PROFILE_DISABLED");
    } finally {
      await only.close();
    }
  }, 60_000);
});
