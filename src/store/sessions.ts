/**
 * Sessions in Redis (issue 18): the {@link SessionService} every replica serves, so a session opened
 * on one replica is adapted, transitioned, fired and closed on any other.
 *
 * ```
 *  <prefix>:s:{<k>}:record      hash { rec: record JSON (operations.ts SessionRecord + epoch), fence }
 *  <prefix>:s:{<k>}:hooks       set of session-hook refs (JSON) registered for it
 *  <prefix>:s:{<k>}:switches    hash of its hook switches (switches.ts; spec §7.3.4), read with the session
 *  <prefix>:s:{<k>}:lock        the per-session lock (session-lock.ts); …:fence its fence counter
 *  <prefix>:s:{<k>}:periodic    the session's periodic schedule (shared-periodic.ts)
 *  <prefix>:periodic:due        zset: when each session's next periodic tick is due (shared-periodic.ts)
 *  <prefix>:sessions            set of open session keys (list; every session rescheduled when periodic hooks change)
 *  <prefix>:sessions-of:<o>     set of an owner's open session keys (SESSION_LIMIT, counted across replicas)
 *  <prefix>:session-ids:<id>    set of the keys using a caller-facing id (an operator's lookup by id)
 *  (<k>: the session key of access.ts, escaped by keys.ts; <o>, <id>: base64url)
 * ```
 *
 * Every operation of a session runs under its cross-replica lock, behind a per-key FIFO queue on this
 * replica (so local callers keep their order and do not poll Redis against each other): acquire and
 * read in one script, run the chains, then write and release in one script that refuses a holder
 * whose lock expired (fencing). Each state change is that one script: nothing is half-written. Every
 * round trip is bounded; Redis not answering is STORE_UNAVAILABLE (503) and nothing changed.
 */
import { randomUUID } from "node:crypto";
import { VcpError } from "../errors.js";
import { keyAmong, keyParts, maySee, namespacedKey, seesAllOwners, type SessionAccess } from "../pipeline/access.js";
import { sessionAmbiguous, sessionExists, sessionLimit, sessionNotFound } from "../pipeline/errors.js";
import { assertOperationInput, createSessionOperations, newSessionRecord, openingOf, sessionInfoOf, sessionViewOf, type SessionRecord } from "../pipeline/operations.js";
import { createSerialQueue, type SerialQueue } from "../pipeline/queue.js";
import type { PeriodicStatus, PipelineDeps, SessionService, SessionView } from "../pipeline/types.js";
import { frozenJsonCopy } from "../pipeline/validate.js";
import { DEFAULT_JSON_BOUNDS } from "../model/json-bounds.js";
import type { SessionInfo } from "../model/input.js";
import { acquire, commit, lateWrite, release, writeDeadline, type HeldLock, type LockTiming } from "./session-lock.js";
import { segment, luaScript, type SessionRedis } from "./session-redis.js";
import { parseSessionSwitches, sessionSwitchField } from "./switches.js";
import type { HookSwitch } from "../registry/index.js";
import { createSharedPeriodic, hasPeriodic, periodicDueKey, periodicStatus, type SharedPeriodic } from "./shared-periodic.js";

/** A session-scope hook registered for a session, as every replica re-registers it. */
export interface SessionHookRef {
  bundle: string;
  hook: string;
  /** The registering principal's id (the registry's rate limits and audit name it). */
  principal: string;
}

/** A stored session: the operations' record plus the epoch of this opening (a re-opened id is a new session). */
interface StoredSession extends SessionRecord {
  readonly epoch: string;
}

export interface SharedSessionDeps extends PipelineDeps {
  redis: SessionRedis;
  lock?: Partial<LockTiming>;
  /**
   * Bring this replica's registry in line with a session's recorded hooks before one of its chains
   * runs, and with its hook switches (`epoch` changes when the id is closed and opened again: the old
   * hooks go first; null: the session is not open in the store).
   */
  applySessionHooks(key: string, epoch: string | null, refs: readonly SessionHookRef[], switches: readonly HookSwitch[]): void;
  /** How often this replica looks for due periodic ticks; default 200 ms. */
  periodicScanMs?: number;
  /** False while this replica should leave periodic ticks to its peers (shared-periodic.ts `ready`). */
  periodicReady?(): boolean;
}

