/**
 * Live decisions: chains as they complete, from GET /v1/decisions/stream (server-sent events read
 * with fetch, so the token stays in the Authorization header). The server samples above its
 * per-client rate and says how many it sampled out or dropped; the page renders in batches at most
 * four times a second and keeps the newest MAX_ROWS rows in a fixed-height list, so neither 500
 * decisions/s nor a burst moves the layout.
 */
import { authHeaders, check } from "../api.js";
import { fmtClock } from "../format.js";
import { fmtMs, h, jsonText, replace } from "../dom.js";
import { liveStream } from "../live-stream.js";

export interface Decision {
  chain_id: string;
  /** A VCP chain's hook type; absent for an event-profile chain, which has `profile` and `event`. */
  type?: string;
  profile?: string;
  event?: string;
  ts: string;
  session_id: string;
  owner?: string;
  status: "completed" | "aborted";
  reason: string | null;
  aborted_by: string | null;
  cascade_failure: boolean;
  duration_ms: number;
  hooks: Array<{ hook: string; bundle: string; scope: string; status: string; outcome: string; duration_ms: number; reason?: string; error?: string; annotations?: unknown; modification?: unknown }>;
}

/** What the row calls a chain: its VCP hook type, or "profile · event" for an event-profile chain. */
function chainKind(d: Decision): string {
  return d.profile !== undefined ? `${d.profile} · ${d.event ?? ""}` : (d.type ?? "");
}

const MAX_ROWS = 200;
const FLUSH_MS = 250;
const OUTCOMES = ["ok", "error", "timeout", "crashed", "invalid_result", "integrity_rejected", "skipped_predicate", "skipped_disabled", "skipped_deadline", "aborted"];

