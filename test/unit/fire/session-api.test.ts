// The session members of the runtime (fire/session-api.ts) over stand-ins: a principal names only a
// session it may see; a session hook not recorded for the other replicas is not registered at all;
// closing a session known only through fire() still drops its hooks; fire with a principal needs an
// open session.
import { describe, expect, test } from "vitest";
import { createSessionApi } from "../../../src/fire/session-api.js";
import { sessionNotFound } from "../../../src/pipeline/errors.js";
import type { SessionService } from "../../../src/pipeline/index.js";
import type { Registry } from "../../../src/registry/index.js";
import type { ChainFirer } from "../../../src/fire/vcp.js";

const A = { principal: { id: "app-a", role: "client" as const } };

function setup(options: { rememberFails?: boolean } = {}) {
  const log: string[] = [];
  const sessions = {
    get: async (id: string) => (id === "s1" ? { id } : undefined),
    keyOf: async (id: string) => `key:${id}`,
    close: async (id: string) => {
      if (id !== "s1") throw sessionNotFound(id);
      log.push(`close ${id}`);
    },
    sessionInfo: async (key: string) => (key === "key:s1" ? { id: "s1", state: "open" } : undefined),
  } as unknown as SessionService;
  const registry = {
    registerSessionHook: (ref: { hook: string }, opts: { sessionId: string; rateAdmitted?: string }) => (log.push(`register ${ref.hook} in ${opts.sessionId} ${opts.rateAdmitted ?? "local"}`), { name: ref.hook, type: "pre_inject", session_id: opts.sessionId }),
    deregister: (name: string, opts: { sessionId: string }) => void log.push(`deregister ${name} in ${opts.sessionId}`),
    dropSession: (key: string) => void log.push(`drop ${key}`),
  } as unknown as Registry;
  const firer = { fireKeyed: async (_t: string, _i: unknown, session: { id: string }, key: string) => (log.push(`fire ${session.id} ${key}`), {}) } as unknown as ChainFirer;
  const hooks = {
    remember: async () => {
      if (options.rememberFails) throw new Error("store down");
      return true;
    },
    forget: (key: string) => void log.push(`forget ${key}`),
    rebound: () => undefined,
    settled: () => undefined,
    published: async () => undefined,
  };
  const api = createSessionApi({ sessions, hooks, registry, firer, admission: { admit: async () => void log.push("admit"), shared: true }, assertOpen: () => undefined });
  return { api, log };
}

describe("session members", () => {
  test("a principal's unseen session is SESSION_NOT_FOUND before any work", async () => {
    const { api, log } = setup();
    await expect(api.visibleKey("s2", A)).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    await expect(api.sessions.registerHook("s2", { bundle: "b", hook: "watch" }, A)).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    await expect(api.fire("pre_inject", { session: "s2", ...A } as never)).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    expect(log).toEqual([]);
    // Without a principal (the embedding application) a session never opened is fired under its key.
    await api.fire("pre_inject", { session: "s2" } as never);
    expect(log).toEqual(["fire s2 key:s2"]);
  });

  test("a session hook is admitted once deployment-wide, registered under the key, recorded for the replicas", async () => {
    const { api, log } = setup();
    expect(await api.sessions.registerHook("s1", { bundle: "b", hook: "watch" }, A)).toMatchObject({ name: "watch" });
    expect(log).toEqual(["admit", "register watch in key:s1 shared"]);
  });

  test("a session hook the store could not record is taken out again", async () => {
    const { api, log } = setup({ rememberFails: true });
    await expect(api.sessions.registerHook("s1", { bundle: "b", hook: "watch" }, A)).rejects.toThrow("store down");
    expect(log).toEqual(["admit", "register watch in key:s1 shared", "deregister watch in key:s1"]);
  });

  test("closing drops the session's hooks, also of a session known only through fire()", async () => {
    const { api, log } = setup();
    await api.sessions.close("s1");
    await api.sessions.close("ghost");
    expect(log).toEqual(["close s1", "forget key:s1", "drop key:s1", "forget key:ghost", "drop key:ghost"]);
  });
});