export interface SharedSessionService extends SessionService {
  readonly kind: "shared";
  /** Record a session hook so every replica registers it for the session. */
  rememberHook(key: string, ref: SessionHookRef, options?: { periodic?: boolean }): Promise<void>;
  /** Forget session hooks of `bundle` a revision dropped, with their switches: no replica registers them again. */
  forgetHooks(key: string, bundle: string, hooks: readonly string[]): Promise<void>;
  /** The keys of every session open in the store (a sweep over all of them). */
  openKeys(): Promise<string[]>;
  /** The periodic scheduler's lease loop (started by the runtime once bundles are restored). */
  readonly periodic: SharedPeriodic;
}

export const DEFAULT_LOCK_TIMING: Readonly<LockTiming> = Object.freeze({ ttlMs: 5000, waitMs: 15_000 });

const OPEN = luaScript(
  "session-open",
  "opening the session",
  // KEYS: record, all, owner set, ids set, periodic due set. ARGV: key, record JSON, limit (-1: none),
  // has owner (1/0), periodic hooks apply (1/0: its schedule is set up by the next scan).
  `
if redis.call('EXISTS', KEYS[1]) == 1 then return 'EXISTS' end
if ARGV[4] == '1' and tonumber(ARGV[3]) >= 0 and redis.call('SCARD', KEYS[3]) >= tonumber(ARGV[3]) then return 'LIMIT' end
redis.call('HSET', KEYS[1], 'rec', ARGV[2], 'fence', 0)
redis.call('SADD', KEYS[2], ARGV[1])
if ARGV[4] == '1' then redis.call('SADD', KEYS[3], ARGV[1]) end
redis.call('SADD', KEYS[4], ARGV[1])
if ARGV[5] == '1' then redis.call('ZADD', KEYS[5], 0, ARGV[1]) end
return 'OK'
`,
);

const CLOSE = luaScript(
  "session-close",
  "closing the session",
  // KEYS: lock, record, all, owner set, ids set, hooks, fence, periodic, periodic due set, switches. ARGV: key,
  // token, has owner, not after (Redis TIME ms: session-lock.ts writeDeadline).
  `
local t = redis.call('TIME')
if tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) > tonumber(ARGV[4]) then return 'LATE' end
if redis.call('GET', KEYS[1]) ~= ARGV[2] then return 'LOST' end
redis.call('DEL', KEYS[2], KEYS[6], KEYS[7], KEYS[8], KEYS[10], KEYS[1])
redis.call('ZREM', KEYS[9], ARGV[1])
redis.call('SREM', KEYS[3], ARGV[1])
if ARGV[3] == '1' then redis.call('SREM', KEYS[4], ARGV[1]) end
redis.call('SREM', KEYS[5], ARGV[1])
return 'OK'
`,
);

const READ = luaScript(
  "session-read",
  "reading the session",
  // KEYS: record, periodic, hooks, switches. → { record JSON or false, {periodic hash flat}, {hook refs}, {switches flat} }.
  `
local rec = redis.call('HGET', KEYS[1], 'rec')
if not rec then return {false, {}, {}, {}} end
return {rec, redis.call('HGETALL', KEYS[2]), redis.call('SMEMBERS', KEYS[3]), redis.call('HGETALL', KEYS[4])}
`,
);

const READ_MANY = luaScript(
  "session-read-many",
  "listing sessions",
  // KEYS: record₁, periodic₁, record₂, periodic₂, … → { rec₁ or false, {periodic₁}, … }.
  `
local out = {}
for i = 1, #KEYS, 2 do
  out[#out + 1] = redis.call('HGET', KEYS[i], 'rec') or false
  out[#out + 1] = redis.call('HGETALL', KEYS[i + 1])
end
return out
`,
);

const REMEMBER_HOOK = luaScript(
  "session-remember-hook",
  "recording a session hook",
  // KEYS: record, hooks, periodic due set, switches. ARGV: ref JSON, session key, periodic (1/0), the
  // hook's switch field. Only for a session still open. A hook registered again starts as its definition
  // says: a switch of an earlier registration of the name goes.
  `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HDEL', KEYS[4], ARGV[4])
-- A periodic session hook: the next scan of any replica sets its schedule up.
if ARGV[3] == '1' then redis.call('ZADD', KEYS[3], 0, ARGV[2]) end
return redis.call('SADD', KEYS[2], ARGV[1]) + 1
`,
);

