// Session ownership through the library API (DESIGN §6.5): every session operation of the runtime
// takes `{ principal }`; a client principal reaches only sessions it opened, through every door
// (pipeline operations, fire, session hooks, chain listing, close). No principal = the embedding
// application. The chains of a session are audited with its owner.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { createRuntime, VcpError, type Runtime } from "../../../src/index.js";
import { testBundle } from "../../support/bundles.js";
import { constitution, events } from "../../support/fixtures.js";
import { createVmBackend } from "../../support/vm-backend.js";

const A = { principal: { id: "app-a", role: "client" as const } };
const B = { principal: { id: "app-b", role: "client" as const } };
const OPS = { principal: { id: "ops", role: "operator" as const } };

let rt: Runtime;
let dataDir: string;
beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "vcp-owner-"));
  rt = await createRuntime({ dataDir, backend: createVmBackend(), sessionHookAllowlist: ["owned/watch"], registrationsPerMinute: 1000 });
  await rt.bundles.install(
    testBundle("owned", [{ name: "mark", type: "pre_inject" }, { name: "watch", type: "pre_inject", scope: "session" }], {
      mark: "function () { return { status: 'continue' }; }",
      watch: "function () { return { status: 'continue', annotations: { watched: true } }; }",
    }),
  );
  await rt.sessions.open({ session_id: "a1", context: { user: "a" }, constitution }, A);
});
afterAll(async () => {
  await rt?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function code(run: () => unknown): Promise<string> {
  try {
    await run();
  } catch (err) {
    if (err instanceof VcpError) return err.code;
    throw err;
  }
  return "ok";
}

test("another client reaches A's session through no door: each is SESSION_NOT_FOUND", async () => {
  const fire = { session: "a1", context: { stolen: true }, constitution, event: events.pre_inject };
  expect(await rt.sessions.get("a1", B)).toBeUndefined();
  expect(await rt.sessions.list(B)).toEqual([]);
  expect(await code(() => rt.fire("pre_inject", { ...fire, ...B }))).toBe("SESSION_NOT_FOUND");
  expect(await code(() => rt.sessions.registerHook("a1", { bundle: "owned", hook: "watch" }, B))).toBe("SESSION_NOT_FOUND");
  expect(await code(() => rt.hooks.chain("pre_inject", "a1", B))).toBe("SESSION_NOT_FOUND");
  expect(await code(() => rt.transition("a1", { to: "x", trigger: "b" }, B))).toBe("SESSION_NOT_FOUND");
  expect(await code(() => rt.sessions.close("a1", B))).toBe("SESSION_NOT_FOUND");
  // A client cannot reach a session the embedding application opened either, nor fire for an id no one opened.
  await rt.sessions.open({ session_id: "embedded", context: {}, constitution });
  expect(await code(() => rt.fire("pre_inject", { ...fire, session: "embedded", ...B }))).toBe("SESSION_NOT_FOUND");
  expect(await code(() => rt.fire("pre_inject", { ...fire, session: "never-opened", ...B }))).toBe("SESSION_NOT_FOUND");
  expect((await rt.sessions.get("a1"))!.context).toEqual({ user: "a" });
  expect((await rt.hooks.chain("pre_inject", "a1")).map((h) => h.name)).toEqual(["mark"]);
});

test("the owner and operators act on it; its chains are audited with the owner", async () => {
  await rt.sessions.registerHook("a1", { bundle: "owned", hook: "watch" }, A);
  expect((await rt.hooks.chain("pre_inject", "a1", A)).map((h) => h.name)).toEqual(["mark", "watch"]);
  const result = await rt.fire("pre_inject", { session: "a1", context: { user: "a" }, constitution, event: events.pre_inject, ...A });
  expect(result.hook_results.map((h) => h.hook)).toEqual(["mark", "watch"]);
  expect((await rt.sessions.get("a1", OPS))!.owner).toBe("app-a");
  const records = (await rt.audit.query({ session: "a1" })).filter((r) => r.kind !== "registry");
  expect(records.map((r) => [r.kind, r.owner])).toEqual([["hook", "app-a"], ["hook", "app-a"], ["chain", "app-a"]]);
  // A principal-less session's records carry no owner.
  await rt.fire("pre_inject", { session: "embedded", context: {}, constitution, event: events.pre_inject });
  expect((await rt.audit.query({ session: "embedded" })).every((r) => r.owner === undefined)).toBe(true);
  await rt.sessions.close("a1", OPS);
  expect(await rt.sessions.get("a1")).toBeUndefined();
});

test("session ids are per owner through the library: same id, two sessions, hooks and events keep them apart", async () => {
  const registered: Array<{ session_id?: string; owner?: string }> = [];
  const off = rt.on("hook.registered", (p) => registered.push(p));
  await rt.sessions.open({ session_id: "twin", context: { user: "a" }, constitution }, A);
  await rt.sessions.open({ session_id: "twin", context: { user: "b" }, constitution }, B);
  expect(await code(() => rt.sessions.open({ session_id: "twin", context: {}, constitution }, B))).toBe("SESSION_EXISTS");
  // Views show the caller's id, never the runtime's internal key.
  expect((await rt.sessions.registerHook("twin", { bundle: "owned", hook: "watch" }, B)).session_id).toBe("twin");
  off();
  expect((await rt.hooks.chain("pre_inject", "twin", B)).find((h) => h.name === "watch")?.session_id).toBe("twin");
  expect(rt.status().hooks.find((h) => h.hook === "watch" && h.session_id === "twin")?.owner).toBe("app-b");
  expect(registered.at(-1)).toMatchObject({ session_id: "twin", owner: "app-b" });
  expect((await rt.hooks.chain("pre_inject", "twin", A)).map((h) => h.name)).toEqual(["mark"]);
  expect((await rt.hooks.chain("pre_inject", "twin", B)).map((h) => h.name)).toEqual(["mark", "watch"]);
  const fire = { session: "twin", context: { user: "?" }, constitution, event: events.pre_inject };
  expect((await rt.fire("pre_inject", { ...fire, ...A })).hook_results.map((h) => h.hook)).toEqual(["mark"]);
  expect((await rt.fire("pre_inject", { ...fire, ...B })).hook_results.map((h) => h.hook)).toEqual(["mark", "watch"]);
  // Operators and the embedding application name the owner once two owners use the id.
  expect(await code(() => rt.hooks.chain("pre_inject", "twin", OPS))).toBe("SESSION_AMBIGUOUS");
  expect(await code(() => rt.fire("pre_inject", fire))).toBe("SESSION_AMBIGUOUS");
  expect((await rt.hooks.chain("pre_inject", "twin", { ...OPS, owner: "app-b" })).map((h) => h.name)).toEqual(["mark", "watch"]);
  expect((await rt.fire("pre_inject", { ...fire, owner: "app-b" })).hook_results.map((h) => h.hook)).toEqual(["mark", "watch"]);
  await rt.hooks.setEnabled("watch", false, { sessionId: "twin", owner: "app-b" });
  expect((await rt.hooks.chain("pre_inject", "twin", B)).find((h) => h.name === "watch")?.enabled).toBe(false);
  expect((await rt.sessions.list(OPS)).filter((v) => v.session_id === "twin").map((v) => v.owner).sort()).toEqual(["app-a", "app-b"]);
  await rt.sessions.close("twin", B);
  expect((await rt.sessions.get("twin", A))?.context).toEqual({ user: "a" });
  expect((await rt.hooks.chain("pre_inject", "twin", OPS)).map((h) => h.name)).toEqual(["mark"]);
  await rt.sessions.close("twin", A);
});

test("maxSessionsPerOwner must be a positive integer", async () => {
  expect(await code(() => createRuntime({ backend: createVmBackend(), maxSessionsPerOwner: 0 }))).toBe("INVALID_CONFIG");
});
