/**
 * Approvals across replicas (issue 18): an `ask_user` raised on replica A is listed, read, decided
 * and waited for on any replica. The rules are the local coordinator's (src/runtime/approvals.ts:
 * limits before anything is created, the first decision stands, durable in the audit log before
 * visible, "allow always" per owner-scoped session, expiry into the default); only where the state
 * lives differs.
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
 * Waiters on any replica wake on the channel; a poll of the approvals they wait for covers a
 * message lost while the subscription reconnected. Each change is one script.
 */
import { randomUUID } from "node:crypto";
import { VcpError } from "../errors.js";
import type { Clock, Logger } from "../observe/events.js";
import { mayReadApproval, type SessionPrincipal } from "../pipeline/access.js";
import type { AuditTrail } from "../runtime/audit-trail.js";
import {
  allowAlwaysKey, approvalAuditFailed, approvalAuditRecord, approvalOptions, assertMayDecide, DEFAULT_APPROVAL_LIMITS, describePrompt, isGranting, MAX_DECISION_LENGTH, withFullPrompt,
  type Approval, type ApprovalAsk, type ApprovalEvent, type ApprovalGetOptions, type ApprovalLimits, type ApprovalQuery, type ApprovalRecordKind,
} from "../runtime/approvals.js";
import { segment, luaScript, type SessionRedis } from "./session-redis.js";

const ALLOW_ALWAYS = "allow always";
const MAX_ALLOW_ALWAYS_PER_SESSION = 256;
/** A decision's audit write may take this long before another replica may decide or expire it. */
const DECIDING_MS = 30_000;

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

interface Item {
  view: Approval;
  pendingKey: string;
  alwaysKey: string;
}

export interface SharedApprovalDeps {
  redis: SessionRedis;
  clock: Clock;
  audit: () => AuditTrail | undefined;
  logger?: Logger;
  limits?: Partial<ApprovalLimits>;
  /** Expiry sweep and waiter poll period; default 500 ms. */
  pollMs?: number;
  /**
   * The Amplifier profile's implicit-session idle TTL (`profiles.amplifier.session_ttl_s`): a session's
   * "allow always" grants are forgotten this long after the last grant or use, so Redis does not keep
   * every session's grants forever. Absent: kept (the local coordinator's behaviour).
   */
  allowAlwaysTtlMs?: number;
}

export type SharedApprovals = ReturnType<typeof createSharedApprovals>;

