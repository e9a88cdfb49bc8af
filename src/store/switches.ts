/*
 * Hook switches shared by every replica: the Redis adapter of the switch port
 * (src/registry/switches.ts HookSwitchStore).
 *
 *   <prefix>:switches               hash    hook name → "1" on / "0" off, deployment-wide
 *   <prefix>:chan:switches          channel a deployment-wide switch was recorded (message: the hook name)
 *   <prefix>:s:{<k>}:switches       hash    ["session"|"deployment", hook] (JSON) → "1" / "0": one
 *                                           session's switches, next to its record (sessions.ts reads
 *                                           them with the session, before each of its operations, and
 *                                           deletes them when the session closes)
 *
 * test/integration/scale-out/hook-switch-store.test.ts runs the same cases on both adapters.
 */
import type { HookSwitch, HookSwitchStore } from "../registry/index.js";
import type { Scope } from "../model/hook-type.js";
import { defineScript, type StoreConnection } from "./connection.js";

const PUT = defineScript(
  "switch-put",
  // KEYS: switches. ARGV: hook, "1"/"0", channel.
  `
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[1])
return 1
`,
);

const PUT_IN_SESSION = defineScript(
  "switch-put-in-session",
  // KEYS: the session's record, its switches. ARGV: field, "1"/"0". Only for a session still open:
  // its close deletes both keys in one script, so nothing outlives the session.
  `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1
`,
);

/** The field of one session switch (sessions.ts clears a session hook's when it is registered again). */
export function sessionSwitchField(scope: Scope, hook: string): string {
  return JSON.stringify([scope, hook]);
}

/** A session's switches from its hash as HGETALL returns it (flat: field, value, …). */
export function parseSessionSwitches(flat: unknown): HookSwitch[] {
  const out: HookSwitch[] = [];
  if (!Array.isArray(flat)) return out;
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const [scope, hook] = JSON.parse(String(flat[i])) as [Scope, string];
    out.push({ hook, scope, enabled: String(flat[i + 1]) === "1" });
  }
  return out;
}

/**
 * @example
 * ```ts
 * const store = createRedisHookSwitchStore(shared.connection);
 * await store.put("strip-pii", false); // every replica's onChange listener hears it
 * ```
 */
export function createRedisHookSwitchStore(connection: StoreConnection): HookSwitchStore {
  const key = connection.keys.custom("switches");
  const channel = connection.keys.channel("switches");
  return {
    async put(hook, enabled) {
      await connection.eval(`switching hook '${hook}'`, PUT, [key], [hook, enabled ? "1" : "0", channel]);
    },
    async read() {
      const flat = (await connection.run("reading the hook switches", (redis) => redis.call("HGETALL", key))) as unknown[];
      const out = new Map<string, boolean>();
      for (let i = 0; i + 1 < flat.length; i += 2) out.set(String(flat[i]), String(flat[i + 1]) === "1");
      return out;
    },
    async putInSession(sessionKey, change) {
      // sessions.ts sessionKeys: the session's record and its switches.
      const keys = [connection.keys.session(sessionKey, "record"), connection.keys.session(sessionKey, "switches")];
      return Number(await connection.eval(`switching hook '${change.hook}' in a session`, PUT_IN_SESSION, keys, [sessionSwitchField(change.scope, change.hook), change.enabled ? "1" : "0"])) === 1;
    },
    async onChange(listener) {
      const unsubscribe = await connection.subscribe(channel, () => listener());
      // Messages sent while a connection was down are lost: read them all again after each reconnect.
      const stopReady = connection.onReady(listener);
      return async () => {
        stopReady();
        await unsubscribe();
      };
    },
  };
}
