/**
 * Approvals (PROFILES §3.4 "Coordinator", §8.9): an Amplifier `ask_user` answer becomes a pending
 * approval that an operator or an `approver` of the session's owner decides, or that expires into the
 * hook's `approval_default`. Host side only: guests never see or decide an approval.
 *
 * ```
 *  fireProfile answer ── action ask_user ──► allow-always cache (owner, profile, session; hook + sha256 of the full prompt)
 *       │                                      hit ─► granted at once (decided_by "allow_always"), audited
 *       │                                      miss ─► limits (per session, global) ─► pending ─► audited
 *       ▼                                                                     │
 *  native.approval += {id, expires_at, state}        decide(id, decision) ◄───┤ approver / operator
 *                                                    timeout (capped) ◄───────┘ ⇒ state expired, decision = default
 *  every change ─► "approval" listeners (the SSE stream) ─► waiters (?wait_approval=1) ─► audit record
 * ```
 *
 * Who sees and decides is src/pipeline/access.ts (`mayReadApproval`, `mayDecideApproval`): a client
 * sees the approvals of sessions it owns but never decides one (its agent asked; it must not answer);
 * another client's approval is APPROVAL_NOT_FOUND, exactly like a missing one; an `approver` sees and
 * decides those of the clients it approves for. Decided approvals are kept (bounded) so a late reader
 * can see what was decided.
 *
 * The prompt is shown clipped (4,096 characters) but never judged clipped: "allow always" remembers
 * the SHA-256 of the whole prompt, and while an approval is pending its full text (up to 65,536
 * characters) is one `get(id, { full: true })` away, so an approver can read everything it allows.
 */
import { createHash, randomUUID } from "node:crypto";
import { VcpError } from "../errors.js";
import type { Clock, Logger } from "../observe/events.js";
import { mayDecideApproval, mayReadApproval, type SessionPrincipal } from "../pipeline/access.js";
import type { AuditRecordInput } from "../audit/index.js";
import type { AuditTrail } from "./audit-trail.js";
import type { ProfileFireInput, ProfileFireResult, ProfileFirer } from "./fire-profile.js";

export type ApprovalState = "pending" | "granted" | "denied" | "expired";

/** One approval as every API shows it (PROFILES §8.9), plus where it came from. */
export interface Approval {
  id: string;
  /** The session id as its owner sent it (`data.session_id`); `""` for an event without one. */
  session: string;
  /** The principal that owns the session (`null`: the embedding application). */
  owner: string | null;
  profile: string;
  event: string;
  chain_id: string | null;
  hook: string;
  /** The hook's prompt, clipped to 4,096 characters (with `…`); the full text: `get(id, { full: true })`. */
  prompt: string;
  /** Hex SHA-256 of the full prompt (UTF-8): what "allow always" remembers. */
  prompt_sha256: string;
  /** Characters (UTF-16 units) of the full prompt. */
  prompt_chars: number;
  /** `prompt` is not the whole prompt. */
  prompt_truncated: boolean;
  options: string[];
  default: "allow" | "deny";
  /** Seconds the approval waits, after the cap (`approvals.max_timeout_s`). */
  timeout_s: number;
  created_at: string;
  expires_at: string;
  state: ApprovalState;
  /** The decision text as given (`"allow always"`), or the default when it expired. */
  decision?: string;
  /** Principal id that decided; `"timeout"` when it expired; `"allow_always"` when the session's cache granted it. */
  decided_by?: string;
  decided_at?: string;
}

/** What the `approval` listeners receive: a new approval, a decision, or an expiry. */
export interface ApprovalEvent {
  type: "new" | "decided" | "expired";
  approval: Approval;
}

/** Bounds of the coordinator (vcp.yaml `approvals:`). Every one applies before an approval is created. */
export interface ApprovalLimits {
  /** Pending approvals one session may have; one more is APPROVAL_LIMIT. Default 64. */
  maxPendingPerSession: number;
  /** Pending approvals in the whole runtime. Default 4096. */
  maxPending: number;
  /**
   * Pending approvals of one client principal, over all its sessions. Default 256. Without it one
   * client (100 sessions × 64) could take the whole runtime's `maxPending` and every other client's
   * ask would be refused — a refusal its agent adapter may turn into a fail-open.
   */
  maxPendingPerClient: number;
  /** Cap on a hook's `approval_timeout`, seconds. Default 3600. */
  maxTimeoutS: number;
  /** Decided and expired approvals kept for reading (oldest forgotten first). Default 1024. */
  retainDecided: number;
}

