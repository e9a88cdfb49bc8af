/**
 * Approvals (Amplifier `ask_user`, PROFILES §3.4): the console-wide approvals store (one stream per
 * tab, approvals-store.ts) brings every pending approval; the oldest is shown as a dialog with the
 * hook's prompt, what the agent asked to do (the chain's decision record), its options and a countdown to the timeout, and focus on
 * the hook's default decision. The chosen option is posted back (POST /v1/approvals/{id}). Below,
 * the approvals this server keeps, newest first.
 *
 * SECURITY: the prompt, input, options, hook and session are guest- or client-controlled: every one
 * is a text node (dom.ts `h`), never markup.
 */
import { api, errorText } from "../api.js";
import type { Approval, ApprovalsSnapshot } from "../approvals-store.js";
import type { DecisionRecord } from "../decision.js";
import { fmtClock } from "../format.js";
import { h, jsonText, replace, scrollRegion } from "../dom.js";
import type { PageContext } from "../page.js";
import { arrowKeyRows } from "../rows.js";
import { countdown, defaultOption, grants } from "../approval-options.js";

export function mountApprovals(root: HTMLElement, ctx: PageContext): () => void {
  const store = ctx.approvals;
  const state = h("p", { class: "stream-state", id: "approvals-state", role: "status", "aria-live": "polite" }, "Connecting…");
  const notices = h("div", { id: "approval-notices", "aria-live": "polite" });
  const dialogSlot = h("div", { id: "approval-dialog-slot" });
  const tbody = h("tbody", { id: "approvals-rows" });
  const table = scrollRegion(
    "Recent approvals",
    {},
    h("table", { class: "approvals-table stack" }, h("thead", {}, h("tr", {}, ...HEADS.map((t) => h("th", { scope: "col" }, t)))), tbody),
  );
  const body = h("div", { id: "approvals-body" }, h("h2", {}, "Recent approvals"), table);
  root.append(h("h1", {}, "Approvals"), h("p", { class: "hint" }, "Amplifier hooks that answer ask_user wait here for a decision; at the timeout the hook's default applies."), state, notices, dialogSlot, body);
  arrowKeyRows(tbody);

  let shown: { id: string; dialog: HTMLDialogElement; clock: HTMLElement; error: HTMLElement; buttons: HTMLButtonElement[] } | undefined;
  let last: ApprovalsSnapshot = store.snapshot();
  const ticker = window.setInterval(tick, 1000);

  function renderRows(s: ApprovalsSnapshot): void {
    if (s.unavailable) {
      replace(body, h("div", { class: "empty", id: "no-approvals" }, h("p", {}, h("strong", {}, "Approvals arrive with the Amplifier profile."), " This server has no ", h("code", {}, "GET /v1/approvals"), " route.")));
      return;
    }
    const list = [...s.approvals.values()].sort((a, b) => (b.created_at ?? "").localeCompare(a.created_at ?? ""));
    if (list.length === 0) {
      replace(tbody, h("tr", {}, h("td", { colspan: HEADS.length, id: "no-approvals" }, "No approvals yet.")));
      return;
    }
    replace(
      tbody,
      ...list.map((a) =>
        h(
          "tr",
          { "data-approval": a.id, "data-state": a.state, tabindex: "-1" },
          h("td", { "data-label": "Requested" }, a.created_at ? h("time", { datetime: a.created_at }, fmtClock(a.created_at)) : "–"),
          h("td", { "data-label": "Session", class: "ellipsis" }, a.session),
          h("td", { "data-label": "Hook" }, a.hook),
          h("td", { "data-label": "Prompt", class: "guest" }, a.prompt),
          h("td", { "data-label": "State" }, h("span", { class: `chip ${a.state === "granted" ? "ok" : a.state === "pending" ? "warn" : "bad"}` }, a.state), a.decision ? ` (${a.decision})` : ""),
          h("td", { "data-label": "Decided by" }, a.decided_by ?? "–"),
        ),
      ),
    );
  }

  function renderNotices(s: ApprovalsSnapshot): void {
    replace(
      notices,
      ...s.notices.map((text, i) =>
        h("p", { class: "message warn notice", role: "status" }, text, " ", h("button", { type: "button", class: "link", onclick: () => store.dismissNotice(i) }, "Dismiss")),
      ),
    );
  }

  /** The oldest pending approval is the one in the dialog; the next one follows when it is decided. */
  function showNext(s: ApprovalsSnapshot): void {
    const next = s.pending[0];
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
    const dflt = defaultOption(options, next.default);
    const buttons: HTMLButtonElement[] = options.map((option, i) =>
      h(
        "button",
        { type: "button", class: grants(option) ? "grant" : "danger", "data-option": option, "data-default": i === dflt ? "true" : null, onclick: () => void decide(next, option) },
        option,
      ),
    );
    const request = h("div", { id: "approval-input", "aria-live": "polite" }, h("p", { class: "hint" }, "Looking up what the agent asked to do…"));
    void showRequest(next, request);
    const dialog = h(
      "dialog",
      { class: "approval-dialog", id: "approval-dialog", "aria-labelledby": "approval-title", "aria-describedby": "approval-prompt", "data-approval": next.id },
      h("h2", { id: "approval-title" }, "Approval requested"),
      h("p", { class: "guest prompt", id: "approval-prompt" }, next.prompt, next.prompt_truncated ? " …(shortened by the server)" : ""),
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
      request,
      h("div", { class: "actions", role: "group", "aria-label": "Decision" }, ...buttons),
      error,
    );
    dialogSlot.append(dialog);
    dialog.show();
    buttons[dflt]?.focus();
    shown = { id: next.id, dialog, clock, error, buttons };
  }

  /**
   * What the agent asked to do: the approval's own `input` (JSON text, redacted and bounded by the
   * server) when it sends one, else the
   * decision record of the chain that asked (GET /v1/decisions, by session, matched by chain id):
   * its subject — tool, command or path — bounded and redacted by the server like the audit.
   */
  async function showRequest(a: Approval, slot: HTMLElement): Promise<void> {
    const heading = h("h3", {}, "What the agent asked to do");
    if (typeof a.input === "string") {
      // SECURITY: guest-controlled text: a text node in a <pre>, never markup. Focusable so a
      // keyboard user can scroll a long input; labelled for screen readers.
      replace(
        slot,
        heading,
        h("pre", { class: "guest annotations approval-input", id: "approval-input-text", tabindex: "0", role: "region", "aria-label": "Tool input" }, inputText(a.input, a.input_truncated === true)),
      );
      return;
    }
    let found: DecisionRecord | undefined;
    if (a.chain_id) {
      const q = new URLSearchParams({ limit: "100", since: new Date(Date.parse(a.created_at ?? a.expires_at) - 60 * 60_000).toISOString() });
      if (a.session) q.set("session", a.session);
      found = await api<{ decisions: DecisionRecord[] }>("GET", `/v1/decisions?${q}`).then((r) => r.decisions.find((d) => d.chain_id === a.chain_id), () => undefined);
    }
    if (found === undefined) {
      replace(slot, h("p", { class: "hint" }, "The server has no record of the request yet: the prompt above is all the hook said."));
      return;
    }
    const s = found.subject;
    replace(
      slot,
      heading,
      h(
        "dl",
        { class: "facts" },
        h("dt", {}, "Request"),
        h("dd", { class: "guest" }, s.summary),
        ...(s.tool ? [h("dt", {}, "Tool"), h("dd", { class: "guest" }, s.tool)] : []),
        ...(s.command ? [h("dt", {}, "Command"), h("dd", {}, h("code", { class: "guest" }, s.command))] : []),
        ...(s.path ? [h("dt", {}, "Path"), h("dd", {}, h("code", { class: "guest" }, s.path))] : []),
      ),
    );
  }

  async function decide(a: Approval, decision: string): Promise<void> {
    const current = shown;
    for (const b of current?.buttons ?? []) b.disabled = true;
    try {
      await store.decide(a.id, decision);
    } catch (err) {
      if (shown?.id === a.id) {
        shown.error.textContent = errorText(err);
        for (const b of shown.buttons) b.disabled = false;
      }
    }
  }

  function tick(): void {
    if (shown === undefined) return;
    const a = last.approvals.get(shown.id);
    if (a !== undefined) shown.clock.textContent = countdown(a.expires_at, Date.now());
  }

  const unsubscribe = store.subscribe((s) => {
    last = s;
    state.textContent = s.state.text;
    state.className = `stream-state ${s.state.kind}`;
    renderNotices(s);
    renderRows(s);
    showNext(s);
  });

  return () => {
    unsubscribe();
    window.clearInterval(ticker);
    shown?.dialog.close();
  };
}

/** The input as the approver reads it: pretty JSON when it is whole, else the server's text as cut. */
function inputText(input: string, truncated: boolean): string {
  if (truncated) return `${input}… (shortened by the server)`;
  try {
    return jsonText(JSON.parse(input) as unknown, 20_000);
  } catch {
    return input;
  }
}

const HEADS = ["Requested", "Session", "Hook", "Prompt", "State", "Decided by"];
