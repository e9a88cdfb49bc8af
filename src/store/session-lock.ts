/**
 * The per-session lock across replicas (spec §5.2 "never interrupts", §5.3): one holder at a time
 * for each session, whichever replica it runs on.
 *
 * ```
 *  acquire: Redis TIME ≤ not after? ─ no ─► nothing (LATE)                                (one script)
 *             └─ SET lock <random token> NX PX ttl ─ ok ─► INCR fence ─► read the record
 *                  └─ held by another ─► wait (poll with backoff) until the wait deadline ─► SESSION_BUSY
 *  held:    every ttl/3: PEXPIRE if GET lock == token (renew)                              (one script)
 *  commit:  GET lock == token AND stored fence ≤ my fence ─► write record ─► DEL lock     (one script)
 *                 └─ otherwise ─► SESSION_LOCK_LOST: nothing written
 *  release: DEL lock if GET lock == token (compare-and-delete)                             (one script)
 * ```
 *
 * The lock expires if its holder dies (no renewal), so a session is never stuck behind a killed
 * replica for longer than `ttlMs`. A holder that stalled past its ttl (a long GC pause, a partition)
 * cannot write afterwards: every write is one script that checks the token is still its own and that
 * no later holder (a higher fence) has written — fencing, not just timing.
 *
 * Every script that takes or writes carries "not after" in Redis time: the moment the replica stops
 * waiting for its answer (command timeout). One that reaches Redis later — queued behind a stalled
 * Redis or a slow link while the replica answered 503 — does nothing: no lock held by nobody for a
 * ttl, no write after a 503.
 */
import { randomBytes } from "node:crypto";
import { VcpError } from "../errors.js";
import { luaScript, type SessionRedis } from "./session-redis.js";

export const ACQUIRE = luaScript(
  "session-acquire",
  "taking the session lock",
  // KEYS: lock, fence, record, session hooks, session switches. ARGV: token, ttl ms, not after (Redis TIME ms).
  // → { 'LATE', now } past the deadline (nothing done); { 'BUSY', now } held by another;
  //   { 'GONE', now } no such session (nothing held); { 'OK', now, fence, record JSON, {switches flat}, hook refs… }.
  `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- The caller stops waiting at its command deadline: a lock taken after it would be held by nobody.
if now > tonumber(ARGV[3]) then return {'LATE', now} end
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {'BUSY', now} end
local fence = redis.call('INCR', KEYS[2])
local rec = redis.call('HGET', KEYS[3], 'rec')
if not rec then
  redis.call('DEL', KEYS[1])
  return {'GONE', now}
end
local out = {'OK', now, fence, rec, redis.call('HGETALL', KEYS[5])}
for _, ref in ipairs(redis.call('SMEMBERS', KEYS[4])) do out[#out + 1] = ref end
return out
`,
);

export const RENEW = luaScript(
  "session-renew",
  "renewing the session lock",
  // KEYS: lock. ARGV: token, ttl ms. → 1 renewed, 0 lost.
  `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`,
);

export const RELEASE = luaScript(
  "session-release",
  "releasing the session lock",
  // KEYS: lock. ARGV: token. Compare-and-delete: never another holder's lock.
  `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`,
);

export const COMMIT = luaScript(
  "session-commit",
  "writing the session",
  // KEYS: lock, record. ARGV: token, fence, record JSON, release (1/0), not after (Redis TIME ms).
  // → 'OK', or 'LOST' (the lock is not ours any more), 'STALE' (a later holder wrote), 'GONE' (closed),
  // 'LATE' (it reached Redis after the writer stopped waiting for the answer).
  `
local t = redis.call('TIME')
if tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) > tonumber(ARGV[5]) then return 'LATE' end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'LOST' end
local stored = tonumber(redis.call('HGET', KEYS[2], 'fence') or '-1')
if stored == -1 and redis.call('EXISTS', KEYS[2]) == 0 then return 'GONE' end
if stored > tonumber(ARGV[2]) then return 'STALE' end
redis.call('HSET', KEYS[2], 'rec', ARGV[3], 'fence', ARGV[2])
if ARGV[4] == '1' then redis.call('DEL', KEYS[1]) end
return 'OK'
`,
);