export const DEFAULT_APPROVAL_LIMITS: Readonly<ApprovalLimits> = Object.freeze({ maxPendingPerSession: 64, maxPending: 4096, maxPendingPerClient: 256, maxTimeoutS: 3600, retainDecided: 1024 });

export type ApprovalRecordKind = "approval_request" | "approval_decision";

/** The audit record of an approval's request or decision: one shape for the local and the shared coordinator. */
export function approvalAuditRecord(kind: ApprovalRecordKind, view: Approval): AuditRecordInput {
  return {
    kind,
    session: view.session,
    ...(view.owner !== null ? { owner: view.owner } : {}),
    ...(view.chain_id !== null ? { chain_id: view.chain_id } : {}),
    hook: view.hook,
    profile: view.profile,
    profile_event: view.event,
    status: view.state,
    details: kind === "approval_request"
      ? { approval_id: view.id, prompt: view.prompt, prompt_sha256: view.prompt_sha256, prompt_chars: view.prompt_chars, options: view.options, default: view.default, timeout_s: view.timeout_s, expires_at: view.expires_at, ...(view.state !== "pending" ? { decision: view.decision, decided_by: view.decided_by } : {}) }
      : { approval_id: view.id, decision: view.decision, decided_by: view.decided_by, decided_at: view.decided_at },
  };
}

/** An approval whose audit record could not be written: AUDIT_WRITE_FAILED, nothing decided or asked. */
export function approvalAuditFailed(err: unknown, id: string): VcpError {
  return new VcpError("AUDIT_WRITE_FAILED", `audit log write failed: ${err instanceof Error ? err.message : String(err)}`, { approval_id: id }, { cause: err });
}

/** What a profile answer asks (the fold's `approval` plus where the chain ran). */
export interface ApprovalAsk {
  profile: string;
  event: string;
  session: string;
  owner: string | null;
  chainId?: string | null;
  hook: string;
  prompt: string;
  options: readonly string[];
  default: "allow" | "deny";
  timeoutS: number;
}

export interface ApprovalQuery {
  session?: string;
  state?: ApprovalState;
  principal?: SessionPrincipal;
}

/** Options of `get`: `full` asks for the whole prompt (kept while the approval is pending). */
export interface ApprovalGetOptions {
  principal?: SessionPrincipal;
  full?: boolean;
}

/** Decisions that grant (PROFILES §3.4), compared case-insensitively after trimming. */
const GRANTING = new Set(["allow", "allow once", "allow always"]);
const ALLOW_ALWAYS = "allow always";
/** Longest decision text accepted (the options a hook offers are short labels). */
export const MAX_DECISION_LENGTH = 256;
/** Longest prompt shown in lists, streams, answers and the audit log (the rest is cut, marked with an ellipsis). */
const MAX_PROMPT_SHOWN = 4096;
/** Longest prompt kept whole for `get(id, { full: true })` while pending (bounds memory: max_pending × this). */
export const MAX_PROMPT_KEPT = 65_536;
/** Options are button labels: each is cut at this many characters, and at most MAX_OPTIONS are kept. */
const MAX_OPTION_TEXT = 256;
const MAX_OPTIONS = 16;
/** Sessions with "allow always" grants remembered (oldest forgotten first), and grants per session. */
const MAX_ALLOW_ALWAYS_SESSIONS = 10_000;
const MAX_ALLOW_ALWAYS_PER_SESSION = 256;

