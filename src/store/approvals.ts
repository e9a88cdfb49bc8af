/**
 * Approvals across replicas (issue 18): the Redis adapter of the approval store port
 * (src/pipeline/approvals.ts {@link ApprovalStore}), so an `ask_user` raised on replica A is listed,
 * read, decided and waited for on any replica. The rules (limits before anything is created, the
 * first decision stands, durable in the audit log before visible, "allow always" per owner-scoped
 * session, expiry into the default) are the coordinator's, once; each atomic step of the port is one
 * script here.
 *
 * ```
 *  <prefix>:approval:<id>            JSON { view, pendingKey, alwaysKey }
 *  <prefix>:approval-prompt:<id>     the whole prompt while pending, when `view.prompt` is clipped
 *                                    (deleted when settled; expires after the timeout in any case)
 *  <prefix>:approvals                zset id → created (listing; decided ones trimmed to retainDecided)
 *  <prefix>:approvals-pending        zset id → expires_at ms (global limit, the expiry sweep)
 *  <prefix>:approvals-pending-of:<s> set of a session's pending ids (per-session limit)
 *  <prefix>:approvals-pending-of-client:<o> set of a client principal's pending ids, over all its
 *                                    sessions (per-client limit; the embedding application's are not counted)
 *  <prefix>:approvals-always:<s>     set of allowAlwaysKey()s (hook + SHA-256 of the full prompt) granted
 *                                    "allow always" in the session; expires
 *                                    after the implicit session's idle TTL without a grant or a use
 *  <prefix>:approvals-decided        list of decided ids, newest first (retention)
 *  <prefix>:approval-deciding:<id>   a decision being written to the audit log (first one wins)
 *  channel <prefix>:chan:approvals   every new / decided / expired approval, from every replica
 * ```
 * Waiters on any replica wake on the channel; the coordinator's sweep (`sweep.due`, and a poll of
 * the approvals it waits for) covers a message lost while the subscription reconnected.
 */
import type { Logger } from "../observe/events.js";
import { approvalSessionKey, type Approval, type ApprovalEvent, type ApprovalStore } from "../pipeline/approvals.js";
import { segment, luaScript, type SessionRedis } from "./session-redis.js";

/** How long the whole prompt may outlive its approval's timeout (settling deletes it; the sweep's slack). */
const PROMPT_SLACK_MS = 90_000;

const TRIM = `
local function trim(decidedKey, indexKey, prefix, retain)
  while redis.call('LLEN', decidedKey) > retain do
    local old = redis.call('RPOP', decidedKey)
    redis.call('DEL', prefix .. old)
    redis.call('ZREM', indexKey, old)
  end
end
`;

const REQUEST = luaScript(
  "approval-request",
  "recording an approval",
  // KEYS: always, pending-of, pending, index, item, decided, pending-of-client, full prompt. ARGV: cache key,
  // pending JSON, granted JSON, max per session, max pending, expires ms, created ms, id, retain, item key
  // prefix, max per client, '1' when the owner is a client principal (counted) or '', allow-always TTL ms
  // or '', the whole prompt when clipped or '', its TTL ms.
  // The order of the checks is the local coordinator's: session, client, runtime.
  `${TRIM}
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then
  if ARGV[13] ~= '' then redis.call('PEXPIRE', KEYS[1], ARGV[13]) end
  redis.call('SET', KEYS[5], ARGV[3])
  redis.call('ZADD', KEYS[4], ARGV[7], ARGV[8])
  redis.call('LPUSH', KEYS[6], ARGV[8])
  trim(KEYS[6], KEYS[4], ARGV[10], tonumber(ARGV[9]))
  return 'CACHED'
end
local inSession = redis.call('SCARD', KEYS[2])
if inSession >= tonumber(ARGV[4]) then return 'LIMIT_SESSION:' .. inSession end
if ARGV[12] == '1' then
  local ofClient = redis.call('SCARD', KEYS[7])
  if ofClient >= tonumber(ARGV[11]) then return 'LIMIT_CLIENT:' .. ofClient end
end
local total = redis.call('ZCARD', KEYS[3])
if total >= tonumber(ARGV[5]) then return 'LIMIT:' .. total end
redis.call('SET', KEYS[5], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[6], ARGV[8])
redis.call('SADD', KEYS[2], ARGV[8])
if ARGV[12] == '1' then redis.call('SADD', KEYS[7], ARGV[8]) end
if ARGV[14] ~= '' then redis.call('SET', KEYS[8], ARGV[14], 'PX', ARGV[15]) end
redis.call('ZADD', KEYS[4], ARGV[7], ARGV[8])
return 'PENDING'
`,
);

const UNDO_REQUEST = luaScript(
  "approval-undo-request",
  "withdrawing an unrecorded approval",
  // KEYS: item, pending, pending-of, index, pending-of-client, full prompt. ARGV: id.
  `
redis.call('DEL', KEYS[1], KEYS[6])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('SREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('SREM', KEYS[5], ARGV[1])
return 1
`,
);