/** One held lock: its token and fence, and the renewal that keeps it while work runs. */
export interface HeldLock {
  readonly token: string;
  /**
   * Redis TIME at the acquire, against this process's monotonic clock then: a later write can say
   * "not after <Redis time>" without trusting the replica's wall clock.
   */
  readonly acquiredAt: { redisMs: number; localMs: number };
  readonly fence: number;
  /** False once a renewal found the lock taken or expired: the holder must not write. */
  readonly valid: boolean;
  /** Stop renewing (before the commit or release script). */
  stopRenewing(): void;
}

export interface LockTiming {
  /** Lock time to live; renewed every ttl/3 while held. */
  ttlMs: number;
  /** How long an operation waits for another holder before SESSION_BUSY. */
  waitMs: number;
}

export function newToken(): string {
  // SECURITY: unguessable, so no other replica or client can release or renew a lock it does not hold.
  return randomBytes(16).toString("hex");
}

/**
 * Acquire `lockKey`, reading the record in the same script. Resolves with the lock and the raw record
 * JSON (null: no such session; the lock is already released then).
 */
export async function acquire(
  redis: SessionRedis,
  keys: { lock: string; fence: string; record: string; hooks: string; switches: string },
  timing: LockTiming,
  sessionId: string,
  onLost: () => void,
): Promise<{ lock: HeldLock; record: string | null; hooks: string[]; switches: unknown }> {
  const token = newToken();
  const giveUpAt = Date.now() + timing.waitMs;
  let backoff = 5;
  for (;;) {
    const sentAt = performance.now();
    const out = (await redis.script(ACQUIRE, [keys.lock, keys.fence, keys.record, keys.hooks, keys.switches], [token, timing.ttlMs, await commandDeadline(redis, sentAt)])) as unknown[];
    const receivedAt = performance.now();
    const redisMs = Number(out[1]);
    redis.clock.observe(redisMs, sentAt, receivedAt);
    const outcome = String(out[0]);
    if (outcome === "OK") {
      const fence = Number(out[2]);
      const acquiredAt = { redisMs, localMs: receivedAt };
      return { lock: renewing(redis, keys.lock, token, fence, acquiredAt, timing.ttlMs, onLost), record: String(out[3]), switches: out[4], hooks: out.slice(5).map(String) };
    }
    if (outcome === "GONE") return { lock: inert(token, 0, { redisMs, localMs: receivedAt }), record: null, hooks: [], switches: [] };
    // BUSY: another holder. LATE, with the answer in hand: Redis ran it later than this replica's
    // estimate allowed (the answer corrected the estimate); nothing was taken. Either way, try again.
    if (Date.now() >= giveUpAt) {
      throw new VcpError("SESSION_BUSY", `session '${sessionId}' is held by another operation (on this or another replica) for longer than ${timing.waitMs} ms; retry`, { session_id: sessionId, wait_ms: timing.waitMs });
    }
    await new Promise((resolve) => setTimeout(resolve, backoff).unref?.());
    backoff = Math.min(backoff * 2, 50);
  }
}

function inert(token: string, fence: number, acquiredAt: HeldLock["acquiredAt"]): HeldLock {
  return { token, fence, acquiredAt, valid: false, stopRenewing: () => undefined };
}