/** Granted for allow / allow once / allow always (any case); anything else is a denial. */
export function isGranting(decision: string): boolean {
  return GRANTING.has(decision.trim().toLowerCase());
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * How an approval carries its prompt: shown clipped, identified by the digest of the whole, and the
 * whole (up to MAX_PROMPT_KEPT) when clipped. One rule for the local and the shared coordinator.
 */
export function describePrompt(prompt: string): { view: Pick<Approval, "prompt" | "prompt_sha256" | "prompt_chars" | "prompt_truncated">; full: string | undefined } {
  const truncated = prompt.length > MAX_PROMPT_SHOWN;
  return {
    view: { prompt: clip(prompt, MAX_PROMPT_SHOWN), prompt_sha256: createHash("sha256").update(prompt, "utf8").digest("hex"), prompt_chars: prompt.length, prompt_truncated: truncated },
    full: truncated ? prompt.slice(0, MAX_PROMPT_KEPT) : undefined,
  };
}

/** The options an approval keeps (labels; see MAX_OPTION_TEXT). */
export function approvalOptions(options: readonly string[]): string[] {
  return options.slice(0, MAX_OPTIONS).map((o) => clip(o, MAX_OPTION_TEXT));
}

/**
 * The "allow always" key of an approval: its hook and the SHA-256 of its full prompt. SECURITY: never
 * the shown (clipped) prompt — a different command sharing its first 4,096 characters would match.
 */
export function allowAlwaysKey(view: Pick<Approval, "hook" | "prompt_sha256">): string {
  return `${view.hook}:sha256:${view.prompt_sha256}`;
}

/** The view `get(id, { full: true })` answers: the kept full prompt in place of the clipped one. */
export function withFullPrompt(view: Approval, full: string | undefined): Approval {
  return full === undefined ? view : { ...view, prompt: full, prompt_truncated: view.prompt_chars > full.length };
}

/** FORBIDDEN for a principal that may read the approval but not decide it (a client: its agent asked). */
export function assertMayDecide(view: Approval, principal: SessionPrincipal | undefined): void {
  if (mayDecideApproval(view.owner, principal)) return;
  throw new VcpError("FORBIDDEN", `a ${principal?.role ?? "?"} token may not decide approvals, not even its own session's: the agent that asked must not answer; decide with an approver or operator token`, { approval_id: view.id, role: principal?.role, required: ["operator", "approver"] });
}

function positiveInt(value: number | undefined, fallback: number, field: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) throw new VcpError("INVALID_CONFIG", `approvals.${field} must be a positive integer`, { field: `approvals.${field}` });
  return value;
}

interface Deps {
  clock: Clock;
  audit: () => AuditTrail | undefined;
  logger?: Logger;
  limits?: Partial<ApprovalLimits>;
}

interface Entry {
  view: Approval;
  ownerKey: string;
  /** The whole prompt while pending, when `view.prompt` is clipped. */
  fullPrompt?: string | undefined;
  timer?: NodeJS.Timeout;
  /** A decision's audit record is being written: the approval stays pending until it is durable. */
  deciding?: boolean;
  waiters: Array<(view: Approval) => void>;
}

/**
 * @example
 * ```ts
 * const approvals = createApprovals({ clock: systemClock, audit: () => undefined });
 * const a = await approvals.request({ profile: "amplifier", event: "tool:pre", session: "s1", owner: "app", hook: "confirm", prompt: "Run rm?", options: ["Allow", "Deny"], default: "deny", timeoutS: 60 });
 * await approvals.decide(a.id, "Allow always", { principal: { id: "human", role: "approver", approves: ["app"] } }); // state granted; later "Run rm?" asks in s1 are granted at once
 * ```
 */
