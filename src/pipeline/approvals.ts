/**
 * Approvals (PROFILES §3.4 "Coordinator", §8.9): an Amplifier `ask_user` answer becomes a pending
 * approval that an operator or an `approver` of the session's owner decides, or that expires into the
 * hook's `approval_default`. Host side only: guests never see or decide an approval.
 *
 * ```
 *  fireProfile answer ── action ask_user ──► allow-always cache (owner, profile, session; hook + sha256 of the full prompt)
 *       │                                      hit ─► granted at once (decided_by "allow_always"), audited
 *       │                                      miss ─► limits (per session, per client, global) ─► pending ─► audited
 *       ▼                                                                     │
 *  native.approval += {id, expires_at, state}        decide(id, decision) ◄───┤ approver / operator
 *                                                    timeout (capped) ◄───────┘ ⇒ state expired, decision = default
 *  every change ─► the store's event feed ─► "approval" listeners (the SSE stream), waiters (?wait_approval=1)
 * ```
 *
 * The rules live here once; where approvals are kept is an {@link ApprovalStore} (a port) with two
 * adapters: in this process (approvals-local.ts, `store: local`) and in Redis for every replica of a
 * deployment (src/store/approvals.ts, `store: redis`). Each store step the rules need to be atomic
 * (insert with its limits, claim, settle) is one adapter call, so Redis runs it as one script.
 *
 * Who sees and decides is src/pipeline/access.ts (`mayReadApproval`, `mayDecideApproval`): a client
 * sees the approvals of sessions it owns but never decides one (its agent asked; it must not answer);
 * another client's approval is APPROVAL_NOT_FOUND, exactly like a missing one; an `approver` sees and
 * decides those of the clients it approves for. Decided approvals are kept (bounded) so a late reader
 * can see what was decided. Every request and decision is durable in the audit log before anyone
 * sees it; the first decision stands.
 *
 * The prompt is shown clipped (4,096 characters) but never judged clipped: "allow always" remembers
 * the SHA-256 of the whole prompt, and while an approval is pending its full text (up to 65,536
 * characters) is one `get(id, { full: true })` away, so an approver can read everything it allows.
 */
import { createHash, randomUUID } from "node:crypto";
import { VcpError } from "../errors.js";
import { createOutageLog, silentLogger, type Clock, type Logger } from "../observe/events.js";
import { mayDecideApproval, mayReadApproval, type SessionPrincipal } from "./access.js";
import type { Principal } from "../registry/index.js";
import type { AuditRecordInput } from "../audit/index.js";
import { createRedactor, type Redactor } from "../audit/redact.js";
import { DEFAULTS } from "../config/defaults.js";

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
  /**
   * What the agent asked to do, as JSON text (Amplifier: `{"tool_name", "tool_input"}` of the event),
   * redacted like the audit log and cut at 16,384 characters (`input_truncated`). Absent when the ask
   * came without an input. Guest- and client-controlled: show it as text, never as markup.
   */
  input?: string;
  /** `input` was cut at 16,384 characters (it is then not valid JSON). */
  input_truncated?: boolean;
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
  /** What the agent asked to do (the event's tool and its arguments, as the native input has them). */
  input?: unknown;
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
export const ALLOW_ALWAYS = "allow always";
/** Longest decision text accepted (the options a hook offers are short labels). */
export const MAX_DECISION_LENGTH = 256;
/** Longest prompt shown in lists, streams, answers and the audit log (the rest is cut, marked with an ellipsis). */
const MAX_PROMPT_SHOWN = 4096;
/** Longest prompt kept whole for `get(id, { full: true })` while pending (bounds memory: max_pending × this). */
export const MAX_PROMPT_KEPT = 65_536;
/** Longest JSON text of an approval's `input` (the rest is cut: `input_truncated`). */
export const MAX_INPUT_SHOWN = 16_384;
/** Options are button labels: each is cut at this many characters, and at most MAX_OPTIONS are kept. */
const MAX_OPTION_TEXT = 256;
const MAX_OPTIONS = 16;
/** "allow always" grants remembered per session (a forgotten grant only means the user is asked again). */
export const MAX_ALLOW_ALWAYS_PER_SESSION = 256;

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

