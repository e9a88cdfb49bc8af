/**
 * Session ids are chosen by clients, so they are per owner (issue 10): when tenant B opens the id
 * tenant A already uses, B must get its own session — not SESSION_EXISTS (which reveals A's id and
 * lets B squat ids A will use) and not A's session state in any form.
 *
 * Setup: a deployment bundle with `isolation: per_session` whose hook remembers, in guest module
 * state, the last text it saw in its session and reports it; an allowlisted session-scope observer
 * that throws (for a cascade) registered by A; `cascade.disableFailingHooks`. A and B both open
 * "chat-1". Asserted: B's open succeeds; B's hook run never sees A's text (separate per-session
 * isolates); A's session hook does not run in B's chain; a cascade in A's "chat-1" disables nothing
 * in B's "chat-1"; views and audit show "chat-1" with each owner.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRuntime, type ChainResult, type Runtime } from "../../../src/index.js";
import { buildGuestText } from "../../lib/guest-build.js";
import { CONSTITUTION, EVENTS, RUNTIME_OPTIONS } from "../fixtures.js";
import { Checks, type Scenario } from "../scenario.js";

const SESSION = "chat-1";
const MEMORY_SOURCE = `let last = null;
export function remember(input) {
  const previous = last;
  last = String(input.context.text);
  return { status: "continue", annotations: { previous } };
}`;
const OBSERVER_SOURCE = `export function boom() { throw new Error("observer fails"); }
export function boom2() { throw new Error("observer fails too"); }`;

function input(text: string) {
  return { session: { id: SESSION }, context: { text }, constitution: structuredClone(CONSTITUTION), event: structuredClone(EVENTS["pre_inject"]) as never };
}

function previousSeen(result: ChainResult): unknown {
  return result.hook_results.find((h) => h.hook === "remember")?.annotations?.["previous"];
}

export const scenario: Scenario = {
  id: "same-session-id-two-owners",
  category: "tenant-isolation",
  title: "tenant B opens the session id tenant A uses: its own session, no SESSION_EXISTS, none of A's guest state, hooks or disables",
  expected: "B's open succeeds; B's per-session isolate never sees A's text; A's session hook and cascade disables stay in A's session; views and audit name each owner",
  async run() {
    const checks = new Checks();
    const dataDir = await mkdtemp(join(tmpdir(), "vcp-scenario-same-id-"));
    let runtime: Runtime | undefined;
    const observed: string[] = [];
    try {
      runtime = await createRuntime({ ...RUNTIME_OPTIONS, dataDir, cascade: { disableFailingHooks: true }, sessionHookAllowlist: ["observer/boom", "observer/boom2"] });
      await runtime.bundles.install({
        manifest: {
          bundle: "memory", version: "1.0.0", trust: "deployment", isolation: "per_session",
          hooks: [{ name: "remember", type: "pre_inject", action: "remember", priority: 50, timeout_ms: 2000, condition: null }],
        },
        code: await buildGuestText(MEMORY_SOURCE),
      });
      await runtime.bundles.install({
        manifest: {
          bundle: "observer", version: "1.0.0", trust: "session",
          hooks: [
            { name: "boom", type: "pre_inject", action: "boom", priority: 10, timeout_ms: 1000, scope: "session", condition: null },
            { name: "boom2", type: "pre_inject", action: "boom2", priority: 10, timeout_ms: 1000, scope: "session", condition: null },
          ],
        },
        code: await buildGuestText(OBSERVER_SOURCE),
      });
      const A = { principal: { id: "tenant-a", role: "client" as const } };
      const B = { principal: { id: "tenant-b", role: "client" as const } };
      await runtime.sessions.open({ session_id: SESSION, context: { text: "" }, constitution: structuredClone(CONSTITUTION) }, A);
      const a1 = await runtime.fire("pre_inject", { ...input("A-secret-4711"), ...A });
      observed.push(`A#1 previous=${JSON.stringify(previousSeen(a1))}`);

      let bOpened = false;
      try {
        const view = await runtime.sessions.open({ session_id: SESSION, context: { text: "" }, constitution: structuredClone(CONSTITUTION) }, B);
        bOpened = view.owner === "tenant-b" && view.session_id === SESSION;
      } catch (err) {
        observed.push(`B open: ${err instanceof Error ? err.message : String(err)}`);
      }
      checks.check(bOpened, `tenant B could not open its own session '${SESSION}' because tenant A uses the id (existence revealed, id squatted)`);
      if (!bOpened) return checks.outcome(observed.join("; "), true, runtime.status().sandbox.restarts);

      const b1 = await runtime.fire("pre_inject", { ...input("B-hello"), ...B });
      observed.push(`B#1 previous=${JSON.stringify(previousSeen(b1))}`);
      checks.check(previousSeen(b1) === null, `tenant B's per-session isolate saw tenant A's guest state: ${JSON.stringify(previousSeen(b1))}`);
      const a2 = await runtime.fire("pre_inject", { ...input("A-again"), ...A });
      checks.check(previousSeen(a2) === "A-secret-4711", `tenant A's per-session state was lost or mixed: ${JSON.stringify(previousSeen(a2))}`);

      // A's session hooks make A's chain cascade (2 of 3 fail): only A's "chat-1" is affected.
      await runtime.sessions.registerHook(SESSION, { bundle: "observer", hook: "boom" }, A);
      await runtime.sessions.registerHook(SESSION, { bundle: "observer", hook: "boom2" }, A);
      const a3 = await runtime.fire("pre_inject", { ...input("A-cascade"), ...A });
      observed.push(`A#3 ${a3.hook_results.map((h) => `${h.hook}=${h.outcome}`).join(",")}`);
      const b2 = await runtime.fire("pre_inject", { ...input("B-again"), ...B });
      observed.push(`B#2 ${b2.hook_results.map((h) => `${h.hook}=${h.outcome}`).join(",")}`);
      checks.check(b2.hook_results.every((h) => h.scope === "deployment"), "tenant A's session hooks ran in tenant B's session of the same id");
      checks.check(b2.hook_results.find((h) => h.hook === "remember")?.outcome === "ok", "tenant B's deployment hook did not run (ok) after a cascade in tenant A's session of the same id");
      checks.check((await runtime.hooks.chain("pre_inject", SESSION, B)).every((h) => h.enabled && h.scope === "deployment"), "tenant B's chain lists tenant A's session hooks or A's disables");

      const records = await runtime.audit.query({ session: SESSION, limit: 10_000 });
      const owners = new Set(records.filter((r) => r.kind === "chain").map((r) => r.owner));
      checks.check(owners.has("tenant-a") && owners.has("tenant-b") && owners.size === 2, `audit: chain records of '${SESSION}' name owners ${JSON.stringify([...owners])}`);

      await runtime.sessions.close(SESSION, A);
      const b3 = await runtime.fire("pre_inject", { ...input("B-last"), ...B });
      const servedAfter = b3.status === "completed" && previousSeen(b3) === "B-again";
      checks.check((await runtime.sessions.get(SESSION, B))?.owner === "tenant-b", "closing tenant A's session closed tenant B's session of the same id");
      return checks.outcome(observed.join("; "), servedAfter, runtime.status().sandbox.restarts);
    } finally {
      await runtime?.close().catch(() => undefined);
      await rm(dataDir, { recursive: true, force: true });
    }
  },
};