/** The shared coordinator. `start()` subscribes to the event channel and starts the expiry sweep. */
export function createSharedApprovals(deps: SharedApprovalDeps) {
  const { redis } = deps;
  const limits: ApprovalLimits = { ...DEFAULT_APPROVAL_LIMITS, ...deps.limits };
  const pollMs = deps.pollMs ?? 500;
  const allowAlwaysTtl = deps.allowAlwaysTtlMs !== undefined && deps.allowAlwaysTtlMs > 0 ? Math.ceil(deps.allowAlwaysTtlMs) : "";
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
  const listeners = new Set<(event: ApprovalEvent) => void>();
  const waiters = new Map<string, Array<(view: Approval) => void>>();
  let unsubscribe: (() => Promise<void>) | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;
  let closed = false;
  let lastPending = 0;

  const iso = (ms: number) => new Date(ms).toISOString();
  // SECURITY: session ids are per owner: two owners' equal ids are two sessions (access.ts).
  const sessionSegment = (a: { owner: string | null; profile: string; session: string }) => segment(JSON.stringify([a.owner, a.profile, a.session]));

  function emit(event: ApprovalEvent): void {
    for (const listener of listeners) {
      try {
        listener(event);
      } catch (err) {
        deps.logger?.warn({ err, approval: event.approval.id }, "an approval listener threw");
      }
    }
    if (event.type !== "new") wake(event.approval);
  }

  function wake(view: Approval): void {
    const list = waiters.get(view.id);
    if (list === undefined) return;
    waiters.delete(view.id);
    for (const resolve of list) resolve({ ...view, options: [...view.options] });
  }

  async function load(id: string): Promise<Item | undefined> {
    const raw = await redis.command(`reading approval '${id}'`, ["GET", itemKey(id)]);
    return typeof raw === "string" ? (JSON.parse(raw) as Item) : undefined;
  }

  async function visible(id: string, principal: SessionPrincipal | undefined): Promise<Item> {
    const item = typeof id === "string" && id.length <= 128 ? await load(id) : undefined;
    // SECURITY: another client's approval gets the answer an unknown id gets.
    if (item === undefined || !mayReadApproval(item.view.owner, principal)) throw new VcpError("APPROVAL_NOT_FOUND", `no approval '${id}'`, { approval_id: id });
    return item;
  }

  async function auditRecord(kind: ApprovalRecordKind, view: Approval): Promise<void> {
    await deps.audit()?.writer.append(approvalAuditRecord(kind, view));
  }


  /** Settle a pending approval in one script (which also publishes it); false when something settled it first. */
  async function settle(item: Item, state: "granted" | "denied" | "expired", decision: string, by: string, at: string, token: string): Promise<Approval | undefined> {
    const view: Approval = { ...item.view, state, decision, decided_by: by, decided_at: at };
    const always = state === "granted" && decision.trim().toLowerCase() === ALLOW_ALWAYS ? allowAlwaysKey(view) : "";
    const event: ApprovalEvent = { type: state === "expired" ? "expired" : "decided", approval: view };
    const out = String(await redis.script(SETTLE, [itemKey(view.id), decidingKey(view.id), pendingKey, item.pendingKey, item.alwaysKey, decidedKey, indexKey, clientPendingKey(view.owner), promptKey(view.id)], [
      JSON.stringify({ ...item, view }), view.id, always, limits.retainDecided, itemPrefix, channel, JSON.stringify(event), token, MAX_ALLOW_ALWAYS_PER_SESSION, allowAlwaysTtl,
    ]));
    return out === "OK" ? view : undefined;
  }

  /** Expire approvals whose time ran out (by Redis TIME); the replica whose script wins writes the record. */
  async function sweep(): Promise<void> {
    const due = ((await redis.script(DUE, [pendingKey], [])) as unknown[]).map(String);
    for (const id of due) {
      const item = await load(id);
      if (item === undefined || item.view.state !== "pending") {
        await redis.command("forgetting a settled approval", ["ZREM", pendingKey, id]);
        if (item !== undefined) await redis.command("forgetting a settled approval", ["SREM", clientPendingKey(item.view.owner), id]);
        continue;
      }
      const out = await settle(item, "expired", item.view.default, "timeout", iso(deps.clock.wallNow()), "");
      if (out !== undefined) await auditRecord("approval_decision", out).catch((err: unknown) => deps.logger?.error({ err, approval: id }, "audit: the expiry of an approval could not be written"));
    }
    lastPending = Number(await redis.command("counting pending approvals", ["ZCARD", pendingKey]));
  }

  /** The poll fallback: approvals waited for here that settled while a channel message was missed. */
  async function pollWaiters(): Promise<void> {
    for (const id of [...waiters.keys()]) {
      const item = await load(id);
      if (item !== undefined && item.view.state !== "pending") wake(item.view);
    }
  }

  return {
    limits: Object.freeze({ ...limits }),

    async start(): Promise<void> {
      unsubscribe = await redis.subscribe(channel, (message) => {
        try {
          emit(JSON.parse(message) as ApprovalEvent);
        } catch (err) {
          deps.logger?.warn({ err }, "approval event from the shared store could not be read");
        }
      });
      timer = setInterval(() => {
        Promise.all([sweep(), pollWaiters()]).catch((err: unknown) => deps.logger?.warn({ err }, "approval sweep could not reach the shared store"));
      }, pollMs);
      timer.unref?.();
    },

    async request(ask: ApprovalAsk): Promise<Approval> {
      if (closed) throw new VcpError("SANDBOX_CLOSED", "the runtime is closed; no approval can be asked");
      const s = sessionSegment({ owner: ask.owner, profile: ask.profile, session: ask.session });
      const now = deps.clock.wallNow();
      const timeoutS = Math.min(Number.isFinite(ask.timeoutS) && ask.timeoutS > 0 ? ask.timeoutS : 300, limits.maxTimeoutS);
      const prompt = describePrompt(ask.prompt);
      const view: Approval = {
        id: randomUUID(), session: ask.session, owner: ask.owner, profile: ask.profile, event: ask.event, chain_id: ask.chainId ?? null,
        hook: ask.hook, ...prompt.view, options: approvalOptions(ask.options), default: ask.default,
        timeout_s: timeoutS, created_at: iso(now), expires_at: iso(now + timeoutS * 1000), state: "pending",
      };
      const item: Item = { view, pendingKey: redis.keys.custom("approvals-pending-of", s), alwaysKey: redis.keys.custom("approvals-always", s) };
      const granted: Approval = { ...view, state: "granted", decision: ALLOW_ALWAYS, decided_by: "allow_always", decided_at: view.created_at };
      // One script: the allow-always cache, the three limits (before anything is created) and the writes.
      const out = String(await redis.script(REQUEST, [item.alwaysKey, item.pendingKey, pendingKey, indexKey, itemKey(view.id), decidedKey, clientPendingKey(ask.owner), promptKey(view.id)], [
        allowAlwaysKey(view), JSON.stringify(item), JSON.stringify({ ...item, view: granted }), limits.maxPendingPerSession, limits.maxPending,
        now + timeoutS * 1000, now, view.id, limits.retainDecided, itemPrefix,
        // SECURITY: one client's asks cannot take the whole deployment's pool from the others (counted on every replica).
        limits.maxPendingPerClient, ask.owner !== null ? "1" : "", allowAlwaysTtl,
        // The whole prompt outlives its approval's timeout by the sweep's slack at most (settling deletes it).
        prompt.full ?? "", timeoutS * 1000 + DECIDING_MS + 60_000,
      ]));
      if (out.startsWith("LIMIT_SESSION:")) {
        const n = Number(out.slice("LIMIT_SESSION:".length));
        throw new VcpError("APPROVAL_LIMIT", `session '${ask.session}' already has ${n} pending approvals (approvals.max_pending_per_session ${limits.maxPendingPerSession}); decide or let them expire first`, { session: ask.session, limit: limits.maxPendingPerSession, scope: "session" });
      }
      if (out.startsWith("LIMIT_CLIENT:")) {
        const n = Number(out.slice("LIMIT_CLIENT:".length));
        throw new VcpError("APPROVAL_LIMIT", `principal '${ask.owner}' already has ${n} pending approvals (approvals.max_pending_per_client ${limits.maxPendingPerClient}); decide or let them expire first`, { owner: ask.owner, limit: limits.maxPendingPerClient, scope: "client" });
      }
      if (out.startsWith("LIMIT:")) {
        const n = Number(out.slice("LIMIT:".length));
        throw new VcpError("APPROVAL_LIMIT", `the deployment already has ${n} pending approvals (approvals.max_pending ${limits.maxPending})`, { limit: limits.maxPending, scope: "runtime" });
      }
      const made = out === "CACHED" ? granted : view;
      try {
        await auditRecord("approval_request", made);
      } catch (err) {
        // Not recorded ⇒ not asked: nothing half-created stays behind.
        if (out === "PENDING") await redis.script(UNDO_REQUEST, [itemKey(view.id), pendingKey, item.pendingKey, indexKey, clientPendingKey(ask.owner), promptKey(view.id)], [view.id]).catch(() => undefined);
        throw approvalAuditFailed(err, view.id);
      }
      await redis.command("announcing an approval", ["PUBLISH", channel, JSON.stringify({ type: "new", approval: made } satisfies ApprovalEvent)]);
      if (out === "CACHED") await redis.command("announcing an approval", ["PUBLISH", channel, JSON.stringify({ type: "decided", approval: made } satisfies ApprovalEvent)]);
      return { ...made, options: [...made.options] };
    },

    async list(query: ApprovalQuery = {}): Promise<Approval[]> {
      const ids = ((await redis.command("listing approvals", ["ZRANGE", indexKey, 0, -1])) as unknown[]).map(String);
      const out: Approval[] = [];
      for (let i = 0; i < ids.length; i += 256) {
        const chunk = ids.slice(i, i + 256);
        const raws = (await redis.command("listing approvals", ["MGET", ...chunk.map(itemKey)])) as unknown[];
        for (const raw of raws) {
          if (typeof raw !== "string") continue;
          const view = (JSON.parse(raw) as Item).view;
          if (!mayReadApproval(view.owner, query.principal)) continue;
          if (query.session !== undefined && view.session !== query.session) continue;
          if (query.state !== undefined && view.state !== query.state) continue;
          out.push(view);
        }
      }
      return out;
    },

    async get(id: string, options: ApprovalGetOptions = {}): Promise<Approval> {
      const { view } = await visible(id, options.principal);
      if (options.full !== true || !view.prompt_truncated || view.state !== "pending") return view;
      const full = await redis.command(`reading the prompt of approval '${id}'`, ["GET", promptKey(id)]);
      return withFullPrompt(view, typeof full === "string" ? full : undefined);
    },

    async decide(id: string, decision: string, options: { principal?: SessionPrincipal } = {}): Promise<Approval> {
      const item = await visible(id, options.principal);
      assertMayDecide(item.view, options.principal);
      if (typeof decision !== "string" || decision.trim() === "" || decision.length > MAX_DECISION_LENGTH) {
        throw new VcpError("INVALID_INPUT", `decision: must be a non-empty string of at most ${MAX_DECISION_LENGTH} characters (allow, allow once, allow always grant; anything else denies)`, { field: "decision", rule: "string" });
      }
      const token = randomUUID();
      const begun = String(await redis.script(BEGIN_DECIDE, [itemKey(id), decidingKey(id)], [token, DECIDING_MS]));
      if (begun === "BUSY") throw new VcpError("APPROVAL_DECIDED", `approval '${id}' is being decided by another request; the first decision stands`, { approval_id: id, state: "pending", deciding: true });
      if (begun !== "OK") {
        const v = (await load(id))?.view ?? item.view;
        throw new VcpError("APPROVAL_DECIDED", `approval '${id}' is already ${v.state}${v.decided_by === "timeout" ? ` (it expired at ${v.expires_at}; the default '${v.default}' applied)` : ` ('${v.decision ?? ""}' by ${v.decided_by ?? "?"})`}; the first decision stands`, { approval_id: id, state: v.state, decision: v.decision, decided_by: v.decided_by });
      }
      const state = isGranting(decision) ? "granted" : "denied";
      const by = options.principal?.id ?? "embedding-application";
      const at = iso(deps.clock.wallNow());
      // Durable before visible: a decision the log could not take is not made.
      try {
        await auditRecord("approval_decision", { ...item.view, state, decision, decided_by: by, decided_at: at });
      } catch (err) {
        await redis.script(END_DECIDE, [decidingKey(id)], [token]).catch(() => undefined);
        throw approvalAuditFailed(err, id);
      }
      const settled = await settle(item, state, decision, by, at, token);
      if (settled === undefined) {
        const v = (await load(id))?.view ?? item.view;
        return v;
      }
      return settled;
    },

    async wait(id: string, options: { principal?: SessionPrincipal } = {}): Promise<Approval> {
      const item = await visible(id, options.principal);
      if (item.view.state !== "pending") return item.view;
      return new Promise((resolve) => {
        const list = waiters.get(id) ?? [];
        list.push(resolve);
        waiters.set(id, list);
      });
    },

    on(event: "approval", listener: (event: ApprovalEvent) => void): () => void {
      if (event !== "approval") throw new VcpError("INVALID_INPUT", `unknown approvals event '${String(event)}' (only "approval")`, { field: "event" });
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    stats(): { pending: number; retained: number } {
      return { pending: lastPending, retained: 0 };
    },

    /**
     * This replica stops serving approvals. They stay pending in the store for the other replicas
     * (shared approvals are the deployment's, not this process's); local waiters answer with the
     * pending approval, as a closing server does.
     */
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      if (timer !== undefined) clearInterval(timer);
      for (const id of [...waiters.keys()]) {
        const item = await load(id).catch(() => undefined);
        if (item !== undefined) wake(item.view);
      }
      await unsubscribe?.().catch(() => undefined);
      listeners.clear();
    },
  };
}
