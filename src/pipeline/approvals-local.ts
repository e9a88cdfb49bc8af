/**
 * Approvals kept in this process (`store: local`): the in-memory adapter of the approval store port
 * (approvals.ts {@link ApprovalStore}). Each method runs to its end without yielding, so each is one
 * atomic step as the port asks; events reach the subscribers synchronously.
 */
import { approvalSessionKey, copyApproval, type Approval, type ApprovalEvent, type ApprovalStore } from "./approvals.js";

/** Sessions with "allow always" grants remembered (oldest forgotten first): bounds memory, a forgotten grant only means the user is asked again. */
const MAX_ALLOW_ALWAYS_SESSIONS = 10_000;

interface Entry {
  view: Approval;
  /** The whole prompt while pending, when `view.prompt` is clipped. */
  fullPrompt?: string | undefined;
  /** The token of the decision being written (the approval stays pending until it is durable). */
  claim?: string | undefined;
}

/**
 * @example
 * ```ts
 * const approvals = createApprovals({ store: createLocalApprovalStore(), clock: systemClock, audit: () => undefined });
 * ```
 */
export function createLocalApprovalStore(): ApprovalStore {
  const entries = new Map<string, Entry>();
  /** Settled ids, oldest first: forgotten beyond `retainDecided`. */
  const decided: string[] = [];
  const pendingBySession = new Map<string, number>();
  /** Pending approvals per client principal (the embedding application's, owner null, are not counted). */
  const pendingByOwner = new Map<string, number>();
  let pending = 0;
  /** "allow always" per session (approvalSessionKey) → the allowAlwaysKey()s it granted. */
  const allowAlways = new Map<string, Set<string>>();
  const subscribers = new Set<(event: ApprovalEvent) => void>();

  function count(map: Map<string, number>, key: string, by: 1 | -1): void {
    const n = (map.get(key) ?? 0) + by;
    if (n <= 0) map.delete(key);
    else map.set(key, n);
  }

  function countPending(view: Approval, by: 1 | -1): void {
    pending += by;
    count(pendingBySession, approvalSessionKey(view), by);
    if (view.owner !== null) count(pendingByOwner, view.owner, by);
  }

  function retain(id: string, retainDecided: number): void {
    decided.push(id);
    while (decided.length > retainDecided) entries.delete(decided.shift()!);
  }

  function publish(event: ApprovalEvent): void {
    for (const subscriber of subscribers) subscriber(event);
  }

  return {
    holder: "runtime",

    async insert({ pending: view, granted, alwaysKey, fullPrompt, limits }) {
      const session = approvalSessionKey(view);
      if (allowAlways.get(session)?.has(alwaysKey) === true) {
        entries.set(granted.id, { view: copyApproval(granted) });
        retain(granted.id, limits.retainDecided);
        return { kind: "cached" };
      }
      const inSession = pendingBySession.get(session) ?? 0;
      if (inSession >= limits.maxPendingPerSession) return { kind: "limit", scope: "session", count: inSession };
      const ofOwner = view.owner === null ? 0 : (pendingByOwner.get(view.owner) ?? 0);
      if (view.owner !== null && ofOwner >= limits.maxPendingPerClient) return { kind: "limit", scope: "client", count: ofOwner };
      if (pending >= limits.maxPending) return { kind: "limit", scope: "runtime", count: pending };
      entries.set(view.id, { view: copyApproval(view), fullPrompt });
      countPending(view, 1);
      return { kind: "pending" };
    },

    async withdraw(view) {
      const entry = entries.get(view.id);
      if (entry === undefined || entry.view.state !== "pending") return;
      entries.delete(view.id);
      countPending(entry.view, -1);
    },

    async load(id) {
      const entry = entries.get(id);
      return entry === undefined ? undefined : copyApproval(entry.view);
    },

    async list() {
      return [...entries.values()].map((entry) => copyApproval(entry.view));
    },

    async fullPrompt(id) {
      return entries.get(id)?.fullPrompt;
    },

    async claim(id, token) {
      const entry = entries.get(id);
      if (entry === undefined) return "gone";
      if (entry.view.state !== "pending") return "settled";
      if (entry.claim !== undefined) return "busy";
      entry.claim = token;
      return "ok";
    },

    async release(id, token) {
      const entry = entries.get(id);
      if (entry?.claim === token) entry.claim = undefined;
    },

    async settle(settled, { token, force, always, retainDecided, maxAlways }) {
      const entry = entries.get(settled.id);
      if (entry === undefined || entry.view.state !== "pending") return false;
      if (force !== true && entry.claim !== token) return false;
      countPending(entry.view, -1);
      entry.view = copyApproval(settled);
      entry.claim = undefined;
      entry.fullPrompt = undefined;
      if (always !== undefined) {
        const session = approvalSessionKey(settled);
        let set = allowAlways.get(session);
        if (set === undefined) {
          if (allowAlways.size >= MAX_ALLOW_ALWAYS_SESSIONS) allowAlways.delete(allowAlways.keys().next().value!);
          allowAlways.set(session, (set = new Set()));
        }
        if (set.size < maxAlways) set.add(always);
      }
      retain(settled.id, retainDecided);
      publish({ type: settled.state === "expired" ? "expired" : "decided", approval: copyApproval(settled) });
      return true;
    },

    async publish(event) {
      publish(event);
    },

    async subscribe(listener) {
      subscribers.add(listener);
      return async () => {
        subscribers.delete(listener);
      };
    },

    async stats() {
      return { pending, retained: entries.size };
    },
  };
}
