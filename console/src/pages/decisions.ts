/**
 * Decisions: "what was blocked, and why?" History (GET /v1/decisions, newest first, page by page) and
 * live chains (GET /v1/decisions/stream, server-sent events read with fetch so the token stays in the
 * Authorization header) in one list, filtered by time range, outcome, profile, bundle, hook, session
 * and subject. Each row shows what was decided about and, when blocked or failed, why; a row opens
 * the chain's detail (per-hook outcomes, timings, which hook changed which field). The filters and
 * the open chain live in the URL, so a link shows the same thing; the filtered rows export as JSON lines.
 *
 * SECURITY: subjects, reasons, annotations and diffs are guest- or client-controlled: text nodes only.
 */
import { api, ApiError, authHeaders, check, errorText } from "../api.js";
import {
  apiQuery,
  chainLabel,
  filtersFromQuery,
  hookFailed,
  OUTCOMES,
  queryOfFilters,
  RANGE_LABELS,
  recordMatches,
  recordOfStreamEvent,
  toJsonLines,
  type DecisionFilters,
  type DecisionRecord,
  type Range,
  type StreamEvent,
} from "../decision.js";
import { fmtClock, fmtTime } from "../format.js";
import { diffView } from "../diff-view.js";
import { fmtMs, h, jsonText, replace, shortDigest } from "../dom.js";
import { liveStream } from "../live-stream.js";
import type { PageContext } from "../page.js";
import { arrowKeyRows } from "../rows.js";

/** Rows kept in the list (history pages and live rows together). */
const MAX_ROWS = 500;
const PAGE = 100;
/** The export pages through the server's answers up to this many records. */
const MAX_EXPORT = 10_000;
const FLUSH_MS = 250;
const HEADS = ["Time", "Chain", "Subject", "Outcome", "Why", "Session"];

