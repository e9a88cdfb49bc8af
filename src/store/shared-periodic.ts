/**
 * Periodic hooks across replicas (spec §3.6, issues 18 and 27): every replica may run any session's
 * ticks; each tick is claimed by its number, so it fires once in the deployment, and replicas ask
 * Redis only for the sessions whose next tick is due.
 *
 * ```
 *  <prefix>:periodic:due   zset  session key → Redis time (ms) its next tick is due (0: look now)
 *
 *  every scanMs, on every replica:
 *    DUE: members with score ≤ Redis TIME, each handed to this replica (score := now + handOutMs)
 *    for each: read the session and register its session-scope hooks here ─► this replica's periodic
 *      hooks for it ─► CLAIM (one script): for each hook
 *          n = floor((Redis TIME − start) / interval)        ◄── Redis's clock, not this replica's
 *          n > last claimed? ─► last := n; this replica fires tick n (in the session's turn)
 *        next := the earliest next tick; score := next, or (a tick claimed) parked until the ticks
 *        ran: now + PARK_MS, then the runner puts back `next`
 * ```
 * The claim is one script, so two replicas that both hold a session (a stalled one whose hand-out
 * lapsed) still cannot both claim tick n: the second sees `last = n`. Tick numbers come from Redis
 * `TIME`, so replica clocks may disagree by any amount without a tick firing twice or early.
 *
 * Any replica takes any session: a session-scope hook registered on one replica lives in the
 * session's record (sessions.ts), and the replica that claims the session registers it before it
 * computes the hooks due — so a replica's death stops nothing; the next scan of another replica runs
 * the next tick. A tick a replica claimed and then died running is lost, not repeated (at most once),
 * and that session's next tick waits for its park to end (PARK_MS).
 *
 * What a session costs between its ticks: nothing. Redis is asked only for due sessions (one script
 * per replica per scan, whatever the number of sessions), and a session enters the set when it opens
 * with periodic hooks, when a session hook is registered for it, and — every open session — when
 * this replica's deployment-wide periodic hooks change (a bundle added, removed or re-timed one).
 */
import type { ResolvedHook } from "../model/hook.js";
import { createOutageLog, type Clock, type Logger } from "../observe/events.js";
import { sessionInfoOf, type SessionRecord } from "../pipeline/operations.js";
import type { PeriodicStatus, PipelineDeps } from "../pipeline/types.js";
import { createPeriodicTicker, periodicHooksOf, type PeriodicDue } from "../pipeline/periodic.js";
import { luaScript, type SessionRedis } from "./session-redis.js";

/**
 * How long a session stays with the replica that claimed ticks of it, at most: longer than a tick
 * takes (its wait for the session's turn, ≤ 15 s by default, plus its chain), so a slow tick is not
 * claimed again behind it. A replica that died mid-tick delays that session's next tick by this.
 */
export const PARK_MS = 30_000;

/** A session whose hooks this replica does not know but another replica scheduled: looked at again this often. */
export const RECHECK_MS = 60_000;

/** Due sessions taken per DUE script; a full batch is followed by another at once. */
const BATCH = 100;

export const DUE = luaScript(
  "periodic-due",
  "looking for due periodic ticks",
  // KEYS: due set. ARGV: batch size, hand-out ms. → { hand-out score, key₁, key₂, … }.
  `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
local handOut = now + tonumber(ARGV[2])
local out = { tostring(handOut) }
for _, key in ipairs(due) do
  redis.call('ZADD', KEYS[1], handOut, key)
  out[#out + 1] = key
end
return out
`,
);

