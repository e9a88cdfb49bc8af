/**
 * Approvals (Amplifier `ask_user`, PROFILES §3.4): pending approvals arrive on GET /v1/approvals/stream
 * (server-sent events read with fetch, so the token stays in the Authorization header) and appear one
 * at a time as a dialog with the hook's prompt, its options and a countdown to the timeout; the chosen
 * option is posted back (POST /v1/approvals/{id}). Below, the approvals this server keeps, newest first.
 *
 * SECURITY: the prompt, options, hook and session are guest- or client-controlled: every one is a text
 * node (dom.ts `h`), never markup.
 */
import { api, apiOptional, ApiError, authHeaders, check, errorText } from "../api.js";
import { fmtClock } from "../format.js";
import { h, replace } from "../dom.js";
import { liveStream } from "../sse.js";

export interface Approval {
  id: string;
  session: string;
  owner?: string | null;
  profile?: string;
  event?: string;
  hook: string;
  prompt: string;
  options: string[];
  default: "allow" | "deny";
  timeout_s?: number;
  created_at?: string;
  expires_at: string;
  state: "pending" | "granted" | "denied" | "expired";
  decision?: string;
  decided_by?: string;
  decided_at?: string;
}

const MAX_ROWS = 200;
const GRANTING = new Set(["allow", "allow once", "allow always"]);