export function createApprovals(deps: Deps) {
  const limits: ApprovalLimits = {
    maxPendingPerSession: positiveInt(deps.limits?.maxPendingPerSession, DEFAULT_APPROVAL_LIMITS.maxPendingPerSession, "max_pending_per_session"),
    maxPending: positiveInt(deps.limits?.maxPending, DEFAULT_APPROVAL_LIMITS.maxPending, "max_pending"),
    maxPendingPerClient: positiveInt(deps.limits?.maxPendingPerClient, DEFAULT_APPROVAL_LIMITS.maxPendingPerClient, "max_pending_per_client"),
    maxTimeoutS: positiveInt(deps.limits?.maxTimeoutS, DEFAULT_APPROVAL_LIMITS.maxTimeoutS, "max_timeout_s"),
    retainDecided: positiveInt(deps.limits?.retainDecided, DEFAULT_APPROVAL_LIMITS.retainDecided, "retain_decided"),
  };
  const entries = new Map<string, Entry>();
  /** Decided ids, oldest first: forgotten beyond `retainDecided`. */
  const decided: string[] = [];
  const pendingBySession = new Map<string, number>();
  /** Pending approvals per client principal (the embedding application's, owner null, are not counted). */
  const pendingByOwner = new Map<string, number>();
  let pending = 0;
  /** "allow always" per session (owner-scoped key) → the allowAlwaysKey()s it granted. */
  const allowAlways = new Map<string, Set<string>>();
  const listeners = new Set<(event: ApprovalEvent) => void>();
  let closed = false;

  const iso = (ms: number) => new Date(ms).toISOString();
  // SECURITY: session ids are per owner: two owners' equal ids are two sessions (access.ts).
  const sessionKeyOf = (a: { owner: string | null; profile: string; session: string }) => JSON.stringify([a.owner, a.profile, a.session]);

  function emit(event: ApprovalEvent): void {
    for (const listener of listeners) {
      try {
        listener(event);
      } catch (err) {
        deps.logger?.warn({ err, approval: event.approval.id }, "an approval listener threw");
      }
    }
  }

  function copy(view: Approval): Approval {
    return { ...view, options: [...view.options] };
  }

  function visible(id: string, principal: SessionPrincipal | undefined): Entry {
    const entry = entries.get(id);
    // SECURITY: another client's approval gets the answer an unknown id gets.
    if (entry === undefined || !mayReadApproval(entry.view.owner, principal)) {
      throw new VcpError("APPROVAL_NOT_FOUND", `no approval '${id}'`, { approval_id: id });
    }
    return entry;
  }

  async function auditRecord(kind: ApprovalRecordKind, view: Approval): Promise<void> {
    await deps.audit()?.writer.append(approvalAuditRecord(kind, view));
  }


  function retire(entry: Entry): void {
    const key = sessionKeyOf(entry.view);
    pending--;
    const left = (pendingBySession.get(key) ?? 1) - 1;
    if (left <= 0) pendingBySession.delete(key);
    else pendingBySession.set(key, left);
    const owner = entry.view.owner;
    if (owner !== null) {
      const mine = (pendingByOwner.get(owner) ?? 1) - 1;
      if (mine <= 0) pendingByOwner.delete(owner);
      else pendingByOwner.set(owner, mine);
    }
    if (entry.timer !== undefined) clearTimeout(entry.timer);
    entry.fullPrompt = undefined;
    decided.push(entry.view.id);
    while (decided.length > limits.retainDecided) entries.delete(decided.shift()!);
  }

  /** Move a pending approval to its final state; listeners and waiters learn of it synchronously. */
  function settle(entry: Entry, state: Exclude<ApprovalState, "pending">, decision: string, by: string, at: string = iso(deps.clock.wallNow())): Approval {
    const view = entry.view;
    view.state = state;
    view.decision = decision;
    view.decided_by = by;
    view.decided_at = at;
    retire(entry);
    const out = copy(view);
    emit({ type: state === "expired" ? "expired" : "decided", approval: out });
    for (const wake of entry.waiters.splice(0)) wake(copy(view));
    return out;
  }

  function expire(entry: Entry, by: string): void {
    // A decision being written when the timer fires wins (it came first); if its write fails, decide() expires it.
    if (entry.view.state !== "pending" || entry.deciding) return;
    const out = settle(entry, "expired", entry.view.default, by);
    void auditRecord("approval_decision", out).catch((err: unknown) => deps.logger?.error({ err, approval: out.id }, "audit: the expiry of an approval could not be written"));
  }

  return {
    limits: Object.freeze({ ...limits }),

    /**
     * Record what an `ask_user` answer asks. A session where "allow always" was answered to the
     * same hook and the same full prompt (its SHA-256) gets it granted at once (recorded with
     * `decided_by: "allow_always"`).
     * Resolves after the request record is durable. APPROVAL_LIMIT when the session or the runtime
     * has as many pending approvals as allowed.
     */
    async request(ask: ApprovalAsk): Promise<Approval> {
      if (closed) throw new VcpError("SANDBOX_CLOSED", "the runtime is closed; no approval can be asked");
      const key = sessionKeyOf({ owner: ask.owner, profile: ask.profile, session: ask.session });
      const prompt = describePrompt(ask.prompt);
      const cacheKey = allowAlwaysKey({ hook: ask.hook, prompt_sha256: prompt.view.prompt_sha256 });
      const cached = allowAlways.get(key)?.has(cacheKey) === true;
      if (!cached) {
        // Limits before anything is created (no timer, no record, no event).
        const inSession = pendingBySession.get(key) ?? 0;
        if (inSession >= limits.maxPendingPerSession) {
          throw new VcpError("APPROVAL_LIMIT", `session '${ask.session}' already has ${inSession} pending approvals (approvals.max_pending_per_session ${limits.maxPendingPerSession}); decide or let them expire first`, { session: ask.session, limit: limits.maxPendingPerSession, scope: "session" });
        }
        // SECURITY: one client's asks cannot take the whole runtime's pool from the others.
        const ofOwner = ask.owner === null ? 0 : (pendingByOwner.get(ask.owner) ?? 0);
        if (ask.owner !== null && ofOwner >= limits.maxPendingPerClient) {
          throw new VcpError("APPROVAL_LIMIT", `principal '${ask.owner}' already has ${ofOwner} pending approvals (approvals.max_pending_per_client ${limits.maxPendingPerClient}); decide or let them expire first`, { owner: ask.owner, limit: limits.maxPendingPerClient, scope: "client" });
        }
        if (pending >= limits.maxPending) {
          throw new VcpError("APPROVAL_LIMIT", `the runtime already has ${pending} pending approvals (approvals.max_pending ${limits.maxPending})`, { limit: limits.maxPending, scope: "runtime" });
        }
      }
      const now = deps.clock.wallNow();
      const timeoutS = Math.min(Number.isFinite(ask.timeoutS) && ask.timeoutS > 0 ? ask.timeoutS : 300, limits.maxTimeoutS);
      const view: Approval = {
        id: randomUUID(),
        session: ask.session,
        owner: ask.owner,
        profile: ask.profile,
        event: ask.event,
        chain_id: ask.chainId ?? null,
        hook: ask.hook,
        ...prompt.view,
        options: approvalOptions(ask.options),
        default: ask.default,
        timeout_s: timeoutS,
        created_at: iso(now),
        expires_at: iso(now + timeoutS * 1000),
        state: "pending",
      };
      const entry: Entry = { view, ownerKey: key, waiters: [], ...(cached ? {} : { fullPrompt: prompt.full }) };
      if (cached) {
        view.state = "granted";
        view.decision = ALLOW_ALWAYS;
        view.decided_by = "allow_always";
        view.decided_at = view.created_at;
        entries.set(view.id, entry);
        decided.push(view.id);
        while (decided.length > limits.retainDecided) entries.delete(decided.shift()!);
        await auditRecord("approval_request", view).catch((err: unknown) => {
          throw approvalAuditFailed(err, view.id);
        });
        const out = copy(view);
        emit({ type: "new", approval: out });
        emit({ type: "decided", approval: copy(view) });
        return out;
      }
      entries.set(view.id, entry);
      pending++;
      pendingBySession.set(key, (pendingBySession.get(key) ?? 0) + 1);
      if (ask.owner !== null) pendingByOwner.set(ask.owner, (pendingByOwner.get(ask.owner) ?? 0) + 1);
      try {
        await auditRecord("approval_request", view);
      } catch (err) {
        // Not recorded ⇒ not asked: nothing half-created stays behind.
        entries.delete(view.id);
        retire(entry);
        decided.pop();
        throw approvalAuditFailed(err, view.id);
      }
      entry.timer = setTimeout(() => expire(entry, "timeout"), timeoutS * 1000);
      entry.timer.unref();
      const out = copy(view);
      emit({ type: "new", approval: out });
      return out;
    },

    /** Approvals the principal may see (its own sessions'; operators and the embedding application: all), oldest first. */
    list(query: ApprovalQuery = {}): Approval[] {
      const out: Approval[] = [];
      for (const { view } of entries.values()) {
        if (!mayReadApproval(view.owner, query.principal)) continue;
        if (query.session !== undefined && view.session !== query.session) continue;
        if (query.state !== undefined && view.state !== query.state) continue;
        out.push(copy(view));
      }
      return out;
    },

    get(id: string, options: ApprovalGetOptions = {}): Approval {
      const entry = visible(id, options.principal);
      return withFullPrompt(copy(entry.view), options.full === true ? entry.fullPrompt : undefined);
    },

    /**
     * Decide a pending approval: granted for allow / allow once / allow always (any case), denied for
     * anything else. "allow always" also grants later identical asks (same hook, same full prompt)
     * in the session. APPROVAL_NOT_FOUND for an unknown or another client's id; FORBIDDEN for a
     * client (its own agent asked); APPROVAL_DECIDED once decided or expired (the first decision
     * stands). Resolves after the decision record is durable.
     */
    async decide(id: string, decision: string, options: { principal?: SessionPrincipal } = {}): Promise<Approval> {
      const entry = visible(id, options.principal);
      assertMayDecide(entry.view, options.principal);
      if (typeof decision !== "string" || decision.trim() === "" || decision.length > MAX_DECISION_LENGTH) {
        throw new VcpError("INVALID_INPUT", `decision: must be a non-empty string of at most ${MAX_DECISION_LENGTH} characters (allow, allow once, allow always grant; anything else denies)`, { field: "decision", rule: "string" });
      }
      if (entry.view.state !== "pending" || entry.deciding === true) {
        const v = entry.view;
        if (entry.deciding === true) {
          throw new VcpError("APPROVAL_DECIDED", `approval '${id}' is being decided by another request; the first decision stands`, { approval_id: id, state: "pending", deciding: true });
        }
        throw new VcpError("APPROVAL_DECIDED", `approval '${id}' is already ${v.state}${v.decided_by === "timeout" ? ` (it expired at ${v.expires_at}; the default '${v.default}' applied)` : ` ('${v.decision ?? ""}' by ${v.decided_by ?? "?"})`}; the first decision stands`, { approval_id: id, state: v.state, decision: v.decision, decided_by: v.decided_by });
      }
      const granted = isGranting(decision);
      const by = options.principal?.id ?? "embedding-application";
      const state = granted ? "granted" : "denied";
      const at = iso(deps.clock.wallNow());
      // Durable before visible (as a chain's records are before its answer): a decision the log
      // could not take is not made — the approval stays pending (or expires if its time ran out).
      entry.deciding = true;
      try {
        await auditRecord("approval_decision", { ...entry.view, state, decision, decided_by: by, decided_at: at });
      } catch (err) {
        entry.deciding = false;
        if (Date.parse(entry.view.expires_at) <= deps.clock.wallNow()) expire(entry, "timeout");
        throw approvalAuditFailed(err, id);
      }
      entry.deciding = false;
      // Closed while the record was written: the shutdown expiry already answered its waiters.
      if (entry.view.state !== "pending") return copy(entry.view);
      if (granted && decision.trim().toLowerCase() === ALLOW_ALWAYS) {
        // Bounded: a forgotten grant only means the user is asked again.
        let set = allowAlways.get(entry.ownerKey);
        if (set === undefined) {
          if (allowAlways.size >= MAX_ALLOW_ALWAYS_SESSIONS) allowAlways.delete(allowAlways.keys().next().value!);
          allowAlways.set(entry.ownerKey, (set = new Set()));
        }
        if (set.size < MAX_ALLOW_ALWAYS_PER_SESSION) set.add(allowAlwaysKey(entry.view));
      }
      return settle(entry, state, decision, by, at);
    },

    /** Resolves with the approval once it is decided or expired (at once if it already is). */
    async wait(id: string, options: { principal?: SessionPrincipal } = {}): Promise<Approval> {
      const entry = visible(id, options.principal);
      if (entry.view.state !== "pending") return copy(entry.view);
      return new Promise((resolve) => entry.waiters.push(resolve));
    },

    /** `approval` events: `new`, `decided`, `expired`. Returns the unsubscribe function. */
    on(event: "approval", listener: (event: ApprovalEvent) => void): () => void {
      if (event !== "approval") throw new VcpError("INVALID_INPUT", `unknown approvals event '${String(event)}' (only "approval")`, { field: "event" });
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    /** Pending approvals now, and approvals kept for reading (pending and recently decided). */
    stats(): { pending: number; retained: number } {
      return { pending, retained: entries.size };
    },

    /** Pending approvals expire with their default (decided_by "shutdown"); their waiters answer. */
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      const open = [...entries.values()].filter((e) => e.view.state === "pending");
      for (const entry of open) {
        const out = settle(entry, "expired", entry.view.default, "shutdown");
        await auditRecord("approval_decision", out).catch((err: unknown) => deps.logger?.error({ err, approval: out.id }, "audit: an approval expired at shutdown could not be recorded"));
      }
      listeners.clear();
    },
  };
}