/**
 * How an approval carries what the agent asked to do: the input redacted by the audit's redactor
 * (configured keys, secret shapes), as JSON text cut at MAX_INPUT_SHOWN characters. One rule for the
 * local and the shared coordinator, applied before anything is stored. `redact` should stop at
 * MAX_INPUT_SHOWN characters of JSON (`maxChars`): the cut then bounds the work, not only the text.
 */
export function describeInput(input: unknown, redact: Redactor): Pick<Approval, "input" | "input_truncated"> {
  if (input === undefined) return {};
  // SECURITY: redaction runs on the values before the text is cut, so a cut cannot expose half a
  // secret; secrets in a tool's arguments never reach the console, the stream or the store.
  let text: string;
  try {
    text = JSON.stringify(redact(input)) ?? "null";
  } catch {
    text = "null";
  }
  if (text.length <= MAX_INPUT_SHOWN) return { input: text, input_truncated: false };
  let cut = MAX_INPUT_SHOWN;
  const code = text.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut--; // do not split a surrogate pair
  return { input: text.slice(0, cut), input_truncated: true };
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

/** The session an approval belongs to, as one string: the allow-always set and the per-session limit are keyed by it. */
export function approvalSessionKey(a: Pick<Approval, "owner" | "profile" | "session">): string {
  // SECURITY: session ids are per owner: two owners' equal ids are two sessions (access.ts).
  return JSON.stringify([a.owner, a.profile, a.session]);
}

/** A copy a caller may change without changing what is kept. */
export function copyApproval(view: Approval): Approval {
  return { ...view, options: [...view.options] };
}

/** What {@link ApprovalStore.insert} did: kept it pending, granted it from the allow-always set, or refused it at a limit. */
export type ApprovalInsertOutcome =
  | { kind: "pending" }
  | { kind: "cached" }
  | { kind: "limit"; scope: "session" | "client" | "runtime"; count: number };

/** What {@link ApprovalStore.claim} found: the right to decide is this caller's, another's, or there is nothing to decide. */
export type ApprovalClaim = "ok" | "busy" | "settled" | "gone";

/**
 * Where approvals are kept (the port). Each method is one atomic step of the store; the rules around
 * them (limits' messages, who may see and decide, durable before visible, expiry) are the coordinator's.
 */
export interface ApprovalStore {
  /**
   * Whose approvals these are: `runtime` (this process: they expire with their default when it
   * closes) or `deployment` (shared by replicas: left pending for the others when one closes).
   */
  readonly holder: "runtime" | "deployment";
  /**
   * With a store shared by processes: how often to look for approvals whose time ran out (their
   * creator may be gone) and for settled approvals whose event this process missed.
   */
  readonly sweep?: { everyMs: number; due(): Promise<Approval[]> };
  /**
   * In one step: when the session's allow-always set holds `alwaysKey`, keep `granted` (decided,
   * retained) → `cached`; else check the limits — per session, per client (a non-null owner), then
   * overall, in that order — before anything is kept, and keep `pending` (and `fullPrompt`) → `pending`.
   */
  insert(args: { pending: Approval; granted: Approval; alwaysKey: string; fullPrompt: string | undefined; limits: ApprovalLimits }): Promise<ApprovalInsertOutcome>;
  /** Forget a pending approval whose request could not be recorded, as if never asked. */
  withdraw(view: Approval): Promise<void>;
  load(id: string): Promise<Approval | undefined>;
  /** Every kept approval, oldest first. */
  list(): Promise<Approval[]>;
  /** The whole prompt of a pending approval whose `prompt` is clipped. */
  fullPrompt(id: string): Promise<string | undefined>;
  /** Take the right to decide a pending approval (one decision is written at a time); a claim of a crashed process lapses after `ttlMs`. */
  claim(id: string, token: string, ttlMs: number): Promise<ApprovalClaim>;
  /** Give a claim back (its decision could not be recorded). */
  release(id: string, token: string): Promise<void>;
  /**
   * In one step: replace a still-pending approval by `settled`, add `always` to its session's
   * allow-always set (at most `maxAlways`), retain at most `retainDecided` settled approvals and
   * publish the event. `token`: the claim it holds (none: only while nobody holds one); `force`: the
   * holding process shuts down and settles over any claim. False when something settled it first.
   */
  settle(settled: Approval, options: { token?: string; force?: boolean; always?: string; retainDecided: number; maxAlways: number }): Promise<boolean>;
  /** Tell every coordinator sharing the store (this one included) of an event. */
  publish(event: ApprovalEvent): Promise<void>;
  /** Events of every coordinator sharing the store, until the returned function is called. */
  subscribe(listener: (event: ApprovalEvent) => void): Promise<() => Promise<void>>;
  stats(): Promise<{ pending: number; retained: number }>;
}

export interface ApprovalDeps {
  store: ApprovalStore;
  clock: Clock;
  /** Where requests and decisions are recorded before they are visible (the runtime's audit trail). */
  audit: () => { writer: { append(record: AuditRecordInput): Promise<unknown> } } | undefined;
  logger?: Logger;
  limits?: Partial<ApprovalLimits>;
  /** Keys redacted from an approval's `input` at any depth, as in the audit log (`redact_keys`; default the built-in list). */
  redactKeys?: readonly string[];
}

/** How long a decision's audit write may take before another process may decide or expire the approval. */
const DECIDING_MS = 30_000;

/** The limits a coordinator applies (vcp.yaml `approvals:`), each checked once here: INVALID_CONFIG names a bad one. */
export function resolveApprovalLimits(given: Partial<ApprovalLimits> = {}): ApprovalLimits {
  return {
    maxPendingPerSession: positiveInt(given.maxPendingPerSession, DEFAULT_APPROVAL_LIMITS.maxPendingPerSession, "max_pending_per_session"),
    maxPending: positiveInt(given.maxPending, DEFAULT_APPROVAL_LIMITS.maxPending, "max_pending"),
    maxPendingPerClient: positiveInt(given.maxPendingPerClient, DEFAULT_APPROVAL_LIMITS.maxPendingPerClient, "max_pending_per_client"),
    maxTimeoutS: positiveInt(given.maxTimeoutS, DEFAULT_APPROVAL_LIMITS.maxTimeoutS, "max_timeout_s"),
    retainDecided: positiveInt(given.retainDecided, DEFAULT_APPROVAL_LIMITS.retainDecided, "retain_decided"),
  };
}

/** APPROVAL_LIMIT for an ask over one of the limits (the message names the limit and the count). */
function limitReached(outcome: Extract<ApprovalInsertOutcome, { kind: "limit" }>, ask: ApprovalAsk, limits: ApprovalLimits, holder: ApprovalStore["holder"]): VcpError {
  const n = outcome.count;
  if (outcome.scope === "session") {
    return new VcpError("APPROVAL_LIMIT", `session '${ask.session}' already has ${n} pending approvals (approvals.max_pending_per_session ${limits.maxPendingPerSession}); decide or let them expire first`, { session: ask.session, limit: limits.maxPendingPerSession, scope: "session" });
  }
  if (outcome.scope === "client") {
    return new VcpError("APPROVAL_LIMIT", `principal '${ask.owner}' already has ${n} pending approvals (approvals.max_pending_per_client ${limits.maxPendingPerClient}); decide or let them expire first`, { owner: ask.owner, limit: limits.maxPendingPerClient, scope: "client" });
  }
  return new VcpError("APPROVAL_LIMIT", `the ${holder} already has ${n} pending approvals (approvals.max_pending ${limits.maxPending})`, { limit: limits.maxPending, scope: "runtime" });
}

function notFound(id: string): VcpError {
  return new VcpError("APPROVAL_NOT_FOUND", `no approval '${id}'`, { approval_id: id });
}

function alreadyDecided(id: string, v: Approval): VcpError {
  return new VcpError("APPROVAL_DECIDED", `approval '${id}' is already ${v.state}${v.decided_by === "timeout" ? ` (it expired at ${v.expires_at}; the default '${v.default}' applied)` : ` ('${v.decision ?? ""}' by ${v.decided_by ?? "?"})`}; the first decision stands`, { approval_id: id, state: v.state, decision: v.decision, decided_by: v.decided_by });
}

/**
 * The coordinator: every rule of approvals, over one {@link ApprovalStore}. `start()` subscribes to
 * the store's events (and, for a shared store, starts the sweep) before the first approval is asked.
 *
 * @example
 * ```ts
 * const approvals = createApprovals({ store: createLocalApprovalStore(), clock: systemClock, audit: () => undefined });
 * await approvals.start();
 * const a = await approvals.request({ profile: "amplifier", event: "tool:pre", session: "s1", owner: "app", hook: "confirm", prompt: "Run rm?", options: ["Allow", "Deny"], default: "deny", timeoutS: 60 });
 * await approvals.decide(a.id, "Allow always", { principal: { id: "human", role: "approver", approves: ["app"] } }); // state granted; later "Run rm?" asks in s1 are granted at once
 * ```
 */
export function createApprovals(deps: ApprovalDeps) {
  const { store } = deps;
  const limits = resolveApprovalLimits(deps.limits);
  // The audit log's redactor (same keys, same secret shapes); a string longer than the shown input is
  // cut after redaction, and the walk stops once the copy's JSON passes the shown length: a 10 MB
  // input costs what a 16 KiB one costs, and the shown text is the same.
  const redactInput = createRedactor({ keys: [...(deps.redactKeys ?? DEFAULTS.redact_keys)], maxStringLength: MAX_INPUT_SHOWN, maxChars: MAX_INPUT_SHOWN });
  const listeners = new Set<(event: ApprovalEvent) => void>();
  const waiters = new Map<string, Array<(view: Approval) => void>>();
  /** The expiry timers of the approvals asked here (a shared store's sweep also covers the others'). */
  const timers = new Map<string, NodeJS.Timeout>();
  let started: Promise<void> | undefined;
  let unsubscribe: (() => Promise<void>) | undefined;
  let sweeper: ReturnType<typeof setInterval> | undefined;
  let closed = false;

  const iso = (ms: number) => new Date(ms).toISOString();

  /** An event from the store (this coordinator's or, with a shared store, a peer's): listeners, then waiters. */
  function deliver(event: ApprovalEvent): void {
    for (const listener of listeners) {
      try {
        listener(event);
      } catch (err) {
        deps.logger?.warn({ err, approval: event.approval.id }, "an approval listener threw");
      }
    }
    if (event.type !== "new") {
      const timer = timers.get(event.approval.id);
      if (timer !== undefined) clearTimeout(timer);
      timers.delete(event.approval.id);
      wake(event.approval);
    }
  }

  function wake(view: Approval): void {
    const list = waiters.get(view.id);
    if (list === undefined) return;
    waiters.delete(view.id);
    for (const resolve of list) resolve(copyApproval(view));
  }

  async function visible(id: string, principal: SessionPrincipal | undefined): Promise<Approval> {
    const view = typeof id === "string" && id.length <= 128 ? await store.load(id) : undefined;
    // SECURITY: another client's approval gets the answer an unknown id gets.
    if (view === undefined || !mayReadApproval(view.owner, principal)) throw notFound(id);
    return view;
  }

  async function auditRecord(kind: ApprovalRecordKind, view: Approval): Promise<void> {
    await deps.audit()?.writer.append(approvalAuditRecord(kind, view));
  }

  function settleOptions(extra: { token?: string; force?: boolean; always?: string } = {}) {
    return { ...extra, retainDecided: limits.retainDecided, maxAlways: MAX_ALLOW_ALWAYS_PER_SESSION };
  }

  /** Expire a pending approval into its default; a decision being written when its time runs out wins (it came first). */
  async function expire(view: Approval, by: string): Promise<void> {
    if (view.state !== "pending") return;
    const out: Approval = { ...view, state: "expired", decision: view.default, decided_by: by, decided_at: iso(deps.clock.wallNow()) };
    if (!(await store.settle(out, settleOptions()))) return;
    await auditRecord("approval_decision", out).catch((err: unknown) => deps.logger?.error({ err, approval: out.id }, "audit: the expiry of an approval could not be written"));
  }

  async function expireById(id: string, by: string): Promise<void> {
    const view = await store.load(id);
    if (view !== undefined) await expire(view, by);
  }

  /** A shared store's sweep: approvals whose time ran out, and waited-for approvals settled while an event was missed. */
  async function sweep(due: () => Promise<Approval[]>): Promise<void> {
    for (const view of await due()) await expire(view, "timeout");
    for (const id of [...waiters.keys()]) {
      const view = await store.load(id);
      if (view !== undefined && view.state !== "pending") wake(view);
    }
  }

  /** Subscribe to the store's events once (every change reaches the listeners and waiters through them). */
  function start(): Promise<void> {
    started ??= (async () => {
      unsubscribe = await store.subscribe(deliver);
      const shared = store.sweep;
      if (shared === undefined || closed) return;
      // A sweep every `everyMs` through a Redis outage: one warning, one a minute, one line when it is back.
      const outage = createOutageLog({ logger: deps.logger ?? silentLogger, clock: deps.clock, failing: "approval sweep could not reach the shared store; it retries on its own", recovered: "approval sweep reached the shared store again" });
      // One sweep at a time: a tick that finds the last sweep still running (a slow store, a command
      // waiting out its timeout) skips, so sweeps never pile up or expire one approval twice at once.
      let sweeping = false;
      sweeper = setInterval(() => {
        if (sweeping) return;
        sweeping = true;
        sweep(shared.due)
          .then(() => outage.succeeded(), (err: unknown) => outage.failed(err))
          .finally(() => { sweeping = false; });
      }, shared.everyMs);
      sweeper.unref?.();
    })();
    return started;
  }

  return {
    limits: Object.freeze({ ...limits }),

    /** Subscribe to the store's events (and start a shared store's sweep); the first request or wait starts it too. */
    start,

    /**
     * Record what an `ask_user` answer asks. A session where "allow always" was answered to the
     * same hook and the same full prompt (its SHA-256) gets it granted at once (recorded with
     * `decided_by: "allow_always"`).
     * Resolves after the request record is durable. APPROVAL_LIMIT when the session, the client or
     * the whole store has as many pending approvals as allowed.
     */
    async request(ask: ApprovalAsk): Promise<Approval> {
      if (closed) throw new VcpError("SANDBOX_CLOSED", "the runtime is closed; no approval can be asked");
      await start();
      const now = deps.clock.wallNow();
      const timeoutS = Math.min(Number.isFinite(ask.timeoutS) && ask.timeoutS > 0 ? ask.timeoutS : 300, limits.maxTimeoutS);
      const prompt = describePrompt(ask.prompt);
      const pending: Approval = {
        id: randomUUID(), session: ask.session, owner: ask.owner, profile: ask.profile, event: ask.event, chain_id: ask.chainId ?? null,
        hook: ask.hook, ...prompt.view, options: approvalOptions(ask.options), ...describeInput(ask.input, redactInput), default: ask.default,
        timeout_s: timeoutS, created_at: iso(now), expires_at: iso(now + timeoutS * 1000), state: "pending",
      };
      const granted: Approval = { ...pending, state: "granted", decision: ALLOW_ALWAYS, decided_by: "allow_always", decided_at: pending.created_at };
      // SECURITY: the limits are checked before anything is created (no timer, no record, no event),
      // and one client's asks cannot take the whole pool from the others.
      const outcome = await store.insert({ pending, granted, alwaysKey: allowAlwaysKey(pending), fullPrompt: prompt.full, limits });
      if (outcome.kind === "limit") throw limitReached(outcome, ask, limits, store.holder);
      const made = outcome.kind === "cached" ? granted : pending;
      try {
        await auditRecord("approval_request", made);
      } catch (err) {
        // Not recorded ⇒ not asked: nothing half-created stays behind.
        if (outcome.kind === "pending") await store.withdraw(pending).catch(() => undefined);
        throw approvalAuditFailed(err, pending.id);
      }
      if (outcome.kind === "pending") {
        const timer = setTimeout(() => {
          timers.delete(pending.id);
          expireById(pending.id, "timeout").catch((err: unknown) => deps.logger?.warn({ err, approval: pending.id }, "an approval could not be expired"));
        }, timeoutS * 1000);
        timer.unref();
        timers.set(pending.id, timer);
      }
      await store.publish({ type: "new", approval: copyApproval(made) });
      if (outcome.kind === "cached") await store.publish({ type: "decided", approval: copyApproval(made) });
      return copyApproval(made);
    },

    /** Approvals the principal may see (its own sessions'; operators and the embedding application: all), oldest first. */
    async list(query: ApprovalQuery = {}): Promise<Approval[]> {
      return (await store.list()).filter((view) =>
        mayReadApproval(view.owner, query.principal) && (query.session === undefined || view.session === query.session) && (query.state === undefined || view.state === query.state));
    },

    /** One approval; `full: true` answers the whole prompt while it is pending. */
    async get(id: string, options: ApprovalGetOptions = {}): Promise<Approval> {
      const view = await visible(id, options.principal);
      if (options.full !== true || !view.prompt_truncated || view.state !== "pending") return view;
      return withFullPrompt(view, await store.fullPrompt(id));
    },

    /**
     * Decide a pending approval: granted for allow / allow once / allow always (any case), denied for
     * anything else. "allow always" also grants later identical asks (same hook, same full prompt)
     * in the session. APPROVAL_NOT_FOUND for an unknown or another client's id; FORBIDDEN for a
     * client (its own agent asked); APPROVAL_DECIDED once decided or expired (the first decision
     * stands). Resolves after the decision record is durable.
     */
    async decide(id: string, decision: string, options: { principal?: SessionPrincipal } = {}): Promise<Approval> {
      const view = await visible(id, options.principal);
      assertMayDecide(view, options.principal);
      if (typeof decision !== "string" || decision.trim() === "" || decision.length > MAX_DECISION_LENGTH) {
        throw new VcpError("INVALID_INPUT", `decision: must be a non-empty string of at most ${MAX_DECISION_LENGTH} characters (allow, allow once, allow always grant; anything else denies)`, { field: "decision", rule: "string" });
      }
      const token = randomUUID();
      const claim = await store.claim(id, token, DECIDING_MS);
      if (claim === "busy") throw new VcpError("APPROVAL_DECIDED", `approval '${id}' is being decided by another request; the first decision stands`, { approval_id: id, state: "pending", deciding: true });
      if (claim !== "ok") throw alreadyDecided(id, (await store.load(id)) ?? view);
      const granted = isGranting(decision);
      const settled: Approval = { ...view, state: granted ? "granted" : "denied", decision, decided_by: options.principal?.id ?? "embedding-application", decided_at: iso(deps.clock.wallNow()) };
      // Durable before visible (as a chain's records are before its answer): a decision the log
      // could not take is not made — the approval stays pending (or expires if its time ran out).
      try {
        await auditRecord("approval_decision", settled);
      } catch (err) {
        await store.release(id, token).catch(() => undefined);
        if (Date.parse(view.expires_at) <= deps.clock.wallNow()) await expireById(id, "timeout").catch(() => undefined);
        throw approvalAuditFailed(err, id);
      }
      const always = granted && decision.trim().toLowerCase() === ALLOW_ALWAYS ? allowAlwaysKey(view) : undefined;
      if (await store.settle(settled, settleOptions({ token, ...(always !== undefined ? { always } : {}) }))) return copyApproval(settled);
      // Settled first by something else (the runtime closed while the record was written): that stands.
      return (await store.load(id)) ?? view;
    },

    /** Resolves with the approval once it is decided or expired (at once if it already is). */
    async wait(id: string, options: { principal?: SessionPrincipal } = {}): Promise<Approval> {
      await start();
      const view = await visible(id, options.principal);
      if (view.state !== "pending") return view;
      return new Promise((resolve) => {
        const list = waiters.get(id) ?? [];
        list.push(resolve);
        waiters.set(id, list);
      });
    },

    /** `approval` events: `new`, `decided`, `expired`. Returns the unsubscribe function. */
    on(event: "approval", listener: (event: ApprovalEvent) => void): () => void {
      if (event !== "approval") throw new VcpError("INVALID_INPUT", `unknown approvals event '${String(event)}' (only "approval")`, { field: "event" });
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    /** Pending approvals now, and approvals kept for reading (pending and recently decided). */
    stats: () => store.stats(),

    /**
     * This process stops serving approvals. A runtime's own approvals expire with their defaults
     * (decided_by "shutdown", recorded while the audit log is open) and their waiters answer; a
     * deployment's stay pending for the other replicas, and waiters here answer with the pending one.
     */
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      if (sweeper !== undefined) clearInterval(sweeper);
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      if (store.holder === "runtime") {
        for (const view of await store.list()) {
          if (view.state !== "pending") continue;
          const out: Approval = { ...view, state: "expired", decision: view.default, decided_by: "shutdown", decided_at: iso(deps.clock.wallNow()) };
          if (!(await store.settle(out, settleOptions({ force: true })))) continue;
          await auditRecord("approval_decision", out).catch((err: unknown) => deps.logger?.error({ err, approval: out.id }, "audit: an approval expired at shutdown could not be recorded"));
        }
      }
      for (const id of [...waiters.keys()]) {
        const view = await store.load(id).catch(() => undefined);
        if (view !== undefined) wake(view);
      }
      await unsubscribe?.().catch(() => undefined);
      listeners.clear();
    },
  };
}

export type Approvals = ReturnType<typeof createApprovals>;

/**
 * `runtime.approvals` (PROFILES §3.4, §8.9): every Amplifier `ask_user` answer of `fireProfile` is a
 * pending approval that an operator, an `approver` of the session's owner, or the embedding
 * application decides. A client principal sees only approvals of its own sessions (another's is
 * APPROVAL_NOT_FOUND) and decides none (FORBIDDEN: its agent asked).
 */
export interface ApprovalsApi {
  list(query?: ApprovalQuery): Promise<Approval[]>;
  /** `full: true`: the whole prompt in `prompt` while the approval is pending (`prompt_truncated` then says whether even that is cut, past 65,536 characters). */
  get(id: string, options?: { principal?: Principal; full?: boolean }): Promise<Approval>;
  /** Granted for allow / allow once / allow always (any case); anything else denies. APPROVAL_DECIDED once settled; FORBIDDEN for a client. */
  decide(id: string, decision: string, options?: { principal?: Principal }): Promise<Approval>;
  /** Resolves once the approval is decided or expired. */
  wait(id: string, options?: { principal?: Principal }): Promise<Approval>;
  on(event: "approval", listener: (event: ApprovalEvent) => void): () => void;
}

/** The coordinator's public members only (not start/close/request). */
export function approvalsApi(approvals: Approvals): ApprovalsApi {
  return { list: approvals.list, get: approvals.get, decide: approvals.decide, wait: approvals.wait, on: approvals.on };
}
