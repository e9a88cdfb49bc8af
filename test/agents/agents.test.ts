// The real agent CLIs with vcp-hooks as their hooks (issue 26 item 4), run by `npm run test:agents`
// (scripts/test-agents.mjs: installs the pinned CLIs, then runs this file once per agent in its own
// loopback-only network namespace, VCP_AGENT=<id>). Per agent (test/agents/agents.ts): a real
// `vcp-hooks serve` on 127.0.0.1:8787 with the agent's example safe-shell policy pushed, user settings
// that wire EVERY hook event the CLI knows to `vcp-hooks hook <Event> --dialect <d>` as vcp-hooks writes
// them (`init --profile`, `import`, the README), and a fake model server (fake-model.ts) that answers one
// tool call, then a final text:
//
//   dangerous shell blocked · benign shell runs · every event fired answered 0 · write denied
//   server down: a fail_closed guard blocks; none: the adapter warns (the tool runs unless the agent's
//   own switch or rule blocks it) · a migrated user hook behaves as natively
//
// The cases run in order and share the servers: the guarded server is stopped for the "down" case, a
// second server (the command lane, with the imported user hook) then takes its port.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { parse, stringify } from "yaml";
import { renderAgentSettings, type SettingsAgent } from "../../src/tooling/agent-settings.js";
import { AGENTS, installPrefix, type Agent, type HooksBlock } from "./agents.js";
import { startFakeModel, type FakeModel, type Script } from "./fake-model.js";
import { describeRun, interfaces, isolated, runAgent, runDirs, shq, startServe, token, vcp, writeServeConfig, type AgentRun, type HookCall, type Serve } from "./harness.js";

const wanted = (process.env["VCP_AGENT"] ?? "").split(",").filter((id) => id !== "");
const selected = AGENTS.filter((a) => wanted.length === 0 || wanted.includes(a.id));
const notIsolated = isolated() ? undefined : `not in a loopback-only network namespace (interfaces: ${interfaces().join(", ")}); run \`npm run test:agents\`, which makes one per agent`;

if (notIsolated !== undefined) {
  if (process.env["CI"] === "true") {
    test("the agent suite runs offline in its own network namespace", () => {
      throw new Error(notIsolated);
    });
  } else {
    console.warn(`agents suite skipped: ${notIsolated}`);
  }
}
test.runIf(wanted.length > 0)("VCP_AGENT names known agents", () => {
  expect(wanted.filter((id) => !AGENTS.some((a) => a.id === id))).toEqual([]);
});

for (const agent of selected) describe.skipIf(notIsolated !== undefined)(`${agent.id} ${agent.version}, offline, hooks through vcp-hooks`, () => suite(agent));

type Dirs = ReturnType<typeof runDirs>;

/**
 * Cases that fail today for a reason tracked in an issue, per agent: they run as `test.fails`, so the
 * suite stays green while the gap is open and turns red the day it closes (then delete the entry).
 */
const KNOWN_GAPS: Readonly<Record<string, Readonly<Record<string, string>>>> = {};

/** `test`, or `test.fails` naming the gap when the case is a known gap for this agent. */
function gapAware(agent: Agent, id: string): (name: string, fn: () => Promise<void> | void) => void {
  const gap = KNOWN_GAPS[agent.id]?.[id];
  return gap === undefined ? (name, fn) => test(name, fn) : (name, fn) => test.fails(`${name} [known gap, ${gap}]`, fn);
}