const FORGET_HOOKS = luaScript(
  "session-forget-hooks",
  "forgetting session hooks",
  // KEYS: hooks, switches. ARGV: bundle, then (hook, its switch field) pairs. A bundle revision dropped
  // the hooks (registry.ts swapBundle): their refs (any registering principal) and switches go, so no
  // replica registers them again when a later revision offers them.
  `
local gone = {}
for i = 2, #ARGV, 2 do gone[ARGV[i]] = ARGV[i + 1] end
local n = 0
for _, ref in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local ok, r = pcall(cjson.decode, ref)
  if ok and r.bundle == ARGV[1] and gone[r.hook] then n = n + redis.call('SREM', KEYS[1], ref) end
end
for _, field in pairs(gone) do redis.call('HDEL', KEYS[2], field) end
return n
`,
);

/** The Redis keys of one session. */
export function sessionKeys(redis: SessionRedis, key: string) {
  // One hash tag per session (keys.ts): every key a session's scripts touch is in one slot.
  const part = (name: string) => redis.keys.session(key, name);
  return { record: part("record"), lock: part("lock"), fence: part("fence"), hooks: part("hooks"), periodic: part("periodic"), switches: part("switches") };
}

/**
 * Create the Redis-backed session service. The operations are the local pipeline's (operations.ts);
 * only where a session lives and how its turn is taken differ.
 */