const BEGIN_DECIDE = luaScript(
  "approval-begin-decide",
  "starting a decision",
  // KEYS: item, deciding. ARGV: token, ttl ms. → 'OK', 'BUSY' (another decision is being written), 'SETTLED', 'GONE'.
  `
local item = redis.call('GET', KEYS[1])
if not item then return 'GONE' end
if cjson.decode(item).view.state ~= 'pending' then return 'SETTLED' end
if not redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return 'BUSY' end
return 'OK'
`,
);

const SETTLE = luaScript(
  "approval-settle",
  "settling an approval",
  // KEYS: item, deciding, pending, pending-of, always, decided, index, pending-of-client, full prompt. ARGV: settled JSON, id,
  // allow-always key or '', retain, item key prefix, channel, event JSON, deciding token or '', max always,
  // allow-always TTL ms or ''.
  // → 'OK' or 'SETTLED' (it was settled, or another decision is being written, first).
  `${TRIM}
local item = redis.call('GET', KEYS[1])
if not item or cjson.decode(item).view.state ~= 'pending' then return 'SETTLED' end
local deciding = redis.call('GET', KEYS[2])
if deciding and deciding ~= ARGV[8] then return 'SETTLED' end
if (not deciding) and ARGV[8] ~= '' then return 'SETTLED' end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2], KEYS[9])
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('SREM', KEYS[4], ARGV[2])
redis.call('SREM', KEYS[8], ARGV[2])
if ARGV[3] ~= '' and redis.call('SCARD', KEYS[5]) < tonumber(ARGV[9]) then
  redis.call('SADD', KEYS[5], ARGV[3])
  if ARGV[10] ~= '' then redis.call('PEXPIRE', KEYS[5], ARGV[10]) end
end
redis.call('LPUSH', KEYS[6], ARGV[2])
trim(KEYS[6], KEYS[7], ARGV[5], tonumber(ARGV[4]))
redis.call('PUBLISH', ARGV[6], ARGV[7])
return 'OK'
`,
);

const END_DECIDE = luaScript(
  "approval-end-decide",
  "giving back an approval whose decision failed",
  // KEYS: deciding. ARGV: token. A decision whose audit write failed gives the approval back.
  `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`,
);

const DUE = luaScript(
  "approval-due",
  "finding expired approvals",
  // KEYS: pending. → ids whose expiry (by Redis TIME) has passed, at most 100.
  `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 100)
`,
);


/** What the store keeps per approval: its view and the keys of its session's sets. */
interface Item {
  view: Approval;
  pendingKey: string;
  alwaysKey: string;
}

export interface RedisApprovalStoreOptions {
  /** Expiry sweep and waiter poll period; default 500 ms. */
  pollMs?: number;
  /**
   * The Amplifier profile's implicit-session idle TTL (`profiles.amplifier.session_ttl_s`): a session's
   * "allow always" grants are forgotten this long after the last grant or use, so Redis does not keep
   * every session's grants forever. Absent: kept (as in a local store).
   */
  allowAlwaysTtlMs?: number;
  logger?: Logger;
}

/**
 * @example
 * ```ts
 * const approvals = createApprovals({ store: createRedisApprovalStore(redis, { pollMs: 500 }), clock, audit });
 * await approvals.start();
 * ```
 */