export const CLAIM = luaScript(
  "periodic-claim",
  "claiming periodic ticks",
  // KEYS: session record, periodic hash, due set. ARGV: session key, replica id, hand-out score (what
  // DUE set), park ms, recheck ms, (field, interval ms)ₙ.
  // → { score set ('' when left alone), next tick's score ('' when none), { claimed tick number or 0,
  //   elapsed ms since the previous claimed tick }ₙ }; {} when the session is gone (and out of the due set).
  `
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('ZREM', KEYS[3], ARGV[1])
  return {}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = { '', '' }
local hooks = (#ARGV - 5) / 2
local next, claimedAny = nil, false
for i = 1, hooks do
  local field = ARGV[4 + 2 * i]
  local interval = tonumber(ARGV[5 + 2 * i])
  local claimed, elapsed = 0, 0
  local start = redis.call('HGET', KEYS[2], field .. '|start')
  local last = 0
  if not start then
    start = now
    redis.call('HSET', KEYS[2], field .. '|start', now, field .. '|last', 0, field .. '|interval', interval, field .. '|skipped', 0, field .. '|at', now)
  else
    start = tonumber(start)
    last = tonumber(redis.call('HGET', KEYS[2], field .. '|last') or '0')
    local lastAt = tonumber(redis.call('HGET', KEYS[2], field .. '|at') or start)
    if tonumber(redis.call('HGET', KEYS[2], field .. '|interval') or '0') ~= interval then
      -- Re-timed: the next tick is one new interval after the previous one.
      start = lastAt - last * interval
      redis.call('HSET', KEYS[2], field .. '|start', start, field .. '|interval', interval)
    end
    local n = math.floor((now - start) / interval)
    if n > last then
      if n > last + 1 then redis.call('HINCRBY', KEYS[2], field .. '|skipped', n - last - 1) end
      redis.call('HSET', KEYS[2], field .. '|last', n, field .. '|at', now, field .. '|by', ARGV[2])
      claimed, elapsed, last, claimedAny = n, now - lastAt, n, true
    end
  end
  local due = start + (last + 1) * interval
  if next == nil or due < next then next = due end
  out[#out + 1] = claimed
  out[#out + 1] = elapsed
end
if next ~= nil then out[2] = tostring(next) end
-- Only if the session is still as DUE left it: a reschedule meanwhile (a registry change, a session
-- hook registered) asked for a fresh look, which this claim, made with what it knew, must not hide.
local score = redis.call('ZSCORE', KEYS[3], ARGV[1])
if score and tonumber(score) ~= tonumber(ARGV[3]) then return out end
if claimedAny then
  out[1] = tostring(now + tonumber(ARGV[4]))
elseif next ~= nil then
  out[1] = tostring(next)
elseif redis.call('EXISTS', KEYS[2]) == 1 then
  -- Hooks another replica scheduled and this one does not know (a registry not yet reconciled).
  out[1] = tostring(now + tonumber(ARGV[5]))
else
  redis.call('ZREM', KEYS[3], ARGV[1])
  return out
end
redis.call('ZADD', KEYS[3], out[1], ARGV[1])
return out
`,
);

export const UNPARK = luaScript(
  "periodic-unpark",
  "scheduling the next periodic tick",
  // KEYS: due set. ARGV: session key, parked score (CLAIM's), next tick's score. Leaves any other score alone.
  `
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1]) end
return 0
`,
);

export const RESCHEDULE_ALL = luaScript(
  "periodic-reschedule-all",
  "rescheduling every session's periodic hooks",
  // KEYS: open-session set, due set. ARGV: 'all' (every session due now) or 'missing' (only sessions
  // not in the due set: those opened before it existed). → how many were (re)scheduled.
  `
local keys = redis.call('SMEMBERS', KEYS[1])
local n = 0
for i = 1, #keys, 500 do
  local args = {}
  for j = i, math.min(i + 499, #keys) do
    args[#args + 1] = 0
    args[#args + 1] = keys[j]
  end
  if ARGV[1] == 'missing' then n = n + redis.call('ZADD', KEYS[2], 'NX', unpack(args))
  else redis.call('ZADD', KEYS[2], unpack(args)); n = n + #args / 2 end
end
return n
`,
);

