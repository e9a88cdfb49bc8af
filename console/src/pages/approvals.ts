/**
 * Approvals (Amplifier `ask_user`, PROFILES §3.4): the console-wide approvals store (one stream per
 * tab, approvals-store.ts) brings every pending approval; the oldest is shown as a dialog with the
 * hook's prompt, what the agent asked to do, its options and a countdown to the timeout, and focus on
 * the hook's default decision. The chosen option is posted back (POST /v1/approvals/{id}). Below,
 * the approvals this server keeps, newest first.
 *
 * SECURITY: the prompt, input, options, hook and session are guest- or client-controlled: every one
 * is a text node (dom.ts `h`), never markup.
 */
import { errorText } from "../api.js";
import type { Approval, ApprovalsSnapshot } from "../approvals-store.js";
import { fmtClock } from "../format.js";
import { h, jsonText, replace, scrollRegion } from "../dom.js";
import type { PageContext } from "../route.js";
import { arrowKeyRows } from "../rows.js";

const GRANTING = new Set(["allow", "allow once", "allow always", "yes", "approve"]);

/** "4:59", "0:07": whole seconds left until `expiresAt`, never negative. */
export function countdown(expiresAt: string, now: number): string {
  const left = Math.max(0, Math.ceil((Date.parse(expiresAt) - now) / 1000));
  return `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
}

/** Whether an option grants (allow) or refuses (deny). */
export function grants(option: string): boolean {
  return GRANTING.has(option.trim().toLowerCase());
}

/** The option that carries the hook's default: the first granting one for `allow`, the first refusing one for `deny`. */
export function defaultOption(options: readonly string[], dflt: "allow" | "deny"): number {
  const i = options.findIndex((o) => grants(o) === (dflt === "allow"));
  return i >= 0 ? i : 0;
}

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
      next.input !== undefined
        ? h("div", {}, h("h3", {}, "What the agent asked to do"), h("pre", { class: "guest annotations", id: "approval-input", tabindex: "0" }, jsonText(next.input, 16_000)))
        : h("p", { class: "hint", id: "approval-input" }, "This server does not send the request's input with an approval: the prompt above is all the hook said."),
      h("div", { class: "actions", role: "group", "aria-label": "Decision" }, ...buttons),
      error,
    );
    dialogSlot.append(dialog);
    dialog.show();
    buttons[dflt]?.focus();
    shown = { id: next.id, dialog, clock, error, buttons };
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

const HEADS = ["Requested", "Session", "Hook", "Prompt", "State", "Decided by"];