/** "4:59", "0:07": whole seconds left until `expiresAt`, never negative. */
export function countdown(expiresAt: string, now: number): string {
  const left = Math.max(0, Math.ceil((Date.parse(expiresAt) - now) / 1000));
  return `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
}

export function mountApprovals(root: HTMLElement): () => void {
  const state = h("p", { class: "stream-state", id: "approvals-state", role: "status", "aria-live": "polite" }, "Connecting…");
  const dialogSlot = h("div", { id: "approval-dialog-slot" });
  const tbody = h("tbody", { id: "approvals-rows" });
  const table = h(
    "div",
    { class: "table-wrap" },
    h("table", { class: "approvals-table" }, h("thead", {}, h("tr", {}, ...["Requested", "Session", "Hook", "Prompt", "State", "Decided by"].map((t) => h("th", { scope: "col" }, t)))), tbody),
  );
  const body = h("div", { id: "approvals-body" }, h("h2", {}, "Recent approvals"), table);
  root.append(h("h1", {}, "Approvals"), h("p", { class: "hint" }, "Amplifier hooks that answer ask_user wait here for a decision; at the timeout the hook's default applies."), state, dialogSlot, body);

  const approvals = new Map<string, Approval>();
  let shown: { id: string; dialog: HTMLDialogElement; clock: HTMLElement; error: HTMLElement } | undefined;
  const ticker = window.setInterval(tick, 1000);

  function setState(text: string, kind: "ok" | "warn" | "bad"): void {
    state.textContent = text;
    state.className = `stream-state ${kind}`;
  }

  function renderRows(): void {
    const list = [...approvals.values()].sort((a, b) => (b.created_at ?? "").localeCompare(a.created_at ?? "")).slice(0, MAX_ROWS);
    if (list.length === 0) {
      replace(tbody, h("tr", {}, h("td", { colspan: 6, id: "no-approvals" }, "No approvals yet.")));
      return;
    }
    replace(
      tbody,
      ...list.map((a) =>
        h(
          "tr",
          { "data-approval": a.id, "data-state": a.state },
          h("td", {}, a.created_at ? h("time", { datetime: a.created_at }, fmtClock(a.created_at)) : "–"),
          h("td", { class: "ellipsis" }, a.session),
          h("td", {}, a.hook),
          h("td", { class: "guest" }, a.prompt),
          h("td", {}, h("span", { class: `chip ${a.state === "granted" ? "ok" : a.state === "pending" ? "" : "bad"}` }, a.state), a.decision ? ` (${a.decision})` : ""),
          h("td", {}, a.decided_by ?? "–"),
        ),
      ),
    );
  }

  /** The oldest pending approval is the one in the dialog; the next one follows when it is decided. */
  function showNext(): void {
    const next = [...approvals.values()].filter((a) => a.state === "pending").sort((a, b) => (a.created_at ?? "").localeCompare(b.created_at ?? ""))[0];
    if (shown !== undefined && shown.id === next?.id) return;
    if (shown !== undefined) {
      shown.dialog.close();
      shown.dialog.remove();
      shown = undefined;
    }
    if (next === undefined) return;
    const clock = h("strong", { class: "countdown", id: "approval-countdown" }, countdown(next.expires_at, Date.now()));
    const error = h("p", { class: "error", role: "alert", id: "approval-error" });
    const options = next.options.length > 0 ? next.options : ["Allow", "Deny"];
    const buttons = options.map((option) =>
      h("button", { type: "button", class: GRANTING.has(option.trim().toLowerCase()) ? "grant" : "danger", "data-option": option, onclick: () => void decide(next.id, option, buttons) }, option),
    );
    const dialog = h(
      "dialog",
      { class: "approval-dialog", id: "approval-dialog", "aria-labelledby": "approval-title", "aria-describedby": "approval-prompt", "data-approval": next.id },
      h("h2", { id: "approval-title" }, "Approval requested"),
      h("p", { class: "guest prompt", id: "approval-prompt" }, next.prompt),
      h(
        "dl",
        { class: "facts" },
        h("dt", {}, "Hook"),
        h("dd", { id: "approval-hook" }, next.hook),
        h("dt", {}, "Session"),
        h("dd", {}, next.session, next.owner ? ` (owner ${next.owner})` : ""),
        h("dt", {}, "Event"),
        h("dd", {}, `${next.profile ?? "amplifier"} ${next.event ?? ""}`),
        h("dt", {}, "Times out in"),
        h("dd", {}, clock, ` — then the default applies: ${next.default}`),
      ),
      h("div", { class: "actions", role: "group", "aria-label": "Decision" }, ...buttons),
      error,
    );
    dialogSlot.append(dialog);
    dialog.show();
    buttons[0]?.focus();
    shown = { id: next.id, dialog, clock, error };
  }

  async function decide(id: string, decision: string, buttons: HTMLButtonElement[]): Promise<void> {
    for (const b of buttons) b.disabled = true;
    try {
      const decided = await api<Approval>("POST", `/v1/approvals/${encodeURIComponent(id)}`, JSON.stringify({ decision }), "application/json");
      upsert(decided);
    } catch (err) {
      if (shown?.id === id) shown.error.textContent = errorText(err);
      for (const b of buttons) b.disabled = false;
      // Decided elsewhere or expired (409): the stream brings the final state; fetch it in case it did not.
      if (err instanceof ApiError && (err.status === 409 || err.status === 404)) {
        const found = await apiOptional<Approval>(`/v1/approvals/${encodeURIComponent(id)}`).catch(() => undefined);
        if (found && "value" in found) upsert(found.value);
        else if (found && "missing" in found) approvals.delete(id);
        showNext();
        renderRows();
      }
    }
  }

  function upsert(a: Approval): void {
    approvals.set(a.id, a);
    while (approvals.size > MAX_ROWS) approvals.delete(approvals.keys().next().value!);
    renderRows();
    showNext();
  }

  function tick(): void {
    if (shown === undefined) return;
    const a = approvals.get(shown.id);
    if (a === undefined) return;
    shown.clock.textContent = countdown(a.expires_at, Date.now());
  }

  const stream = liveStream({
    open: async (signal) => {
      const res = await fetch("/v1/approvals/stream", { headers: authHeaders({ accept: "text/event-stream" }), signal, cache: "no-store" });
      if (res.status === 404) {
        // A server without the approval routes (an older one): say so instead of retrying forever.
        replace(body, h("div", { class: "empty", id: "no-approvals" }, h("p", {}, h("strong", {}, "Approvals arrive with the Amplifier profile."), " This server has no ", h("code", {}, "GET /v1/approvals"), " route.")));
        setState("Not available on this server", "warn");
        return undefined;
      }
      await check(res);
      // What this server still keeps (decided ones too); the stream then sends every pending one.
      const listed = await api<{ approvals: Approval[] }>("GET", "/v1/approvals");
      for (const a of listed.approvals) approvals.set(a.id, a);
      renderRows();
      showNext();
      return res;
    },
    onEvent: (event) => {
      if (event.event === "hello") setState("Live · new approvals appear as a dialog", "ok");
      else if (event.event === "new" || event.event === "decided" || event.event === "expired") upsert(JSON.parse(event.data) as Approval);
    },
    setState,
  });

  renderRows();
  return () => {
    stream.stop();
    window.clearInterval(ticker);
    shown?.dialog.close();
  };
}