export interface SharedPeriodicDeps extends Pick<PipelineDeps, "fire" | "periodicHooks" | "onPeriodicTick" | "onContextReevaluated"> {
  redis: SessionRedis;
  clock: Clock;
  logger: Logger;
  scanMs: number;
  /** The set of open session keys (sessions.ts), for a reschedule of every session. */
  openSessionsKey: string;
  /**
   * Read a session and register its session-scope hooks on this replica (registered on any replica,
   * they live in the session's record), so this replica's `periodicHooks` include them. False when
   * the session is not open.
   */
  loadSession(sessionKey: string): Promise<boolean>;
  /** Run `tick` in the session's turn; a true result means the record changed and is written. */
  runTick(sessionKey: string, tick: (s: SessionRecord) => Promise<boolean>): Promise<void>;
  touch(s: SessionRecord): void;
  /** Registry changes: when this replica's deployment-wide periodic hooks change, every session is looked at again. */
  onRegistryChange?(listener: () => void): () => void;
  /**
   * False while this replica should leave ticks to its peers: it does not run what they run (it
   * refused the active revision of a bundle) or cannot reach the store. Default: always ready.
   */
  ready?(): boolean;
}

export interface SharedPeriodic {
  /** Start this replica's scan loop (idempotent). */
  start(): void;
  stop(): void;
  /** One scan now (tests, and the loop): every due session, batch after batch. */
  scan(): Promise<void>;
}

/** The due-set key of a deployment. */
export function periodicDueKey(redis: SessionRedis): string {
  return redis.keys.custom("periodic", "due");
}

/** A session's schedule as `SessionView.periodic` shows it, from its periodic hash. */
export function periodicStatus(fields: ReadonlyMap<string, string>): PeriodicStatus[] {
  const out: PeriodicStatus[] = [];
  for (const [name, value] of fields) {
    if (!name.endsWith("|interval")) continue;
    const field = name.slice(0, -"|interval".length);
    const slash = field.indexOf("/");
    out.push({
      hook: field.slice(slash + 1),
      scope: field.slice(0, slash) as PeriodicStatus["scope"],
      interval_ms: Number(value),
      tick_count: Number(fields.get(`${field}|last`) ?? 0),
      skipped: Number(fields.get(`${field}|skipped`) ?? 0),
    });
  }
  return out.sort((a, b) => (a.scope + a.hook).localeCompare(b.scope + b.hook));
}

/** Whether `hooks` holds a periodic hook to schedule (a session opened with one enters the due set). */
export function hasPeriodic(hooks: readonly ResolvedHook[]): boolean {
  return hooks.some((h) => h.type === "periodic" && h.enabled);
}