function renewing(redis: SessionRedis, lockKey: string, token: string, fence: number, acquiredAt: HeldLock["acquiredAt"], ttlMs: number, onLost: () => void): HeldLock {
  let valid = true;
  let stopped = false;
  const timer = setInterval(() => {
    redis.script(RENEW, [lockKey], [token, ttlMs]).then(
      (renewed) => {
        if (!stopped && Number(renewed) !== 1) {
          valid = false;
          onLost();
        }
      },
      // A renewal Redis did not answer: the lock may still be ours; the commit's fence check decides.
      () => undefined,
    );
  }, Math.max(50, Math.floor(ttlMs / 3)));
  timer.unref?.();
  return {
    token,
    fence,
    acquiredAt,
    get valid() {
      return valid;
    },
    stopRenewing() {
      stopped = true;
      clearInterval(timer);
    },
  };
}

export async function release(redis: SessionRedis, lockKey: string, lock: HeldLock): Promise<void> {
  lock.stopRenewing();
  await redis.script(RELEASE, [lockKey], [lock.token]);
}

/** Margin under the command deadline: Redis refuses a write a little before this replica stops waiting. */
const LATE_MARGIN_MS = 100;

/**
 * "Not after", in Redis time, for a command sent at `sentAt` (performance.now()): the moment this
 * replica stops waiting for its answer (its command timeout), by the lower bound of Redis's clock
 * (redis-clock.ts, never later than the truth), less a margin. Read from Redis first if this replica
 * has not learnt its clock yet (once per process, normally done at connection).
 */
export async function commandDeadline(redis: SessionRedis, sentAt = performance.now()): Promise<number> {
  let now = redis.clock.lowerBound(sentAt);
  if (now === undefined) {
    await redis.serverTimeMs("reading the store's clock");
    now = redis.clock.lowerBound(sentAt)!;
  }
  return now + redis.commandTimeoutMs - LATE_MARGIN_MS;
}

/**
 * "Not after", in Redis time, for a write sent now under `lock`: the acquire's Redis TIME plus the
 * time elapsed here (this process's monotonic clock, so no wall-clock skew enters) plus the command
 * deadline, less a margin. A script given it refuses to run later: past it this replica has stopped
 * waiting and answered STORE_UNAVAILABLE.
 */
export function writeDeadline(redis: SessionRedis, lock: HeldLock): number {
  return Math.floor(lock.acquiredAt.redisMs + (performance.now() - lock.acquiredAt.localMs) + redis.commandTimeoutMs - LATE_MARGIN_MS);
}

/** A write Redis refused because it arrived after its deadline: nothing was written. */
export function lateWrite(sessionId: string, operation: string): VcpError {
  return new VcpError("STORE_UNAVAILABLE", `${operation} '${sessionId}': the shared store (Redis) took longer than its deadline; nothing was written, retry`, { operation, reason: "timeout" });
}

/**
 * Write the record if the lock is still ours and no later holder wrote; release in the same script.
 * The write carries "not after" in Redis time (the acquire's Redis TIME plus the time elapsed here,
 * plus the command deadline): a write that reaches Redis after this replica gave up waiting for it
 * (and answered STORE_UNAVAILABLE) is refused, so a 503 means the session was not written.
 */
export async function commit(redis: SessionRedis, keys: { lock: string; record: string }, lock: HeldLock, recordJson: string, sessionId: string): Promise<void> {
  lock.stopRenewing();
  const out = String(await redis.script(COMMIT, [keys.lock, keys.record], [lock.token, lock.fence, recordJson, 1, writeDeadline(redis, lock)]));
  if (out === "OK") return;
  if (out === "LATE") throw lateWrite(sessionId, "writing the session");
  if (out === "GONE") throw new VcpError("SESSION_NOT_FOUND", `session '${sessionId}' is not open`, { session_id: sessionId });
  // SECURITY: fencing — a holder whose lock expired (stalled, partitioned) writes nothing.
  throw new VcpError("SESSION_LOCK_LOST", `session '${sessionId}': this replica's lock on it expired before the operation finished (${out === "STALE" ? "a later holder wrote first" : "the lock is gone"}); nothing was written, retry`, { session_id: sessionId, reason: out.toLowerCase() });
}
