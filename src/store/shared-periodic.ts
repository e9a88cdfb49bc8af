/**
 * Periodic hooks across replicas (spec §3.6, issue 18): each (session, hook) timer is owned by one
 * replica through a lease, and each tick is claimed by its number, so a tick never fires twice.
 *
 * ```
 *  every scanMs, on every replica, for every open session with periodic hooks (one script per session):
 *    lease <prefix>:s:{<k>}:periodic-lease <hook> free or mine? ─ no ─► skip (another replica owns it)
 *        └─ yes ─► (re)take it for leaseMs
 *                  n = floor((Redis TIME − start) / interval)       ◄── Redis's clock, not this replica's
 *                  n > last claimed? ─► last := n; this replica fires tick n (in the session's turn)
 * ```
 * The claim is one script, so two replicas that both believe they own a lease (a stalled one whose
 * lease lapsed) still cannot both claim tick n: the second sees `last = n`. Tick numbers come from
 * Redis `TIME`, so replica clocks may disagree by any amount without a tick firing twice or early.
 * A dead owner stops renewing; its lease lapses after leaseMs (< one interval: intervals are
 * ≥ 1000 ms) and the next scan of another replica takes the hook over. A tick a replica claimed and
 * then died running is lost, not repeated: at most once.
 */
import type { ChainResult } from "../chain/types.js";
import { periodicIntervalMs, type ResolvedHook } from "../model/hook.js";
import type { Clock, Logger } from "../observe/events.js";
import { sessionInfoOf, type SessionRecord } from "../pipeline/operations.js";
import type { HookRef, PeriodicStatus, PipelineDeps } from "../pipeline/types.js";
import { frozenJsonCopy } from "../pipeline/validate.js";
import { luaScript, type SessionRedis } from "./session-redis.js";

/** Lease time to live: well under the shortest interval (1000 ms), so a takeover lands within one interval. */
export const PERIODIC_LEASE_MS = 600;

export const CLAIM = luaScript(
  "periodic-claim",
  "claiming periodic ticks",
  // KEYS: session record, periodic hash, lease₁…leaseₙ. ARGV: replica id, lease ms, (field, interval ms)ₙ.
  // → { claimed tick number or 0, elapsed ms since the previous claimed tick }ₙ; {} when the session is gone.
  `
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
local hooks = (#ARGV - 2) / 2
for i = 1, hooks do
  local field = ARGV[1 + 2 * i]
  local interval = tonumber(ARGV[2 + 2 * i])
  local lease = KEYS[2 + i]
  local holder = redis.call('GET', lease)
  local claimed, elapsed = 0, 0
  if (not holder) or holder == ARGV[1] then
    redis.call('SET', lease, ARGV[1], 'PX', ARGV[2])
    local start = redis.call('HGET', KEYS[2], field .. '|start')
    if not start then
      redis.call('HSET', KEYS[2], field .. '|start', now, field .. '|last', 0, field .. '|interval', interval, field .. '|skipped', 0, field .. '|at', now)
    else
      start = tonumber(start)
      local last = tonumber(redis.call('HGET', KEYS[2], field .. '|last') or '0')
      local lastAt = tonumber(redis.call('HGET', KEYS[2], field .. '|at') or start)
      if tonumber(redis.call('HGET', KEYS[2], field .. '|interval') or '0') ~= interval then
        -- Re-timed: the next tick is one new interval after the previous one.
        start = lastAt - last * interval
        redis.call('HSET', KEYS[2], field .. '|start', start, field .. '|interval', interval)
      end
      local n = math.floor((now - start) / interval)
      if n > last then
        if n > last + 1 then redis.call('HINCRBY', KEYS[2], field .. '|skipped', n - last - 1) end
        redis.call('HSET', KEYS[2], field .. '|last', n, field .. '|at', now)
        claimed, elapsed = n, now - lastAt
      end
    end
  end
  out[#out + 1] = claimed
  out[#out + 1] = elapsed
end
return out
`,
);

export interface SharedPeriodicDeps extends Pick<PipelineDeps, "fire" | "onPeriodicTick" | "onContextReevaluated"> {
  redis: SessionRedis;
  clock: Clock;
  logger: Logger;
  scanMs: number;
  /** Every open session's key. */
  sessionKeys(): Promise<string[]>;
  periodicHooks(sessionKey: string): readonly ResolvedHook[];
  /** Run `tick` in the session's turn; a true result means the record changed and is written. */
  runTick(sessionKey: string, tick: (s: SessionRecord) => Promise<boolean>): Promise<void>;
  touch(s: SessionRecord): void;
}

