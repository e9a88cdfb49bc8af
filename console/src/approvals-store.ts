/**
 * The approvals this tab knows, kept by one stream for the whole console (GET /v1/approvals/stream):
 * the nav badge and the page title count the pending ones on every page, and the Approvals page
 * shows and decides them. After a reconnect (a server restart) the server's list replaces ours: a
 * pending approval the server no longer has disappears, with a notice saying so.
 *
 * SECURITY: prompts, hooks and sessions are guest- or client-controlled; pages render them as text.
 */
import { api, ApiError, apiOptional, authHeaders, check } from "./api.js";
import { liveStream, type LiveStream, type StreamStateKind } from "./live-stream.js";

export interface Approval {
  id: string;
  session: string;
  owner?: string | null;
  profile?: string;
  event?: string;
  chain_id?: string | null;
  hook: string;
  prompt: string;
  prompt_truncated?: boolean;
  options: string[];
  default: "allow" | "deny";
  timeout_s?: number;
  created_at?: string;
  expires_at: string;
  state: "pending" | "granted" | "denied" | "expired";
  decision?: string;
  decided_by?: string;
  decided_at?: string;
  /** What the agent asked to do: JSON text of the event's tool and its input, redacted by the server (absent: none). */
  input?: string;
  /** `input` was cut by the server (at 16,384 characters). */
  input_truncated?: boolean;
}

/** Decided approvals kept for the table, newest first. */
const MAX_KEPT = 200;

export interface ApprovalsSnapshot {
  approvals: ReadonlyMap<string, Approval>;
  pending: Approval[];
  state: { text: string; kind: StreamStateKind };
  /** The server has no approval routes (an older server): nothing to show or count. */
  unavailable: boolean;
  /** Approvals that vanished from the server (restart) or were decided elsewhere, as sentences. */
  notices: string[];
}

type Listener = (snapshot: ApprovalsSnapshot) => void;

export interface ApprovalsStore {
  snapshot(): ApprovalsSnapshot;
  subscribe(listener: Listener): () => void;
  /** Post the decision; a 404/409 refreshes the approval (gone or decided elsewhere) and rethrows. */
  decide(id: string, decision: string): Promise<Approval>;
  dismissNotice(index: number): void;
  stop(): void;
}

/** Oldest first: the one waiting longest is decided first. */
export function pendingOf(approvals: Iterable<Approval>): Approval[] {
  return [...approvals].filter((a) => a.state === "pending").sort((a, b) => (a.created_at ?? "").localeCompare(b.created_at ?? ""));
}

export function goneNotice(a: Approval): string {
  return `The approval asked by ${a.hook} (session ${a.session || "–"}) is no longer pending on the server — it restarted or forgot it. Nothing was decided here; the agent got the server's answer.`;
}

export function createApprovalsStore(): ApprovalsStore {
  const approvals = new Map<string, Approval>();
  const listeners = new Set<Listener>();
  const notices: string[] = [];
  let state: { text: string; kind: StreamStateKind } = { text: "Connecting…", kind: "warn" };
  let unavailable = false;

  const snapshot = (): ApprovalsSnapshot => ({ approvals, pending: pendingOf(approvals.values()), state, unavailable, notices: [...notices] });
  const emit = () => {
    const s = snapshot();
    for (const l of listeners) l(s);
  };

  function upsert(a: Approval): void {
    approvals.delete(a.id);
    approvals.set(a.id, a);
    while (approvals.size > MAX_KEPT) {
      const oldest = [...approvals.values()].find((x) => x.state !== "pending");
      if (oldest === undefined) break;
      approvals.delete(oldest.id);
    }
  }

  /** The server's list is the truth: a pending approval it does not have is gone (restart). */
  function replaceAll(listed: Approval[]): void {
    const fresh = new Map(listed.map((a) => [a.id, a]));
    for (const old of approvals.values()) if (old.state === "pending" && !fresh.has(old.id)) notices.push(goneNotice(old));
    approvals.clear();
    for (const a of listed) upsert(a);
  }

  const stream: LiveStream = liveStream({
    open: async (signal) => {
      const res = await fetch("/v1/approvals/stream", { headers: authHeaders({ accept: "text/event-stream" }), signal, cache: "no-store" });
      if (res.status === 404) {
        unavailable = true;
        state = { text: "Not available on this server", kind: "warn" };
        emit();
        return undefined;
      }
      await check(res);
      replaceAll((await api<{ approvals: Approval[] }>("GET", "/v1/approvals")).approvals);
      emit();
      return res;
    },
    onEvent: (event) => {
      if (event.event === "hello") state = { text: "Live · new approvals appear as a dialog", kind: "ok" };
      else if (event.event === "new" || event.event === "decided" || event.event === "expired") upsert(JSON.parse(event.data) as Approval);
      else return;
      emit();
    },
    setState: (text, kind) => {
      state = { text, kind };
      emit();
    },
  });

  return {
    snapshot,
    subscribe(listener) {
      listeners.add(listener);
      listener(snapshot());
      return () => listeners.delete(listener);
    },
    async decide(id, decision) {
      try {
        const decided = await api<Approval>("POST", `/v1/approvals/${encodeURIComponent(id)}`, JSON.stringify({ decision }), "application/json");
        upsert(decided);
        emit();
        return decided;
      } catch (err) {
        // Decided elsewhere or expired (409), or gone (404, a restarted server): show what the server has now.
        if (err instanceof ApiError && (err.status === 409 || err.status === 404)) {
          const found = await apiOptional<Approval>(`/v1/approvals/${encodeURIComponent(id)}`).catch(() => undefined);
          const old = approvals.get(id);
          if (found !== undefined && "value" in found) upsert(found.value);
          else if (found !== undefined && "missing" in found && old !== undefined) {
            approvals.delete(id);
            notices.push(goneNotice(old));
          }
          emit();
        }
        throw err;
      }
    },
    dismissNotice(index) {
      notices.splice(index, 1);
      emit();
    },
    stop() {
      stream.stop();
      listeners.clear();
    },
  };
}