function suite(agent: Agent): void {
  const prefix = installPrefix(agent);
  const tokens = { operator: token("op"), client: token("cl") };
  const fired = new Map<string, number>();
  let root = "";
  let model: FakeModel;
  let guarded: Serve | undefined;
  let lane: Serve | undefined;
  let benign: AgentRun | undefined;
  let runs = 0;
  /** XDG_CACHE_HOME of the adapter (its guard file) while the guarded server answered, and the lane's. */
  let cacheGuarded = "";
  let cacheLane = "";

  /**
   * The adapter's block for every event the CLI knows, exactly as vcp-hooks writes it for users
   * (`init --profile`, `import`; the README's lines): `vcp-hooks hook <Event> --dialect <d>`, and the
   * agent's own fail-closed switch on the guard events where it has one (Claude Code `onFailure`).
   */
  const adapterHooks = (JSON.parse(renderAgentSettings(agent.id as SettingsAgent, agent.events)) as { hooks: HooksBlock }).hooks;
  /** True when that block switches the agent's own failing-hook-blocks on for the tool guard event. */
  const hostSwitch = JSON.stringify(adapterHooks[agent.preTool]).includes('"onFailure":"block"');
  /** The same block without the agent's switch: the adapter's `--on-error` alone decides. */
  const withoutHostSwitch = JSON.parse(JSON.stringify(adapterHooks, (k, v: unknown) => (k === "onFailure" ? undefined : v))) as HooksBlock;

  /** One agent run: `setup` prepares its directories and says what the model asks for. */
  async function run(name: string, setup: (dirs: Dirs) => Script, options: { cache: string; hooks?: HooksBlock; project?: string }): Promise<AgentRun> {
    const dirs = runDirs(root, `${String(++runs).padStart(2, "0")}-${name}`, options.project);
    model.script(setup(dirs));
    const r = await runAgent({ agent, prefix, dirs, hooks: options.hooks ?? adapterHooks, modelUrl: model.url, env: { VCP_CLIENT_TOKEN: tokens.client, XDG_CACHE_HOME: options.cache } });
    for (const c of r.calls) fired.set(c.event, (fired.get(c.event) ?? 0) + 1);
    // Kept with the run's directories for a post-mortem (VCP_AGENTS_KEEP=1 keeps them all).
    writeFileSync(join(dirs.log, "..", "agent-output.json"), JSON.stringify({ code: r.code, signal: r.signal, stdout: r.stdout, stderr: r.stderr, model: model.requests }, null, 1));
    console.log(`[${agent.id}] ${name}: agent exit ${r.code} in ${Math.round(r.ms)} ms; hook calls: ${r.calls.map((c) => `${c.event}=${c.exitCode}`).join(" ") || "none"}`);
    return r;
  }

  /** What the model was sent in place of the tool's output (tool_result / functionResponse), as one string. */
  const toolResults = () => model.toolResults().join("\n");
  const shell = (command: string): Script => ({ tool: { name: agent.shell.tool, input: agent.shell.input(command) }, final: "done" });
  const callsOf = (r: AgentRun, event: string) => r.calls.filter((c) => c.event === event);

  beforeAll(async () => {
    expect(existsSync(join(prefix, ".installed")), `${agent.package}@${agent.version} is not installed in ${prefix}: run \`npm run test:agents\``).toBe(true);
    root = mkdtempSync(join(tmpdir(), `vcp-agents-${agent.id}-`));
    cacheGuarded = join(root, "cache-guarded");
    cacheLane = join(root, "cache-lane");
    model = await startFakeModel();
    // A user's release of the example policy: key, build, sign, serve, push.
    mkdirSync(join(root, "keys"));
    await vcp(["keygen", "--out", "keys/ops", "--key-id", "ops", "--max-trust", "system"], root);
    await vcp(["build", resolve("policies", agent.policy), "-o", "policy.vcpb"], root);
    await vcp(["sign", "policy.vcpb", "--key", "keys/ops.pem", "--key-id", "ops"], root);
    mkdirSync(join(root, "guarded"));
    guarded = await startServe(writeServeConfig(join(root, "guarded"), { ...tokens, profile: agent.id, exec: false }));
    await vcp(["push", "policy.vcpb", "--server", guarded.url, "--token", tokens.operator], root);
  }, 300_000);

  afterAll(async () => {
    await guarded?.stop();
    await lane?.stop();
    await model?.close();
    const events = [...fired.entries()].map(([e, n]) => `${e}×${n}`).join(", ");
    console.log(`[${agent.id}] events fired over all runs: ${events || "none"}`);
    if (root !== "" && process.env["VCP_AGENTS_KEEP"] !== "1") rmSync(root, { recursive: true, force: true });
    else if (root !== "") console.log(`[${agent.id}] kept ${root}`);
  });

  test("a dangerous shell command is blocked: the tool never runs, the block reason reaches the model", async () => {
    let canary = "";
    const r = await run(
      "dangerous-shell",
      (dirs) => {
        const victim = join(dirs.outside[0]!, "victim");
        mkdirSync(victim);
        canary = join(victim, "canary.txt");
        writeFileSync(canary, "still here\n");
        return shell(`rm -rf ${victim}`);
      },
      { cache: cacheGuarded },
    );
    const why = describeRun(r);
    expect(existsSync(canary), why).toBe(true);
    expect(toolResults(), why).toContain("blocked: rm -rf of a wildcard or a path outside the project");
    expect(callsOf(r, agent.preTool).map((c) => c.exitCode), why).toEqual([0]);
    expect(agent.finalText(r.stdout), why).toBe("done");
  });

  test("a benign shell command is allowed and runs", async () => {
    benign = await run("benign-shell", () => shell("echo hi > hello.txt"), { cache: cacheGuarded });
    const why = describeRun(benign);
    expect(existsSync(join(benign.dirs.project, "hello.txt")) && readFileSync(join(benign.dirs.project, "hello.txt"), "utf8"), why).toBe("hi\n");
    expect(toolResults(), why).not.toContain("blocked");
    expect(callsOf(benign, agent.preTool).map((c) => c.exitCode), why).toEqual([0]);
    expect(agent.finalText(benign.stdout), why).toBe("done");
  });

  gapAware(agent, "every-event")("every event the agent fires in that run is answered by the adapter with exit 0 and JSON", () => {
    expect(benign, "the benign run did not happen").toBeDefined();
    const r = benign!;
    const events = [...new Set(r.calls.map((c) => c.event))];
    console.log(`[${agent.id}] events of a normal run (${r.calls.length} calls): ${events.join(", ")}`);
    expect(events).toEqual(expect.arrayContaining([agent.preTool, agent.postTool, agent.promptEvent]));
    expect(events.filter((e) => !agent.events.includes(e))).toEqual([]);
    const failed = r.calls.filter((c) => c.exitCode !== 0 || c.stderr !== "");
    expect(failed.map((c) => `${c.event}: exit ${c.exitCode} ${c.stderr.trim()}`)).toEqual([]);
    for (const c of r.calls) expect(() => JSON.parse(c.stdout), `${c.event} stdout: ${c.stdout}`).not.toThrow();
  });

  test.runIf(agent.write !== undefined)("a file write outside the project is denied: nothing is written, the reason reaches the model", async () => {
    const write = agent.write!;
    let target = "";
    const r = await run(
      "write-denied",
      (dirs) => {
        target = join(dirs.outside[0]!, "note.txt");
        return { tool: { name: write.tool, input: write.input(target, "written by the model\n") }, final: "done" };
      },
      { cache: cacheGuarded },
    );
    const why = describeRun(r);
    expect(existsSync(target), why).toBe(false);
    expect(toolResults(), why).toContain(`blocked: ${write.tool} outside the project: ${target}`);
    expect(agent.finalText(r.stdout), why).toBe("done");
  });

  // Blocked by the adapter's `--on-error auto` (issue 24): it learned from the guarded server's answers
  // that the tool event is guarded by a fail_closed hook, so with the server down it refuses (exit 2).
  gapAware(agent, "down-fail-closed")("server down, the event guarded by a fail_closed hook: the tool does not run, the model is told why", async () => {
    await guarded?.stop();
    const r = await run("down-fail-closed", () => shell("echo hi > down.txt"), { cache: cacheGuarded });
    const why = describeRun(r);
    expect(callsOf(r, agent.preTool).map((c) => c.exitCode), why).toEqual([agent.refusalExit ?? 2]);
    expect(existsSync(join(r.dirs.project, "down.txt")), why).toBe(false);
    expect(toolResults(), why).toContain("vcp-hooks unavailable");
    expect(agent.finalText(r.stdout), why).toBe("done");
  });

  // A user's own command hook, run natively by the agent, then migrated as the README says (`import`,
  // build, sign with a system key, serve with the command lane, push) and run by the same agent through
  // `vcp-hooks hook`: the log it writes and what the model sees must be the same.
  describe("a migrated user hook behaves as natively", () => {
    let nativeLog: string[] = [];
    let laneLog: string[] = [];
    let nativeSawRule = false;
    let laneSawRule = false;
    /** The adapter's calls for the events the user hook handles, in the migrated run. */
    let laneCalls: HookCall[] = [];

    beforeAll(async () => {
      await guarded?.stop();
      const hooks = join(root, "user-hooks");
      mkdirSync(hooks);
      const log = join(hooks, "audit.log");
      const script = join(hooks, "audit-log.sh");
      writeFileSync(script, userHook(agent, log));
      chmodSync(script, 0o755);
      const project = join(root, "user-project");
      mkdirSync(project);
      const native = agent.hooksOf([
        { event: agent.preTool, matcher: agent.shell.hookTool ?? agent.shell.tool, command: script },
        { event: agent.postTool, matcher: agent.shell.hookTool ?? agent.shell.tool, command: script },
        { event: agent.promptEvent, command: script },
      ]);
      const sawRule = () => model.requests.some((q) => JSON.stringify(q.body).includes(RULE));
      const readLog = () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter((l) => l !== "") : []);

      const first = await run("user-hook-native", () => shell("echo native > native.txt"), { cache: join(root, "cache-native"), hooks: native, project });
      nativeLog = readLog();
      nativeSawRule = sawRule();
      expect(nativeLog.length, describeRun(first)).toBeGreaterThan(0);
      rmSync(log);

      // Migrate the settings file the native run used.
      await vcp(["import", agent.dialect, join(first.dirs.home, agent.settings(native).path), "-o", "imported", "--project-dir", project], root);
      await vcp(["build", "imported/exec", "-o", "exec.vcpb"], root);
      await vcp(["sign", "exec.vcpb", "--key", "keys/ops.pem", "--key-id", "ops"], root);
      mkdirSync(join(root, "lane"));
      lane = await startServe(writeServeConfig(join(root, "lane"), { ...tokens, profile: agent.id, exec: true }));
      await vcp(["push", "exec.vcpb", "--server", lane.url, "--token", tokens.operator], root);

      const second = await run("user-hook-migrated", () => shell("echo native > native.txt"), { cache: cacheLane, project });
      laneLog = readLog();
      laneSawRule = sawRule();
      laneCalls = second.calls.filter((c) => c.event in native);
    }, 300_000);

    test("the same events reach it with the same input, in the same working directory; the model sees its context both times", () => {
      expect(laneCalls.map((c) => `${c.event}=${c.exitCode} ${c.stderr}`.trim())).toEqual(nativeLog.map((l) => `${/^event=(\S+)/.exec(l)![1]}=0`));
      const stdinPart = (lines: string[]) => lines.map((l) => l.replace(/ project=.*$/, ""));
      expect(stdinPart(laneLog)).toEqual(stdinPart(nativeLog));
      expect(nativeSawRule).toBe(true);
      expect(laneSawRule).toBe(true);
    });

    // An agent that documents no project-directory variable (Codex) has no hook environment to compare.
    (agent.projectDirVar === undefined ? test.skip : gapAware(agent, "hook-env"))(`it reads the agent's hook environment ($${agent.projectDirVar ?? "none"}) as natively`, () => {
      expect(laneLog).toEqual(nativeLog);
    });
  });

  /**
   * Where `import` made the migrated pre-tool hook fail_closed (Copilot: the real CLI denies when such a
   * hook fails), the lane's plan guards the event: push the same bundle without that, and let the adapter
   * see the new plan in one agent run, so that the next case has a plan with no fail_closed guard.
   */
  async function laneWithoutFailClosed(): Promise<void> {
    const file = join(root, "imported", "exec", "policy.yaml");
    if (lane === undefined || !existsSync(file)) return;
    const doc = parse(readFileSync(file, "utf8")) as { version: string; hooks: Array<{ event: string; fail_closed?: boolean }> };
    const guarded = doc.hooks.filter((h) => h.event === agent.preTool && h.fail_closed === true);
    if (guarded.length === 0) return;
    for (const h of guarded) delete h.fail_closed;
    doc.version = "0.1.1";
    writeFileSync(file, stringify(doc));
    await vcp(["build", "imported/exec", "-o", "exec-open.vcpb"], root);
    await vcp(["sign", "exec-open.vcpb", "--key", "keys/ops.pem", "--key-id", "ops"], root);
    await vcp(["push", "exec-open.vcpb", "--server", lane.url, "--token", tokens.operator], root);
    const r = await run("lane-open-plan", () => shell("echo hi > plan.txt"), { cache: cacheLane });
    expect(callsOf(r, agent.preTool).map((c) => c.exitCode), describeRun(r)).toEqual([0]);
  }

  /** What the model reads when the agent itself blocks a tool whose pre-tool hook failed (exit 1), if it does. */
  const ownBlock = hostSwitch ? "onFailure" : agent.failedHookDenies;

  // The lane's server guards nothing fail_closed: with it down the adapter warns (exit 1, the agent's
  // non-blocking error). Where vcp-hooks's settings switch the agent's own fail-closed on for the guard
  // event (Claude Code `onFailure: block`), or where the agent denies on a failed pre-tool hook by itself
  // (Copilot CLI), that exit 1 blocks the tool all the same; otherwise the tool runs.
  test(`server down, no fail_closed hook on the event: the adapter warns${ownBlock !== undefined ? ", and the agent's own rule blocks the tool" : " and the tool runs"}`, async () => {
    await laneWithoutFailClosed();
    await lane?.stop();
    const r = await run("down-open", () => shell("echo hi > open.txt"), { cache: cacheLane });
    const why = describeRun(r);
    const pre = callsOf(r, agent.preTool);
    expect(pre.map((c) => c.exitCode), why).toEqual([1]);
    expect(pre[0]!.stderr, why).toContain("no fail_closed hook guards");
    expect(existsSync(join(r.dirs.project, "open.txt")), why).toBe(ownBlock === undefined);
    if (ownBlock !== undefined) expect(toolResults(), why).toContain(ownBlock);
    expect(agent.finalText(r.stdout), why).toBe("done");
  });

  test.runIf(hostSwitch)("server down, no fail_closed hook, settings without the agent's own switch: the adapter warns and the tool runs", async () => {
    await lane?.stop();
    const r = await run("down-open-no-switch", () => shell("echo hi > open.txt"), { cache: cacheLane, hooks: withoutHostSwitch });
    const why = describeRun(r);
    expect(callsOf(r, agent.preTool).map((c) => c.exitCode), why).toEqual([1]);
    expect(existsSync(join(r.dirs.project, "open.txt")) && readFileSync(join(r.dirs.project, "open.txt"), "utf8"), why).toBe("hi\n");
    expect(agent.finalText(r.stdout), why).toBe("done");
  });
}