export interface SharedPeriodic {
  /** Start this replica's scan loop (idempotent). */
  start(): void;
  stop(): void;
  /** One scan now (tests, and the loop). */
  scan(): Promise<void>;
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

function modifiedContext(result: ChainResult): boolean {
  return result.hook_results.some((h) => h.status === "modify" && h.modified_context === true);
}

export function createSharedPeriodic(deps: SharedPeriodicDeps): SharedPeriodic {
  const { redis, logger } = deps;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running = false;
  let scanning: Promise<void> | undefined;
  /** Ticks this replica is running, by `<key> <field>`: no second claim of a hook until its tick finished. */
  const inFlight = new Set<string>();
  let lastScanError = 0;

  async function scanSession(key: string): Promise<void> {
    const seen = new Set<string>();
    const hooks: { field: string; ref: HookRef; intervalMs: number }[] = [];
    for (const hook of deps.periodicHooks(key)) {
      if (hook.type !== "periodic" || !hook.enabled) continue;
      const field = `${hook.scope}/${hook.name}`;
      if (seen.has(field) || inFlight.has(`${key} ${field}`)) continue;
      seen.add(field);
      // Spec §3.6: clamped to ≥ 1000 ms (model/hook.ts), as in the local scheduler.
      hooks.push({ field, ref: { name: hook.name, scope: hook.scope }, intervalMs: periodicIntervalMs(hook) });
    }
    if (hooks.length === 0) return;
    const part = (name: string) => redis.keys.session(key, name);
    const keys = [part("record"), part("periodic"), ...hooks.map((h) => part(`periodic-lease ${h.field}`))];
    const args: (string | number)[] = [redis.replicaId, PERIODIC_LEASE_MS, ...hooks.flatMap((h) => [h.field, h.intervalMs])];
    const out = ((await redis.script(CLAIM, keys, args)) as unknown[]).map(Number);
    hooks.forEach((hook, i) => {
      const tick = out[2 * i] ?? 0;
      if (tick > 0) fireTick(key, hook, tick, out[2 * i + 1] ?? 0);
    });
  }

  function fireTick(key: string, hook: { field: string; ref: HookRef; intervalMs: number }, tickCount: number, elapsedMs: number): void {
    const flight = `${key} ${hook.field}`;
    inFlight.add(flight);
    deps
      .runTick(key, async (s) => {
        const report = { session_id: s.id, owner: s.owner, hook: hook.ref.name, scope: hook.ref.scope, tick_count: tickCount, elapsed_ms: elapsedMs, interval_ms: hook.intervalMs };
        const previousContext = s.context;
        let result: ChainResult;
        try {
          result = await deps.fire("periodic", {
            session: sessionInfoOf(s), sessionKey: s.key, context: s.context, constitution: s.constitution,
            event: { elapsed_ms: elapsedMs, interval_ms: hook.intervalMs, tick_count: tickCount },
            hooks: [hook.ref],
          });
        } catch (err) {
          logger.warn({ err, session_id: s.id, hook: hook.ref.name }, "periodic chain could not run");
          notify(() => deps.onPeriodicTick?.({ ...report, error: err, context_reevaluated: false }));
          return false;
        }
        // Spec §3.6: modify triggers a context re-evaluation with the modified context.
        const reevaluate = result.status === "completed" && modifiedContext(result);
        if (reevaluate) {
          s.context = frozenJsonCopy("chain result", result.context);
          deps.touch(s);
        }
        notify(() => deps.onPeriodicTick?.({ ...report, result, context_reevaluated: reevaluate }));
        if (reevaluate) {
          notify(() => deps.onContextReevaluated?.({ session_id: s.id, owner: s.owner, hook: hook.ref.name, scope: hook.ref.scope, previous_context: previousContext, context: s.context, result }));
        }
        return reevaluate;
      })
      .catch((err: unknown) => logger.warn({ err, hook: hook.ref.name }, "periodic tick failed"))
      .finally(() => inFlight.delete(flight));
  }

  function notify(call: () => void): void {
    try {
      call();
    } catch (err) {
      logger.warn({ err }, "pipeline listener threw");
    }
  }

  async function scan(): Promise<void> {
    const keys = await deps.sessionKeys();
    for (const key of keys) {
      try {
        await scanSession(key);
      } catch (err) {
        report(err);
      }
    }
  }

  function report(err: unknown): void {
    const at = deps.clock.now();
    // One warning per 10 s while Redis is away: ticks resume by themselves when it is back.
    if (at - lastScanError > 10_000) {
      lastScanError = at;
      logger.warn({ err }, "periodic scan could not reach the shared store; ticks resume when it answers");
    }
  }

  function loop(): void {
    if (!running) return;
    scanning = scan()
      .catch(report)
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
      loop();
    },
    stop() {
      running = false;
      if (timer !== undefined) clearTimeout(timer);
      void scanning;
    },
    scan,
  };
}