export function createSharedPeriodic(deps: SharedPeriodicDeps): SharedPeriodic {
  const { redis, logger } = deps;
  const dueKey = periodicDueKey(redis);
  // Long enough for this replica's read of the session and its claim, each bounded by the command timeout.
  const handOutMs = 2 * redis.commandTimeoutMs + 1000;
  // The tick itself is the local scheduler's (pipeline/periodic.ts): only when it is due differs.
  const tick = createPeriodicTicker({ ...deps, sessionInfo: sessionInfoOf });
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running = false;
  let scanning: Promise<void> | undefined;
  let stopRegistry: (() => void) | undefined;
  /** Ticks this replica is running, by `<key> <field>`: no second claim of a hook until its tick finished. */
  const inFlight = new Set<string>();
  // Through a Redis outage: one warning, one a minute, one line when it answers again (observe/events.ts).
  const outage = createOutageLog({ logger, clock: deps.clock, failing: "periodic scan could not reach the shared store; ticks resume when it answers", recovered: "periodic scan reached the shared store again" });
  /** A part of the scan under way failed: the scan does not count as the store answering again. */
  let scanFailed = false;
  /** This replica's deployment-wide periodic hooks, as last seen (a change reschedules every session). */
  let signature: string | undefined;

  async function scanSession(key: string, handOut: string): Promise<void> {
    if (!(await deps.loadSession(key))) {
      // Closed meanwhile (the close script removes it from the due set too).
      await redis.command("dropping a closed session's periodic schedule", ["ZREM", dueKey, key]);
      return;
    }
    const all = periodicHooksOf(deps.periodicHooks(key));
    const hooks = all.filter((h) => !inFlight.has(`${key} ${h.field}`));
    // Every hook of it is still running here (a tick longer than its park): look again after the hand-out.
    if (all.length > 0 && hooks.length === 0) return;
    const part = (name: string) => redis.keys.session(key, name);
    const args: (string | number)[] = [key, redis.replicaId, handOut, PARK_MS, RECHECK_MS, ...hooks.flatMap((h) => [h.field, h.intervalMs])];
    const out = ((await redis.script(CLAIM, [part("record"), part("periodic"), dueKey], args)) as unknown[]).map(String);
    if (out.length === 0) return;
    const [parked, next] = out as [string, string];
    const ticks: Promise<void>[] = [];
    hooks.forEach((hook, i) => {
      const tick = Number(out[2 + 2 * i] ?? 0);
      if (tick > 0) ticks.push(fireTick(key, hook, tick, Number(out[3 + 2 * i] ?? 0)));
    });
    // Parked while its ticks run (no replica claims the next one behind them); then due at its next tick.
    if (ticks.length > 0 && parked !== "" && next !== "") void Promise.all(ticks).then(() => unpark(key, parked, next));
  }

  function unpark(key: string, parked: string, next: string): void {
    // A failure here only delays: the park ends by itself (PARK_MS) and the tick is claimed then, late, not lost.
    redis.script(UNPARK, [dueKey], [key, parked, next]).catch(report);
  }

  function fireTick(key: string, hook: PeriodicDue, tickCount: number, elapsedMs: number): Promise<void> {
    const flight = `${key} ${hook.field}`;
    inFlight.add(flight);
    return deps
      .runTick(key, (s) => tick(s, { due: hook, tickCount, elapsedMs }))
      .catch((err: unknown) => logger.warn({ err, hook: hook.ref.name }, "periodic tick failed"))
      .finally(() => inFlight.delete(flight));
  }

  async function scan(): Promise<void> {
    for (;;) {
      const out = ((await redis.script(DUE, [dueKey], [BATCH, handOutMs])) as unknown[]).map(String);
      const [handOut, ...keys] = out;
      for (const key of keys) {
        try {
          await scanSession(key, handOut!);
        } catch (err) {
          report(err);
        }
      }
      if (keys.length < BATCH || !running) return;
    }
  }

  /**
   * Every open session due now: when this replica's deployment-wide periodic hooks changed (each
   * session's schedule must take them in), or, with `missing`, only sessions not scheduled at all
   * (opened by a release that kept no due set).
   */
  async function rescheduleAll(which: "all" | "missing"): Promise<void> {
    const n = Number(await redis.script(RESCHEDULE_ALL, [deps.openSessionsKey, dueKey], [which]));
    if (n > 0 && logger.isLevelEnabled("debug")) logger.debug({ sessions: n, which }, "periodic: sessions rescheduled");
  }

  function deploymentSignature(): string {
    // No session key names no session: the deployment-wide (and bundle) periodic hooks only.
    return periodicHooksOf(deps.periodicHooks("")).map((h) => `${h.field}@${h.intervalMs}`).sort().join(",");
  }

  function onRegistryChange(): void {
    const next = deploymentSignature();
    if (next === signature) return;
    signature = next;
    rescheduleAll("all").catch(report);
  }

  function report(err: unknown): void {
    scanFailed = true;
    outage.failed(err);
  }

  function loop(): void {
    if (!running) return;
    const ready = deps.ready?.() !== false;
    scanFailed = false;
    scanning = (ready ? scan() : Promise.resolve())
      .then(() => {
        if (ready && !scanFailed) outage.succeeded();
      }, report)
      .finally(() => {
        scanning = undefined;
        if (running) {
          timer = setTimeout(loop, deps.scanMs);
          timer.unref?.();
        }
      });
  }

  return {
    start() {
      if (running) return;
      running = true;
      signature = deploymentSignature();
      stopRegistry = deps.onRegistryChange?.(onRegistryChange);
      // Sessions are scheduled as they open and as the hooks change; at start only those opened by a
      // release that kept no due set are added (when deployment-wide periodic hooks apply to them).
      if (signature !== "") rescheduleAll("missing").catch(report);
      loop();
    },
    stop() {
      running = false;
      stopRegistry?.();
      if (timer !== undefined) clearTimeout(timer);
      void scanning;
    },
    scan,
  };
}