export function mountDecisions(root: HTMLElement): () => void {
  const session = h("input", { id: "f-session", name: "session", type: "text", autocomplete: "off" });
  const bundle = h("input", { id: "f-bundle", name: "bundle", type: "text", autocomplete: "off" });
  const outcome = h("select", { id: "f-outcome", name: "outcome" }, h("option", { value: "" }, "any"), ...OUTCOMES.map((o) => h("option", { value: o }, o)));
  const form = h(
    "form",
    { class: "filters", "aria-label": "Decision filters" },
    h("label", { for: "f-session" }, "Session"),
    session,
    h("label", { for: "f-bundle" }, "Bundle"),
    bundle,
    h("label", { for: "f-outcome" }, "Outcome"),
    outcome,
    h("button", { type: "submit" }, "Apply"),
  );
  const pause = h("button", { type: "button", "aria-pressed": "false" }, "Pause");
  const clear = h("button", { type: "button" }, "Clear");
  const state = h("p", { class: "stream-state", id: "stream-state", role: "status", "aria-live": "polite" }, "Connecting…");
  const counters = h("p", { class: "stream-counters", id: "stream-counters" }, "0 received · 0 sampled out · 0 dropped");
  const tbody = h("tbody", { id: "decisions-body" });
  const list = h(
    "div",
    { class: "decisions", id: "decisions", tabindex: "0", "aria-label": "Decisions, newest first" },
    h(
      "table",
      {},
      h("thead", {}, h("tr", {}, ...["Time", "Type", "Session", "Result", "Hooks", "Duration"].map((t) => h("th", { scope: "col" }, t)))),
      tbody,
    ),
  );
  const trace = h("section", { class: "trace", id: "trace", "aria-label": "Chain trace", tabindex: "-1" }, h("p", { class: "hint" }, "Select a chain to see its trace."));
  root.append(h("h1", {}, "Live decisions"), form, h("div", { class: "stream-bar" }, state, counters, h("div", { class: "actions" }, pause, clear)), h("div", { class: "decisions-layout" }, list, trace));

  let received = 0;
  let sampledOut = 0;
  let dropped = 0;
  let paused = false;
  let pending: Decision[] = [];
  let flushTimer: number | undefined;
  const byId = new Map<string, Decision>();

  const filter = () => ({ session: session.value.trim(), bundle: bundle.value.trim(), outcome: outcome.value });
  const matches = (d: Decision): boolean => {
    const f = filter();
    if (f.session && d.session_id !== f.session) return false;
    if (f.bundle && !d.hooks.some((x) => x.bundle === f.bundle)) return false;
    if (f.outcome && d.status !== f.outcome && !d.hooks.some((x) => x.outcome === f.outcome)) return false;
    return true;
  };

  const showCounters = () => {
    counters.textContent = `${received} received · ${sampledOut} sampled out by the server · ${dropped} dropped`;
  };

  function flush(): void {
    flushTimer = undefined;
    if (paused || pending.length === 0) return;
    const batch = pending.slice(-MAX_ROWS);
    pending = [];
    const rows = batch.reverse().map(row);
    tbody.prepend(...rows);
    while (tbody.rows.length > MAX_ROWS) {
      const last = tbody.rows[tbody.rows.length - 1]!;
      byId.delete(last.dataset.chain ?? "");
      last.remove();
    }
  }

  function row(d: Decision): HTMLTableRowElement {
    byId.set(d.chain_id, d);
    const bad = d.hooks.filter((x) => x.outcome !== "ok" && !x.outcome.startsWith("skipped"));
    const tr = h(
      "tr",
      { tabindex: "0", "data-chain": d.chain_id, class: d.status === "aborted" ? "aborted" : bad.length ? "failed" : "" },
      h("td", {}, h("time", { datetime: d.ts }, fmtClock(d.ts))),
      h("td", {}, chainKind(d)),
      h("td", { class: "ellipsis" }, d.session_id),
      h("td", {}, h("span", { class: `chip ${d.status === "aborted" ? "bad" : "ok"}` }, d.status)),
      h("td", { class: "ellipsis" }, d.hooks.map((x) => `${x.hook}:${x.outcome}`).join(" ")),
      h("td", { class: "num" }, fmtMs(d.duration_ms)),
    );
    const open = () => showTrace(d);
    tr.addEventListener("click", open);
    tr.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        open();
      }
    });
    return tr;
  }

  function showTrace(d: Decision): void {
    for (const tr of tbody.querySelectorAll("tr[aria-current]")) tr.removeAttribute("aria-current");
    tbody.querySelector(`tr[data-chain="${CSS.escape(d.chain_id)}"]`)?.setAttribute("aria-current", "true");
    replace(
      trace,
      h("h2", {}, `${chainKind(d)} chain`),
      h(
        "dl",
        { class: "facts" },
        h("dt", {}, "Chain"),
        h("dd", {}, h("code", {}, d.chain_id)),
        h("dt", {}, "Session"),
        h("dd", {}, d.session_id, d.owner ? ` (owner ${d.owner})` : ""),
        h("dt", {}, "Result"),
        h("dd", {}, d.status, d.aborted_by ? ` by ${d.aborted_by}` : "", d.reason ? ` — ${d.reason}` : ""),
        h("dt", {}, "Duration"),
        h("dd", {}, fmtMs(d.duration_ms), d.cascade_failure ? " · cascading failure" : ""),
      ),
      h(
        "ol",
        { class: "hooks" },
        ...d.hooks.map((x) =>
          h(
            "li",
            { class: `hook ${x.outcome}` },
            h("div", { class: "hook-head" }, h("strong", { class: "hook-name" }, x.hook), ` ${x.bundle} · ${x.scope} · `, h("span", { class: `chip ${x.outcome === "ok" ? "ok" : x.outcome.startsWith("skipped") ? "" : "bad"}` }, `${x.status} / ${x.outcome}`), ` · ${fmtMs(x.duration_ms)}`),
            x.reason ? h("p", { class: "reason" }, "Reason: ", h("span", { class: "guest" }, x.reason)) : null,
            x.error ? h("p", { class: "reason" }, "Error: ", h("span", { class: "guest" }, x.error)) : null,
            x.annotations !== undefined ? h("div", {}, h("h3", {}, "Annotations"), h("pre", { class: "guest annotations" }, jsonText(x.annotations))) : null,
            Array.isArray(x.modification) && x.modification.length > 0 ? h("div", {}, h("h3", {}, "Modification"), diffView(x.modification)) : null,
          ),
        ),
      ),
    );
    trace.focus({ preventScroll: true });
  }

  function state_(text: string, kind: "ok" | "warn" | "bad"): void {
    state.textContent = text;
    state.className = `stream-state ${kind}`;
  }

  const stream = liveStream({
    open: (signal) => {
      const f = filter();
      const query = new URLSearchParams();
      if (f.session) query.set("session", f.session);
      if (f.bundle) query.set("bundle", f.bundle);
      if (f.outcome) query.set("outcome", f.outcome);
      const q = query.toString();
      return fetch(`/v1/decisions/stream${q ? `?${q}` : ""}`, { headers: authHeaders({ accept: "text/event-stream" }), signal, cache: "no-store" }).then(check);
    },
    onEvent: (event) => {
      if (event.event === "hello") {
        const hello = JSON.parse(event.data) as { max_events_per_second: number };
        state_(`Live · at most ${hello.max_events_per_second} chains/s shown; the server samples above that`, "ok");
      } else if (event.event === "stats") {
        const s = JSON.parse(event.data) as { sampled_out: number; dropped: number };
        sampledOut = s.sampled_out;
        dropped = s.dropped;
      } else if (event.event === "decision") {
        received++;
        const d = JSON.parse(event.data) as Decision;
        if (!matches(d)) return;
        pending.push(d);
        if (pending.length > MAX_ROWS) pending.splice(0, pending.length - MAX_ROWS);
        flushTimer ??= window.setTimeout(flush, FLUSH_MS);
      }
    },
    afterChunk: showCounters,
    setState: state_,
  });

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    tbody.replaceChildren();
    byId.clear();
    stream.restart();
  });
  pause.addEventListener("click", () => {
    paused = !paused;
    pause.setAttribute("aria-pressed", String(paused));
    pause.textContent = paused ? "Resume" : "Pause";
    if (!paused) flush();
  });
  clear.addEventListener("click", () => {
    tbody.replaceChildren();
    byId.clear();
    pending = [];
  });

  return () => {
    stream.stop();
    window.clearTimeout(flushTimer);
  };
}

/** An RFC 6902 diff as lines of text: `replace /context/note: "[email]"`. */
function diffView(ops: unknown[]): HTMLElement {
  return h(
    "ul",
    { class: "diff" },
    ...ops.map((raw) => {
      const op = raw as { op?: string; path?: string; from?: string; value?: unknown };
      const cls = op.op === "add" ? "add" : op.op === "remove" ? "remove" : "change";
      const sign = op.op === "add" ? "+" : op.op === "remove" ? "−" : "~";
      return h(
        "li",
        { class: cls },
        h("span", { class: "sign", "aria-hidden": "true" }, sign),
        ` ${op.op ?? "?"} `,
        h("code", {}, op.path ?? ""),
        op.from !== undefined ? ` from ${op.from}` : "",
        op.value !== undefined ? h("span", { class: "guest" }, `: ${jsonText(op.value, 600)}`) : "",
      );
    }),
  );
}