/** Text the user hook adds to each prompt; the model must see it, natively and migrated. */
const RULE = "project rule: every answer ends with a haiku";

/**
 * A user's plain command hook: appends what it saw (event, tool, working directory, the agent's
 * project-directory variable) to a log and, on the prompt event, adds a project rule as context. The
 * event is the payload's `hook_event_name`, or the hook's argument where the payload names none (Copilot).
 */
function userHook(agent: Agent, log: string): string {
  const context = agent.contextAnswer?.(agent.promptEvent, RULE) ?? { hookSpecificOutput: { hookEventName: agent.promptEvent, additionalContext: RULE } };
  return `#!/bin/sh
input=$(cat)
field() { printf '%s' "$input" | sed -n "s/.*\\"$1\\": *\\"\\([^\\"]*\\)\\".*/\\1/p" | head -n 1; }
event=$(field hook_event_name)
[ -n "$event" ] || event=$1
tool=$(field tool_name)
[ -n "$tool" ] || tool=$(field toolName)
printf 'event=%s tool=%s pwd=%s project=%s\\n' "$event" "$tool" "$(pwd)" "${agent.projectDirVar === undefined ? "unset" : `\${${agent.projectDirVar}:-unset}`}" >> ${shq(log)}
if [ "$event" = ${shq(agent.promptEvent)} ]; then
  printf '%s\\n' ${shq(JSON.stringify(context))}
fi
exit 0
`;
}