export type Approvals = ReturnType<typeof createApprovals>;

/** An answer's outcome once its approval is settled: granted, or the default allow at the timeout. */
export function approvalAllows(approval: Approval): boolean {
  return approval.state === "granted" || (approval.state === "expired" && approval.default === "allow");
}

/** The wire view of an approval inside a native answer (PROFILES §8.9 `approval`). */
function answerView(approval: Approval): Record<string, unknown> {
  return {
    id: approval.id,
    hook: approval.hook,
    prompt: approval.prompt,
    prompt_sha256: approval.prompt_sha256,
    prompt_chars: approval.prompt_chars,
    prompt_truncated: approval.prompt_truncated,
    options: approval.options,
    default: approval.default,
    timeout_s: approval.timeout_s,
    expires_at: approval.expires_at,
    state: approval.state,
    ...(approval.decision !== undefined ? { decision: approval.decision, decided_by: approval.decided_by } : {}),
  };
}

/**
 * The native answer with its approval's id and expiry added; once settled (cached "allow always",
 * a decision, the timeout) the answer is the decided `continue` or `deny` ("User denied: <prompt>").
 */
export function answerWithApproval(out: ProfileFireResult, approval: Approval): ProfileFireResult {
  const native: Record<string, unknown> = { ...out.native, approval: answerView(approval) };
  if (approval.state !== "pending") {
    if (approvalAllows(approval)) {
      native.action = "continue";
      native.reason = null;
    } else {
      native.action = "deny";
      native.reason = approval.state === "denied" ? `User denied: ${approval.prompt}` : `Approval timed out after ${approval.timeout_s} s: denied by default (${approval.prompt})`;
    }
  }
  return { ...out, native };
}