export function createSharedSessions(deps: SharedSessionDeps): SharedSessionService {
  const { redis, clock } = deps;
  const timing: LockTiming = { ...DEFAULT_LOCK_TIMING, ...deps.lock };
  const bounds = deps.inputBounds ?? DEFAULT_JSON_BOUNDS;
  const maxPerOwner = deps.maxSessionsPerOwner ?? Number.POSITIVE_INFINITY;
  const allKey = redis.keys.custom("sessions");
  const dueKey = periodicDueKey(redis);
  const ownerKey = (owner: string) => redis.keys.custom("sessions-of", segment(owner));
  const idsKey = (id: string) => redis.keys.custom("session-ids", segment(id));
  const now = (): string => new Date(clock.wallNow()).toISOString();
  /** Records an operation changed (operations.ts calls `touch` on every change): only those are written. */
  const dirty = new WeakSet<SessionRecord>();
  const touch = (s: SessionRecord): void => {
    s.updatedAt = now();
    dirty.add(s);
  };
  const operations = createSessionOperations(deps, touch);
  /** This replica's FIFO per session key, in front of the cross-replica lock. */
  const turns = new Map<string, SerialQueue>();
  let closing = false;

  function parse(json: string): StoredSession {
    return frozenJsonCopy("stored session", JSON.parse(json) as StoredSession) as StoredSession;
  }

  /** A mutable record whose values are the stored (frozen) ones: operations replace fields, never mutate values. */
  function mutable(json: string): StoredSession {
    return { ...parse(json) };
  }

  function parseHooks(refs: readonly unknown[]): SessionHookRef[] {
    return refs.map((r) => JSON.parse(String(r)) as SessionHookRef);
  }

  function flatToMap(flat: unknown): Map<string, string> {
    const out = new Map<string, string>();
    if (!Array.isArray(flat)) return out;
    for (let i = 0; i + 1 < flat.length; i += 2) out.set(String(flat[i]), String(flat[i + 1]));
    return out;
  }

  function view(s: StoredSession, periodic: readonly PeriodicStatus[]): SessionView {
    return sessionViewOf(s, periodic);
  }

  /** Pipeline.keyOf over the store: the one place the per-owner namespace is resolved. */
  async function keyOf(id: string, access: SessionAccess | undefined): Promise<string> {
    const named = namespacedKey(id, access);
    if (named !== undefined) return named;
    const keys = ((await redis.command(`finding session '${id}'`, ["SMEMBERS", idsKey(id)])) as unknown[]).map(String);
    return keyAmong(id, keys, (owners) => sessionAmbiguous(id, owners));
  }

  async function read(key: string): Promise<{ session: StoredSession; periodic: Map<string, string>; hooks: SessionHookRef[]; switches: HookSwitch[] } | undefined> {
    const keys = sessionKeys(redis, key);
    const out = (await redis.script(READ, [keys.record, keys.periodic, keys.hooks, keys.switches], [])) as [string | false | null, unknown, unknown[], unknown];
    if (typeof out[0] !== "string") return undefined;
    return { session: parse(out[0]), periodic: flatToMap(out[1]), hooks: parseHooks(out[2] ?? []), switches: parseSessionSwitches(out[3]) };
  }

  async function visible(id: string, access: SessionAccess | undefined) {
    const found = await read(await keyOf(id, access));
    // SECURITY: maySee stays the last word even though keyOf already confined a client to its own ids.
    return found !== undefined && maySee(found.session.owner, access?.principal) ? found : undefined;
  }

  function turnOf(key: string): SerialQueue {
    let queue = turns.get(key);
    if (queue === undefined) turns.set(key, (queue = createSerialQueue()));
    return queue;
  }

  /**
   * Run `work` in the session's turn across replicas: this replica's queue, then the Redis lock; the
   * record it returns (if any) is committed with the release, in one script. SESSION_NOT_FOUND when
   * the session is not open or `access` may not see it.
   */
  function inTurn<T>(key: string, id: string, access: SessionAccess | undefined, work: (s: StoredSession, hooks: SessionHookRef[], switches: HookSwitch[], lock: HeldLock) => Promise<{ result: T; changed: StoredSession | undefined; released?: true }>): Promise<T> {
    const queue = turnOf(key);
    const run = queue.run(async () => {
      const keys = sessionKeys(redis, key);
      const held = await acquire(redis, keys, timing, id, () => deps.logger.warn({ session_id: id }, "session lock lost while an operation ran; its result will not be written"));
      if (held.record === null) throw sessionNotFound(id);
      let done = false;
      try {
        const session = mutable(held.record);
        // SECURITY: another owner's session is "not found", never "forbidden".
        if (!maySee(session.owner, access?.principal)) throw sessionNotFound(id);
        const { result, changed, released } = await work(session, parseHooks(held.hooks), parseSessionSwitches(held.switches), held.lock);
        // The work's own script let the lock go (close deletes it with the session).
        if (released === true) done = true;
        else if (changed !== undefined) {
          await commit(redis, keys, held.lock, JSON.stringify(changed), id);
          done = true;
        }
        return result;
      } finally {
        if (!done) await release(redis, keys.lock, held.lock).catch((err: unknown) => deps.logger.warn({ err, session_id: id }, "session lock release failed; it expires by itself"));
      }
    });
    void run.finally(() => {
      if (queue.size === 0 && turns.get(key) === queue) turns.delete(key);
    }).catch(() => undefined);
    return run;
  }

  /** One pipeline operation: checked input, the session's turn, the shared operation code, one commit. */
  function operate<I, O>(op: "adapt" | "transition" | "conflict" | "violation", id: string, input: I, access: SessionAccess | undefined, run: (s: StoredSession, input: I) => Promise<O>): Promise<O> {
    return (async () => {
      // SECURITY: bounded and validated before any lookup, lock or copy.
      assertOperationInput(op, input, bounds);
      const key = await keyOf(id, access);
      return inTurn(key, id, access, async (s, hooks, switches) => {
        deps.applySessionHooks(key, s.epoch, hooks, switches);
        const result = await run(s, input);
        return { result, changed: dirty.has(s) ? s : undefined };
      });
    })();
  }

  const service: SharedSessionService = {
    kind: "shared",

    async open(input, access) {
      if (closing) throw new VcpError("SANDBOX_CLOSED", "the runtime is closed");
      const { id, owner, key } = openingOf(input, access, bounds);
      const session: StoredSession = {
        ...newSessionRecord(id, key, owner, input, now()),
        epoch: randomUUID(),
      };
      const limit = owner === null || !Number.isFinite(maxPerOwner) ? -1 : maxPerOwner;
      // One script: the existence check, the owner's cap (counted over every replica) and the writes.
      const periodic = hasPeriodic(deps.periodicHooks(key)) ? 1 : 0;
      const out = String(await redis.script(OPEN, [sessionKeys(redis, key).record, allKey, owner === null ? allKey : ownerKey(owner), idsKey(id), dueKey], [key, JSON.stringify(session), limit, owner === null ? 0 : 1, periodic]));
      // SECURITY: only the caller's own namespace is checked: another owner's use of the id is invisible.
      if (out === "EXISTS") throw sessionExists(id);
      if (out === "LIMIT") throw sessionLimit(owner!, maxPerOwner);
      return view(session, []);
    },

    async get(id, access) {
      const found = await visible(id, access);
      return found === undefined ? undefined : view(found.session, periodicStatus(found.periodic));
    },

    async list(access) {
      const principal = access?.principal;
      const keys = ((await redis.command("listing sessions", ["SMEMBERS", seesAllOwners(principal) ? allKey : ownerKey(principal!.id)])) as unknown[]).map(String).sort();
      if (keys.length === 0) return [];
      const flat = keys.flatMap((k) => {
        const ks = sessionKeys(redis, k);
        return [ks.record, ks.periodic];
      });
      const out = (await redis.script(READ_MANY, flat, [])) as unknown[];
      const views: SessionView[] = [];
      for (let i = 0; i < keys.length; i++) {
        const rec = out[2 * i];
        if (typeof rec !== "string") continue;
        const s = parse(rec);
        if (maySee(s.owner, principal)) views.push(view(s, periodicStatus(flatToMap(out[2 * i + 1]))));
      }
      return views;
    },

    async close(id, access) {
      const key = await keyOf(id, access);
      // Operations already in this session's turn finish first (here: the queue; elsewhere: the lock).
      await inTurn(key, id, access, async (s, _hooks, _switches, lock) => {
        const keys = sessionKeys(redis, key);
        const out = String(await redis.script(CLOSE, [keys.lock, keys.record, allKey, s.owner === null ? allKey : ownerKey(s.owner), idsKey(s.id), keys.hooks, keys.fence, keys.periodic, dueKey, keys.switches], [key, lock.token, s.owner === null ? 0 : 1, writeDeadline(redis, lock)]));
        if (out === "LATE") throw lateWrite(id, "closing the session");
        if (out !== "OK") throw new VcpError("SESSION_LOCK_LOST", `session '${id}': the lock expired before it could be closed; nothing was changed, retry`, { session_id: id, reason: "lost" });
        lock.stopRenewing();
        return { result: undefined, changed: undefined, released: true };
      });
    },

    async closeAll() {
      // Sessions live on in Redis for the other replicas: this replica only stops serving them.
      closing = true;
      periodic.stop();
      await Promise.all([...turns.values()].map((q) => q.idle()));
    },

    adapt: (id, input, access) => operate("adapt", id, input, access, (s, i) => operations.adapt(s, i)),
    transition: (id, input, access) => operate("transition", id, input, access, (s, i) => operations.transition(s, i)),
    conflict: (id, input, access) => operate("conflict", id, input, access, (s, i) => operations.conflict(s, i)),
    violation: (id, input, access) => operate("violation", id, input, access, (s, i) => operations.violation(s, i)),

    keyOf: (id, access) => keyOf(id, access),

    async sessionInfo(key): Promise<SessionInfo | undefined> {
      const found = await read(key);
      if (found === undefined) {
        deps.applySessionHooks(key, null, [], []);
        return undefined;
      }
      deps.applySessionHooks(key, found.session.epoch, found.hooks, found.switches);
      return sessionInfoOf(found.session);
    },

    async count() {
      return Number(await redis.command("counting sessions", ["SCARD", allKey]));
    },

    async rememberHook(key, ref, options = {}) {
      const keys = sessionKeys(redis, key);
      const out = Number(await redis.script(REMEMBER_HOOK, [keys.record, keys.hooks, dueKey, keys.switches], [JSON.stringify(ref), key, options.periodic === true ? 1 : 0, sessionSwitchField("session", ref.hook)]));
      if (out === 0) throw sessionNotFound(keyParts(key).id);
    },

    async forgetHooks(key, bundle, hooks) {
      const keys = sessionKeys(redis, key);
      await redis.script(FORGET_HOOKS, [keys.hooks, keys.switches], [bundle, ...hooks.flatMap((hook) => [hook, sessionSwitchField("session", hook)])]);
    },

    async openKeys() {
      return ((await redis.command("listing open sessions", ["SMEMBERS", allKey])) as unknown[]).map(String);
    },

    periodic: undefined as unknown as SharedPeriodic,
  };

  const periodic = createSharedPeriodic({
    redis,
    clock,
    logger: deps.logger,
    scanMs: deps.periodicScanMs ?? 200,
    openSessionsKey: allKey,
    // Reading the session registers its session hooks here: this replica can run all of its ticks.
    loadSession: async (key) => (await service.sessionInfo(key)) !== undefined,
    periodicHooks: deps.periodicHooks,
    onRegistryChange: deps.onRegistryChange,
    ...(deps.periodicReady !== undefined ? { ready: deps.periodicReady } : {}),
    // A claimed tick runs in the session's turn, like any operation of the session.
    runTick: (key, tick) =>
      inTurn(key, keyParts(key).id, undefined, async (s, hooks, switches) => {
        deps.applySessionHooks(key, s.epoch, hooks, switches);
        const reevaluated = await tick(s);
        return { result: undefined, changed: reevaluated ? s : undefined };
      }),
    fire: deps.fire,
    touch,
    onPeriodicTick: deps.onPeriodicTick,
    onContextReevaluated: deps.onContextReevaluated,
  });
  (service as { periodic: SharedPeriodic }).periodic = periodic;
  return service;
}