export function createRedisApprovalStore(redis: SessionRedis, options: RedisApprovalStoreOptions = {}): ApprovalStore {
  const allowAlwaysTtl = options.allowAlwaysTtlMs !== undefined && options.allowAlwaysTtlMs > 0 ? Math.ceil(options.allowAlwaysTtlMs) : "";
  const itemKey = (id: string) => redis.keys.custom("approval", id);
  // The retention trim (TRIM) deletes items by id: `<prefix>:approval:` + id (ids are UUIDs, nothing to escape).
  const itemPrefix = `${redis.keys.prefix}:approval:`;
  /**
   * A client principal's pending ids over all its sessions (the per-client limit). The embedding
   * application's approvals (owner null) are not counted; their key is never written.
   */
  const clientPendingKey = (owner: string | null) => redis.keys.custom("approvals-pending-of-client", owner ?? "");
  const decidingKey = (id: string) => redis.keys.custom("approval-deciding", id);
  const promptKey = (id: string) => redis.keys.custom("approval-prompt", id);
  const indexKey = redis.keys.custom("approvals");
  const pendingKey = redis.keys.custom("approvals-pending");
  const decidedKey = redis.keys.custom("approvals-decided");
  const channel = redis.keys.channel("approvals");

  function itemOf(view: Approval): Item {
    const s = segment(approvalSessionKey(view));
    return { view, pendingKey: redis.keys.custom("approvals-pending-of", s), alwaysKey: redis.keys.custom("approvals-always", s) };
  }

  async function load(id: string): Promise<Approval | undefined> {
    const raw = await redis.command(`reading approval '${id}'`, ["GET", itemKey(id)]);
    return typeof raw === "string" ? (JSON.parse(raw) as Item).view : undefined;
  }

  /** Approvals whose time ran out (by Redis TIME), at most 100 a sweep; members already settled are forgotten on the way. */
  async function due(): Promise<Approval[]> {
    const ids = ((await redis.script(DUE, [pendingKey], [])) as unknown[]).map(String);
    const out: Approval[] = [];
    for (const id of ids) {
      const view = await load(id);
      if (view !== undefined && view.state === "pending") {
        out.push(view);
        continue;
      }
      await redis.command("forgetting a settled approval", ["ZREM", pendingKey, id]);
      if (view !== undefined) await redis.command("forgetting a settled approval", ["SREM", clientPendingKey(view.owner), id]);
    }
    return out;
  }

  return {
    holder: "deployment",
    sweep: { everyMs: options.pollMs ?? 500, due },

    async insert({ pending: view, granted, alwaysKey, fullPrompt, limits }) {
      const item = itemOf(view);
      const now = Date.parse(view.created_at);
      // One script: the allow-always cache, the three limits (before anything is created) and the writes.
      const out = String(await redis.script(REQUEST, [item.alwaysKey, item.pendingKey, pendingKey, indexKey, itemKey(view.id), decidedKey, clientPendingKey(view.owner), promptKey(view.id)], [
        alwaysKey, JSON.stringify(item), JSON.stringify({ ...item, view: granted }), limits.maxPendingPerSession, limits.maxPending,
        Date.parse(view.expires_at), now, view.id, limits.retainDecided, itemPrefix,
        // SECURITY: one client's asks cannot take the whole deployment's pool from the others (counted on every replica).
        limits.maxPendingPerClient, view.owner !== null ? "1" : "", allowAlwaysTtl,
        fullPrompt ?? "", view.timeout_s * 1000 + PROMPT_SLACK_MS,
      ]));
      if (out === "CACHED") return { kind: "cached" };
      if (out === "PENDING") return { kind: "pending" };
      const [reason, n] = out.split(":");
      return { kind: "limit", scope: reason === "LIMIT_SESSION" ? "session" : reason === "LIMIT_CLIENT" ? "client" : "runtime", count: Number(n) };
    },

    async withdraw(view) {
      const item = itemOf(view);
      await redis.script(UNDO_REQUEST, [itemKey(view.id), pendingKey, item.pendingKey, indexKey, clientPendingKey(view.owner), promptKey(view.id)], [view.id]);
    },

    load,

    async list() {
      const ids = ((await redis.command("listing approvals", ["ZRANGE", indexKey, 0, -1])) as unknown[]).map(String);
      const out: Approval[] = [];
      for (let i = 0; i < ids.length; i += 256) {
        const chunk = ids.slice(i, i + 256);
        const raws = (await redis.command("listing approvals", ["MGET", ...chunk.map(itemKey)])) as unknown[];
        for (const raw of raws) if (typeof raw === "string") out.push((JSON.parse(raw) as Item).view);
      }
      return out;
    },

    async fullPrompt(id) {
      const full = await redis.command(`reading the prompt of approval '${id}'`, ["GET", promptKey(id)]);
      return typeof full === "string" ? full : undefined;
    },

    async claim(id, token, ttlMs) {
      const begun = String(await redis.script(BEGIN_DECIDE, [itemKey(id), decidingKey(id)], [token, ttlMs]));
      return begun === "OK" ? "ok" : begun === "BUSY" ? "busy" : begun === "SETTLED" ? "settled" : "gone";
    },

    async release(id, token) {
      await redis.script(END_DECIDE, [decidingKey(id)], [token]);
    },

    async settle(settled, { token, always, retainDecided, maxAlways }) {
      // `force` (a holder's shutdown) never reaches a shared store: its approvals outlive a replica.
      const item = itemOf(settled);
      const event: ApprovalEvent = { type: settled.state === "expired" ? "expired" : "decided", approval: settled };
      const out = String(await redis.script(SETTLE, [itemKey(settled.id), decidingKey(settled.id), pendingKey, item.pendingKey, item.alwaysKey, decidedKey, indexKey, clientPendingKey(settled.owner), promptKey(settled.id)], [
        JSON.stringify(item), settled.id, always ?? "", retainDecided, itemPrefix, channel, JSON.stringify(event), token ?? "", maxAlways, allowAlwaysTtl,
      ]));
      return out === "OK";
    },

    async publish(event) {
      await redis.command("announcing an approval", ["PUBLISH", channel, JSON.stringify(event)]);
    },

    async subscribe(listener) {
      return redis.subscribe(channel, (message) => {
        let event: ApprovalEvent;
        try {
          event = JSON.parse(message) as ApprovalEvent;
        } catch (err) {
          options.logger?.warn({ err }, "approval event from the shared store could not be read");
          return;
        }
        listener(event);
      });
    },

    async stats() {
      const [pending, retained] = await Promise.all([
        redis.command("counting pending approvals", ["ZCARD", pendingKey]),
        redis.command("counting approvals", ["ZCARD", indexKey]),
      ]);
      return { pending: Number(pending), retained: Number(retained) };
    },
  };
}