/**
 * The hook whose `ask_user` the fold kept: the first hook of the chain whose verdict is `ask` (the
 * fold keeps the first), else the name the fold reported.
 */
export function askingHook(out: ProfileFireResult, fallback: string): string {
  return out.result.hook_results.find((h) => h.verdict === "ask")?.hook ?? fallback;
}

/**
 * The coordinator's side of a profile answer (PROFILES §8.9): an Amplifier `ask_user` becomes a
 * pending approval (or is granted at once from the session's "allow always" cache); with
 * `waitApproval` the answer is the decided continue / deny.
 *
 * @example
 * ```ts
 * const out = await fireWithApproval({ firer, approvals }, "amplifier", "tool:pre", { input, waitApproval: true });
 * ```
 */
export async function fireWithApproval(
  deps: { firer: Pick<ProfileFirer, "fire">; approvals: Pick<Approvals, "request" | "wait"> },
  profile: string,
  event: string,
  input: ProfileFireInput,
): Promise<ProfileFireResult> {
  const { firer, approvals } = deps;
  const out = await firer.fire(profile, event, input);
  const asked = out.native.approval;
  if (out.result.profile !== "amplifier" || out.native.action !== "ask_user" || typeof asked !== "object" || asked === null || Array.isArray(asked)) return out;
  const a = asked as { hook?: unknown; prompt?: unknown; options?: unknown; default?: unknown; timeout_s?: unknown };
  const data = (input.input as { data?: { session_id?: unknown } } | null)?.data;
  const session = input.session ?? (typeof data?.session_id === "string" ? data.session_id : "");
  // Implicit sessions are per owner (fire-profile.ts): the session that asked is the sender's own.
  const owner = input.principal?.id ?? null;
  const approval = await approvals.request({
    profile: "amplifier",
    event,
    session,
    owner,
    chainId: out.result.chain_id,
    hook: askingHook(out, typeof a.hook === "string" ? a.hook : "(unknown)"),
    prompt: typeof a.prompt === "string" ? a.prompt : "Allow this operation?",
    options: Array.isArray(a.options) ? a.options.filter((o): o is string => typeof o === "string") : ["Allow", "Deny"],
    default: a.default === "allow" ? "allow" : "deny",
    timeoutS: typeof a.timeout_s === "number" ? a.timeout_s : 300,
  });
  if (input.waitApproval !== true || approval.state !== "pending") return answerWithApproval(out, approval);
  const signal = input.signal;
  if (signal === undefined) return answerWithApproval(out, await approvals.wait(approval.id));
  // The caller went away (or the server is closing): the approval stays pending, nobody waits for it.
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<undefined>((resolve) => {
    onAbort = () => resolve(undefined);
    if (signal.aborted) resolve(undefined);
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    const settled = await Promise.race([approvals.wait(approval.id), aborted]);
    return answerWithApproval(out, settled ?? approval);
  } finally {
    signal.removeEventListener("abort", onAbort!);
  }
}