export function mountDecisions(root: HTMLElement, ctx: PageContext): () => void {
  let filters: DecisionFilters = filtersFromQuery(ctx.query);

  // ── filters ──────────────────────────────────────────────────────────────────────────────────
  const range = h("select", { id: "f-range", name: "range" }, ...(Object.keys(RANGE_LABELS) as Range[]).map((r) => h("option", { value: r }, RANGE_LABELS[r])));
  const since = h("input", { id: "f-since", name: "since", type: "datetime-local", step: "1" });
  const until = h("input", { id: "f-until", name: "until", type: "datetime-local", step: "1" });
  const custom = h("span", { class: "custom-range" }, h("label", { for: "f-since" }, "From"), since, h("label", { for: "f-until" }, "to"), until);
  const outcome = h("select", { id: "f-outcome", name: "outcome" }, h("option", { value: "" }, "any"), ...OUTCOMES.map((o) => h("option", { value: o }, o)));
  const profile = h("select", { id: "f-profile", name: "profile" }, h("option", { value: "" }, "any"), h("option", { value: "vcp" }, "vcp"));
  const text = (id: string, name: string, type = "text") => h("input", { id, name, type, autocomplete: "off", spellcheck: "false" });
  const bundle = text("f-bundle", "bundle");
  const hook = text("f-hook", "hook");
  const session = text("f-session", "session");
  const subject = text("f-subject", "subject", "search");
  const field = (label: string, control: HTMLElement) => h("span", { class: "field" }, h("label", { for: control.id }, label), control);
  const form = h(
    "form",
    { class: "filters", id: "decision-filters", "aria-label": "Decision filters" },
    field("Time", range),
    custom,
    field("Outcome", outcome),
    field("Profile", profile),
    field("Subject", subject),
    field("Bundle", bundle),
    field("Hook", hook),
    field("Session", session),
    h("button", { type: "submit" }, "Apply"),
  );

  // ── list, trace, controls ────────────────────────────────────────────────────────────────────
  const pause = h("button", { type: "button", "aria-pressed": "false" }, "Pause");
  const exportButton = h("button", { type: "button", id: "export" }, "Export JSON lines");
  const state = h("p", { class: "stream-state", id: "stream-state", role: "status", "aria-live": "polite" }, "Connecting…");
  const counters = h("p", { class: "stream-counters", id: "stream-counters" }, "0 received · 0 sampled out by the server · 0 dropped");
  const summary = h("p", { class: "list-summary", id: "decisions-summary", role: "status" }, "Loading…");
  const exportState = h("span", { id: "export-state", role: "status" });
  const tbody = h("tbody", { id: "decisions-body" });
  const older = h("button", { type: "button", id: "load-older", hidden: true }, "Load older");
  const list = h(
    "div",
    { class: "decisions", id: "decisions", tabindex: "0", role: "region", "aria-label": "Decisions, newest first" },
    h("table", { class: "stack" }, h("thead", {}, h("tr", {}, ...HEADS.map((t) => h("th", { scope: "col" }, t)))), tbody),
    h("div", { class: "older" }, older),
  );
  const trace = h("section", { class: "trace", id: "trace", "aria-label": "Chain detail", tabindex: "-1" }, h("p", { class: "hint" }, "Select a chain to see its detail."));
  root.append(
    h("h1", {}, "Decisions"),
    form,
    h("div", { class: "stream-bar" }, state, counters, h("div", { class: "actions" }, pause, exportButton, exportState)),
    summary,
    h("div", { class: "decisions-layout" }, list, trace),
  );
  arrowKeyRows(tbody);

  let received = 0;
  let sampledOut = 0;
  let dropped = 0;
  let paused = false;
  let pending: DecisionRecord[] = [];
  let flushTimer: number | undefined;
  let cursor: string | null = null;
  /** No GET /v1/decisions on this server (older): live rows only. */
  let historyMissing = false;
  /** Which load is current: an answer to an older one (filters changed since) is dropped. */
  let generation = 0;
  const byId = new Map<string, DecisionRecord>();
  /** Per-hook annotations and modification values the stream sent (the record carries paths only). */
  const extras = new Map<string, StreamEvent["hooks"]>();

  function showFilters(): void {
    range.value = filters.range;
    since.value = filters.since;
    until.value = filters.until;
    custom.hidden = filters.range !== "custom";
    outcome.value = filters.outcome;
    if (filters.profile && ![...profile.options].some((o) => o.value === filters.profile)) profile.append(h("option", { value: filters.profile }, filters.profile));
    profile.value = filters.profile;
    bundle.value = filters.bundle;
    hook.value = filters.hook;
    session.value = filters.session;
    subject.value = filters.subject;
  }

  function readFilters(): DecisionFilters {
    return {
      range: range.value as Range,
      since: since.value,
      until: until.value,
      outcome: outcome.value as DecisionFilters["outcome"],
      profile: profile.value,
      bundle: bundle.value.trim(),
      hook: hook.value.trim(),
      session: session.value.trim(),
      subject: subject.value.trim(),
      chain: filters.chain,
    };
  }

  function setFilters(next: DecisionFilters): void {
    filters = next;
    ctx.setQuery(queryOfFilters(filters));
  }

  const showCounters = () => {
    counters.textContent = `${received} received · ${sampledOut} sampled out by the server · ${dropped} dropped`;
  };

  function showSummary(): void {
    const n = tbody.querySelectorAll("tr[data-chain]").length;
    const where = filters.range === "custom" ? "in the chosen range" : `in the ${RANGE_LABELS[filters.range]}`;
    summary.textContent = historyMissing
      ? `${n} live chains — this server has no GET /v1/decisions, so history is not shown`
      : `${n} chain${n === 1 ? "" : "s"} ${where}${cursor !== null ? " so far (more are older)" : ""}`;
  }

  // ── rows ─────────────────────────────────────────────────────────────────────────────────────
  function row(d: DecisionRecord, live: boolean): HTMLTableRowElement {
    byId.set(d.chain_id, d);
    const why = d.reason ?? (d.decided_by ? `by ${d.decided_by.hook}` : d.errors > 0 ? failedHooks(d) : "");
    const tr = h(
      "tr",
      { tabindex: "-1", "data-chain": d.chain_id, "data-outcome": d.outcome, "data-live": live ? "true" : null, class: `o-${d.outcome}${d.errors > 0 ? " failed" : ""}` },
      h("td", { "data-label": "Time" }, h("time", { datetime: d.at, title: fmtTime(d.at) }, fmtClock(d.at))),
      h("td", { "data-label": "Chain" }, chainLabel(d)),
      h("td", { "data-label": "Subject", class: "subject guest" }, d.subject.summary),
      h("td", { "data-label": "Outcome", class: "outcome" }, outcomeChip(d)),
      h("td", { "data-label": "Why", class: "reason guest" }, d.outcome === "block" || d.outcome === "ask" || d.errors > 0 ? why : ""),
      h("td", { "data-label": "Session", class: "ellipsis" }, d.session ?? "–"),
    );
    tr.addEventListener("click", () => select(d.chain_id));
    return tr;
  }

  function addRows(records: DecisionRecord[], where: "top" | "bottom"): void {
    const fresh = records.filter((d) => !byId.has(d.chain_id));
    const rows = fresh.map((d) => row(d, where === "top"));
    if (where === "top") tbody.prepend(...rows);
    else tbody.append(...rows);
    while (tbody.rows.length > MAX_ROWS) {
      const last = tbody.rows[tbody.rows.length - 1]!;
      byId.delete(last.dataset.chain ?? "");
      extras.delete(last.dataset.chain ?? "");
      last.remove();
    }
    tbody.querySelector("tr.empty")?.remove();
    if (tbody.rows.length === 0) tbody.append(h("tr", { class: "empty" }, h("td", { colspan: HEADS.length, id: "no-decisions" }, "No chain matches these filters.")));
    markCurrent();
    showSummary();
  }

  function flush(): void {
    flushTimer = undefined;
    if (paused || pending.length === 0) return;
    const batch = pending.slice(-MAX_ROWS).reverse();
    pending = [];
    addRows(batch, "top");
  }

  // ── history ──────────────────────────────────────────────────────────────────────────────────
  async function load(more: boolean): Promise<void> {
    const mine = more ? generation : ++generation;
    if (!more) {
      tbody.replaceChildren();
      byId.clear();
      pending = [];
      cursor = null;
      summary.textContent = "Loading…";
    }
    older.disabled = true;
    const q = apiQuery(filters, Date.now());
    q.set("limit", String(PAGE));
    if (more && cursor !== null) q.set("cursor", cursor);
    try {
      const page = await api<{ decisions: DecisionRecord[]; next_cursor: string | null }>("GET", `/v1/decisions?${q}`);
      if (mine !== generation) return;
      historyMissing = false;
      cursor = page.next_cursor;
      addRows(page.decisions, "bottom");
    } catch (err) {
      if (mine !== generation) return;
      if (err instanceof ApiError && err.status === 404) {
        historyMissing = true;
        cursor = null;
        addRows([], "bottom");
      } else {
        summary.textContent = "";
        replace(tbody, h("tr", { class: "empty" }, h("td", { colspan: HEADS.length, class: "error", role: "alert" }, errorText(err))));
      }
    }
    older.hidden = cursor === null;
    older.disabled = false;
    if (!more && filters.chain) select(filters.chain, { scroll: true });
  }

  // ── detail ───────────────────────────────────────────────────────────────────────────────────
  function markCurrent(): void {
    for (const tr of tbody.querySelectorAll("tr[aria-current]")) tr.removeAttribute("aria-current");
    if (filters.chain) tbody.querySelector(`tr[data-chain="${CSS.escape(filters.chain)}"]`)?.setAttribute("aria-current", "true");
  }

  function select(chainId: string, options: { scroll?: boolean } = {}): void {
    if (filters.chain !== chainId) setFilters({ ...filters, chain: chainId });
    markCurrent();
    const d = byId.get(chainId);
    if (d === undefined) {
      replace(trace, h("h2", {}, "Chain not shown"), h("p", { id: "trace-missing" }, "Chain ", h("code", {}, chainId), " is not among the rows these filters show: widen the time range or clear a filter."));
    } else showTrace(d);
    if (options.scroll) tbody.querySelector(`tr[data-chain="${CSS.escape(chainId)}"]`)?.scrollIntoView({ block: "nearest" });
    // On a phone the detail is below the list: bring it into view.
    if (window.matchMedia("(max-width: 700px)").matches) trace.scrollIntoView({ block: "start" });
    trace.focus({ preventScroll: true });
  }

  function showTrace(d: DecisionRecord): void {
    const more = extras.get(d.chain_id);
    const s = d.subject;
    replace(
      trace,
      h("h2", {}, `${chainLabel(d)} chain`),
      h(
        "dl",
        { class: "facts", id: "trace-facts" },
        h("dt", {}, "Outcome"),
        h("dd", { id: "trace-outcome" }, outcomeChip(d)),
        h("dt", {}, "Subject"),
        h("dd", { class: "guest", id: "trace-subject" }, s.summary),
        ...(s.tool ? [h("dt", {}, "Tool"), h("dd", { class: "guest" }, s.tool)] : []),
        ...(s.command ? [h("dt", {}, "Command"), h("dd", {}, h("code", { class: "guest" }, s.command))] : []),
        ...(s.path ? [h("dt", {}, "Path"), h("dd", {}, h("code", { class: "guest" }, s.path))] : []),
        ...(s.prompt_sha256 ? [h("dt", {}, "Prompt"), h("dd", {}, h("code", {}, `sha256 ${shortDigest(s.prompt_sha256)}`))] : []),
        h("dt", {}, "Reason"),
        h("dd", { class: "guest", id: "trace-reason" }, d.reason ?? "–"),
        h("dt", {}, "Decided by"),
        h("dd", { id: "trace-decided-by" }, d.decided_by ? `${d.decided_by.hook} (bundle ${d.decided_by.bundle}${d.decided_by.revision ? ` ${shortDigest(d.decided_by.revision)}` : ""})` : "no hook decided"),
        h("dt", {}, "When"),
        h("dd", {}, h("time", { datetime: d.at }, fmtTime(d.at))),
        h("dt", {}, "Session"),
        h("dd", {}, d.session ?? "–", d.client ? ` (client ${d.client})` : ""),
        h("dt", {}, "Chain"),
        h("dd", {}, h("code", {}, d.chain_id)),
      ),
      h("h3", {}, `Hooks (${d.hooks.length})`),
      d.hooks.length === 0
        ? h("p", { class: "hint" }, "No hook ran.")
        : h(
            "ol",
            { class: "hooks", id: "trace-hooks" },
            ...d.hooks.map((x) => {
              const extra = more?.find((m) => m.hook === x.hook && m.bundle === x.bundle);
              const changes = d.changes.filter((c) => c.hook === x.hook);
              return h(
                "li",
                { class: `hook ${x.outcome}` },
                h(
                  "div",
                  { class: "hook-head" },
                  h("strong", { class: "hook-name" }, x.hook),
                  ` ${x.bundle} · `,
                  h("span", { class: `chip ${x.outcome === "ok" ? "ok" : hookFailed(x.outcome) ? "bad" : ""}` }, x.outcome),
                  x.verdict ? ` · ${x.verdict}` : "",
                  ` · ${fmtMs(x.duration_ms)}`,
                ),
                x.reason ? h("p", { class: "reason" }, "Reason: ", h("span", { class: "guest" }, x.reason)) : null,
                extra?.error ? h("p", { class: "reason" }, "Error: ", h("span", { class: "guest" }, extra.error)) : null,
                extra?.annotations !== undefined ? h("div", {}, h("h4", {}, "Annotations"), h("pre", { class: "guest annotations", tabindex: "0" }, jsonText(extra.annotations))) : null,
                Array.isArray(extra?.modification) && extra.modification.length > 0
                  ? h("div", {}, h("h4", {}, "Changed fields"), diffView(extra.modification))
                  : changes.length > 0
                    ? h("div", {}, h("h4", {}, "Changed fields"), diffView(changes))
                    : null,
              );
            }),
          ),
    );
  }

  // ── live ─────────────────────────────────────────────────────────────────────────────────────
  const stream = liveStream({
    open: (signal) => {
      const query = new URLSearchParams();
      if (filters.session) query.set("session", filters.session);
      if (filters.bundle) query.set("bundle", filters.bundle);
      const q = query.toString();
      return fetch(`/v1/decisions/stream${q ? `?${q}` : ""}`, { headers: authHeaders({ accept: "text/event-stream" }), signal, cache: "no-store" }).then(check);
    },
    onEvent: (event) => {
      if (event.event === "hello") {
        const hello = JSON.parse(event.data) as { max_events_per_second: number };
        setState(`Live · at most ${hello.max_events_per_second} chains/s shown; the server samples above that`, "ok");
      } else if (event.event === "stats") {
        const s = JSON.parse(event.data) as { sampled_out: number; dropped: number };
        sampledOut = s.sampled_out;
        dropped = s.dropped;
      } else if (event.event === "decision") {
        received++;
        const e = JSON.parse(event.data) as StreamEvent;
        const d = recordOfStreamEvent(e);
        if (!recordMatches(d, filters, Date.now())) return;
        if (e.hooks.some((x) => x.annotations !== undefined || x.modification !== undefined || x.error !== undefined)) extras.set(d.chain_id, e.hooks);
        pending.push(d);
        if (pending.length > MAX_ROWS) pending.splice(0, pending.length - MAX_ROWS);
        flushTimer ??= window.setTimeout(flush, FLUSH_MS);
      }
    },
    afterChunk: showCounters,
    setState,
  });

  function setState(text: string, kind: "ok" | "warn" | "bad"): void {
    state.textContent = text;
    state.className = `stream-state ${kind}`;
  }

  // ── controls ─────────────────────────────────────────────────────────────────────────────────
  const apply = () => {
    const before = filters;
    setFilters({ ...readFilters(), chain: "" });
    custom.hidden = filters.range !== "custom";
    replace(trace, h("p", { class: "hint" }, "Select a chain to see its detail."));
    void load(false);
    if (before.session !== filters.session || before.bundle !== filters.bundle) stream.restart();
  };
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    apply();
  });
  // A choice from a list applies at once (one interaction); typed filters apply on Enter or "Apply".
  for (const select of [range, outcome, profile]) select.addEventListener("change", apply);
  for (const input of [since, until]) input.addEventListener("change", () => filters.range === "custom" && apply());
  older.addEventListener("click", () => void load(true));
  pause.addEventListener("click", () => {
    paused = !paused;
    pause.setAttribute("aria-pressed", String(paused));
    pause.textContent = paused ? "Resume" : "Pause";
    if (!paused) flush();
  });
  exportButton.addEventListener("click", () => void exportRows());

  async function exportRows(): Promise<void> {
    exportButton.disabled = true;
    const records: DecisionRecord[] = [];
    try {
      if (historyMissing) records.push(...[...tbody.querySelectorAll<HTMLTableRowElement>("tr[data-chain]")].map((tr) => byId.get(tr.dataset.chain!)!));
      else {
        let next: string | null = null;
        const q = apiQuery(filters, Date.now());
        q.set("limit", "1000");
        do {
          if (next !== null) q.set("cursor", next);
          const page: { decisions: DecisionRecord[]; next_cursor: string | null } = await api("GET", `/v1/decisions?${q}`);
          records.push(...page.decisions);
          next = page.next_cursor;
        } while (next !== null && records.length < MAX_EXPORT);
      }
      const url = URL.createObjectURL(new Blob([toJsonLines(records.slice(0, MAX_EXPORT))], { type: "application/x-ndjson" }));
      const a = h("a", { href: url, download: `vcp-decisions-${new Date().toISOString().replace(/[:.]/g, "-")}.jsonl` });
      document.body.append(a);
      a.click();
      a.remove();
      window.setTimeout(() => URL.revokeObjectURL(url), 10_000);
      exportState.className = "";
      exportState.textContent = `Exported ${Math.min(records.length, MAX_EXPORT)} chain${records.length === 1 ? "" : "s"}${records.length >= MAX_EXPORT ? ` (the first ${MAX_EXPORT})` : ""}`;
    } catch (err) {
      exportState.className = "error";
      exportState.textContent = `Export failed: ${errorText(err)}`;
    } finally {
      exportButton.disabled = false;
    }
  }

  // The profiles this server serves, for the profile filter.
  void api<{ profiles: Array<{ id: string }> }>("GET", "/v1/profiles").then(
    (r) => {
      for (const p of r.profiles) if (![...profile.options].some((o) => o.value === p.id)) profile.append(h("option", { value: p.id }, p.id));
      profile.value = filters.profile;
    },
    () => undefined,
  );
  showFilters();
  void load(false);

  return () => {
    stream.stop();
    window.clearTimeout(flushTimer);
  };
}

/** "block", or "allow · 1 error": a chain with a failed hook never reads as a plain success. */
function outcomeChip(d: DecisionRecord): HTMLElement {
  const cls = d.outcome === "block" ? "bad" : d.errors > 0 || d.outcome === "ask" ? "warn" : d.outcome === "modify" ? "info" : "ok";
  return h("span", { class: `chip ${cls}` }, d.outcome, d.errors > 0 ? ` · ${d.errors} error${d.errors === 1 ? "" : "s"}` : "");
}

function failedHooks(d: DecisionRecord): string {
  return d.hooks.filter((x) => hookFailed(x.outcome)).map((x) => `${x.hook}: ${x.outcome}`).join(", ");
}
