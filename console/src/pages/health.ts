/**
 * Health: "which bundle is slow or failing?" One sortable table of every hook, problems first
 * (quarantined, errors, timeouts, demoted or slow, then p99), a per-bundle rollup, and the sandbox
 * and audit cards. Counts and p50/p99 are the server's since it started (GET /v1/status and the
 * /metrics histograms), so the page shows history the moment it opens; the trend column draws calls/s
 * and p99 per poll since then. Polled every 2 s; when the server does not answer, a banner says since
 * when, every number is marked stale, and polls back off (1, 2, 4 … 30 s) with a "Retry now".
 */
import { api, apiOptional, errorText } from "../api.js";
import { sparkline } from "../charts.js";
import { fmtClock } from "../format.js";
import { fmtMs, h, replace, scrollRegion, shortDigest } from "../dom.js";
import { problemsOf, rollup, sortRows, type HookRow, type SortKey } from "../health-rank.js";
import { buckets, parseMetrics, quantile, subtract, total, type Sample } from "../prom.js";
import { arrowKeyRows } from "../rows.js";
import { backoffMs } from "../sse.js";

interface HookStats {
  hook: string;
  type: string;
  scope: string;
  session_id?: string;
  profile?: string;
  event?: string;
  bundle: string;
  enabled: boolean;
  calls: number;
  outcomes: Record<string, number>;
  timeouts: number;
  errors: number;
  mean_duration_ms: number;
  max_duration_ms: number;
}
interface Status {
  bundles: Array<{ bundle: string; version: string; digest: string }>;
  hooks: HookStats[];
  sandbox: { restarts?: number; quarantined?: string[]; slowBundles?: string[]; demotedBundles?: string[]; suspectBundles?: string[]; inFlight?: number; queued?: number; watchdogKills?: number; ready?: boolean };
  audit?: { enabled: boolean; head: { seq: number; hash: string } | null; pending: number; lag_ms: number };
}

const POLL_MS = 2000;
const HISTORY = 60;
const HOOK_SECONDS = "vcp_bundle_hook_duration_seconds";

interface Track {
  rate: Array<number | null>;
  p50: Array<number | null>;
  p99: Array<number | null>;
  timeouts: Array<number | null>;
  prevCalls: number | null;
  prevTimeouts: number | null;
  prevBuckets: Array<[number, number]> | null;
}

const COLUMNS: Array<{ key: SortKey; label: string; numeric?: boolean }> = [
  { key: "problems", label: "Problems" },
  { key: "hook", label: "Hook" },
  { key: "bundle", label: "Bundle" },
  { key: "event", label: "Event" },
  { key: "calls", label: "Calls", numeric: true },
  { key: "errors", label: "Errors", numeric: true },
  { key: "timeouts", label: "Timeouts", numeric: true },
  { key: "p50_ms", label: "p50", numeric: true },
  { key: "p99_ms", label: "p99", numeric: true },
];

export function mountHealth(root: HTMLElement): () => void {
  const retry = h("button", { type: "button" }, "Retry now");
  const outageText = h("span", { id: "outage-text" });
  const outage = h("div", { class: "outage", id: "outage", role: "alert", hidden: true }, outageText, retry);
  const summary = h("div", { class: "cards", id: "health-summary" });
  const hooksEl = scrollRegion("Hooks, problems first", { id: "health-hooks" });
  const bundlesEl = scrollRegion("Bundles, problems first", { id: "health-bundles" });
  const updated = h("p", { class: "hint", id: "health-updated", role: "status" }, "Loading…");
  root.append(
    h("h1", {}, "Health"),
    outage,
    updated,
    summary,
    h("h2", {}, "Hooks"),
    h("p", { class: "hint" }, "Counts, p50 and p99 since the server started; the trend is calls/s and p99 per poll since this page opened. Click a column to sort."),
    hooksEl,
    h("h2", {}, "Bundles"),
    bundlesEl,
  );
  const tracks = new Map<string, Track>();
  let prevAt = 0;
  let sort: { key: SortKey; descending: boolean } = { key: "problems", descending: true };
  let rows: HookRow[] = [];
  let lastOk: number | null = null;
  let downSince: number | null = null;
  let attempt = 0;
  let timer: number | undefined;
  let nextAt = 0;
  let stopped = false;
  const ticker = window.setInterval(showOutage, 1000);

  function showOutage(): void {
    if (downSince === null) return;
    const left = Math.max(0, Math.ceil((nextAt - Date.now()) / 1000));
    outageText.textContent = `Server unreachable since ${fmtClock(new Date(downSince).toISOString())} (${lastError}). ${lastOk === null ? "Nothing was loaded yet." : `Every number below is stale: from ${fmtClock(new Date(lastOk).toISOString())}.`} Retrying in ${left} s.`;
  }
  let lastError = "";

  function schedule(ms: number): void {
    window.clearTimeout(timer);
    nextAt = Date.now() + ms;
    timer = window.setTimeout(() => void poll(), ms);
  }

  retry.addEventListener("click", () => {
    window.clearTimeout(timer);
    void poll();
  });

  function setStale(stale: boolean): void {
    for (const el of [summary, hooksEl, bundlesEl]) {
      el.classList.toggle("stale", stale);
      if (stale) el.setAttribute("aria-describedby", "outage-text");
      else el.removeAttribute("aria-describedby");
    }
  }

  async function poll(): Promise<void> {
    if (stopped) return;
    let status: Status;
    let samples: Sample[];
    let head: { seq: number; hash: string } | null = null;
    let headNote = "";
    try {
      const [s, m, hd] = await Promise.all([api<Status>("GET", "/v1/status"), api<string>("GET", "/metrics"), apiOptional<{ seq: number; hash: string }>("/v1/audit/head")]);
      status = s;
      samples = parseMetrics(m);
      if ("value" in hd) head = hd.value;
      else headNote = `${hd.missing.code}: ${hd.missing.message}`;
    } catch (err) {
      if (stopped) return;
      attempt++;
      downSince ??= Date.now();
      lastError = errorText(err);
      outage.hidden = false;
      setStale(true);
      schedule(backoffMs(attempt));
      showOutage();
      return;
    }
    if (stopped) return;
    attempt = 0;
    downSince = null;
    lastOk = Date.now();
    outage.hidden = true;
    setStale(false);
    updated.textContent = `Updated ${fmtClock(new Date(lastOk).toISOString())} · polled every ${POLL_MS / 1000} s`;
    schedule(POLL_MS);
    render(status, samples, head, headNote);
  }

  function render(status: Status, samples: Sample[], head: { seq: number; hash: string } | null, headNote: string): void {
    const now = performance.now();
    const dt = prevAt === 0 ? null : (now - prevAt) / 1000;
    prevAt = now;

    const byDigest = new Map(status.bundles.map((b) => [b.digest, b]));
    const names = (digests: string[] | undefined) => (digests ?? []).map((d) => (byDigest.has(d) ? `${byDigest.get(d)!.bundle}@${byDigest.get(d)!.version}` : shortDigest(d)));
    const bundlesOf = (digests: string[] | undefined) => new Set((digests ?? []).map((d) => byDigest.get(d)?.bundle).filter((b): b is string => b !== undefined));
    const quarantinedSet = bundlesOf(status.sandbox.quarantined);
    const demotedSet = bundlesOf(status.sandbox.demotedBundles);
    const slowSet = bundlesOf(status.sandbox.slowBundles);
    const lagS = total(samples, "vcp_audit_lag_seconds");
    const card = (label: string, value: string, extra: string | null = null, bad = false) =>
      h("div", { class: `card${bad ? " bad" : ""}` }, h("div", { class: "card-label" }, label), h("div", { class: "card-value" }, value), extra ? h("div", { class: "card-extra" }, extra) : null);
    const quarantined = names(status.sandbox.quarantined);
    const slow = names(status.sandbox.slowBundles);
    replace(
      summary,
      card("Sandbox", status.sandbox.ready === false ? "starting" : "ready", `${status.sandbox.inFlight ?? 0} in flight · ${status.sandbox.queued ?? 0} queued`, status.sandbox.ready === false),
      card("Sandbox restarts", String(status.sandbox.restarts ?? 0), `${status.sandbox.watchdogKills ?? 0} watchdog kills`, (status.sandbox.restarts ?? 0) > 0),
      card("Quarantined bundles", String(quarantined.length), quarantined.join(", ") || null, quarantined.length > 0),
      card("Slow bundles", String(slow.length), [...slow, ...names(status.sandbox.demotedBundles).map((n) => `${n} (capped)`)].join(", ") || null, slow.length > 0),
      card("Audit lag", status.audit?.enabled === false ? "off" : fmtMs((status.audit?.lag_ms ?? lagS * 1000) || 0), status.audit ? `${status.audit.pending} pending` : null),
      h(
        "div",
        { class: "card wide" },
        h("div", { class: "card-label" }, "Audit head"),
        head ? h("div", { class: "card-value mono" }, `seq ${head.seq}`) : h("div", { class: "card-value" }, "–"),
        h("div", { class: "card-extra mono", id: "audit-head" }, head ? head.hash : headNote),
      ),
    );

    rows = status.hooks.map((hook) => {
      const key = `${hook.bundle}/${hook.hook}${hook.session_id ? ` @${hook.session_id}` : ""}`;
      let t = tracks.get(key);
      if (t === undefined) tracks.set(key, (t = { rate: [], timeouts: [], p50: [], p99: [], prevCalls: null, prevTimeouts: null, prevBuckets: null }));
      const cumulative = buckets(samples, HOOK_SECONDS, { bundle: hook.bundle, hook: hook.hook });
      const interval = t.prevBuckets === null ? null : subtract(cumulative, t.prevBuckets);
      push(t.rate, dt !== null && t.prevCalls !== null ? Math.max(0, hook.calls - t.prevCalls) / dt : null);
      push(t.timeouts, dt !== null && t.prevTimeouts !== null ? Math.max(0, hook.timeouts - t.prevTimeouts) / dt : null);
      push(t.p50, interval ? ms(quantile(0.5, interval)) : null);
      push(t.p99, interval ? ms(quantile(0.99, interval)) : null);
      t.prevCalls = hook.calls;
      t.prevTimeouts = hook.timeouts;
      t.prevBuckets = cumulative;
      return {
        key,
        hook: hook.hook,
        bundle: hook.bundle,
        event: hook.profile !== undefined ? `${hook.profile} · ${hook.event ?? hook.type}` : hook.type,
        scope: hook.scope === "session" && hook.session_id ? `session ${hook.session_id}` : hook.scope,
        enabled: hook.enabled,
        calls: hook.calls,
        errors: hook.errors,
        timeouts: hook.timeouts,
        p50_ms: ms(quantile(0.5, cumulative)),
        p99_ms: ms(quantile(0.99, cumulative)),
        quarantined: quarantinedSet.has(hook.bundle),
        demoted: demotedSet.has(hook.bundle),
        slow: slowSet.has(hook.bundle),
      };
    });
    renderHooks();
    renderBundles();
  }

  const chips = (problems: string[]) =>
    h("span", { class: "problems" }, ...(problems.length === 0 ? [h("span", { class: "chip ok" }, "ok")] : problems.map((p) => h("span", { class: `chip ${p === "demoted" || p === "slow" ? "warn" : "bad"}` }, p))));

  function renderHooks(): void {
    if (rows.length === 0) {
      replace(hooksEl, h("p", {}, "No hook is registered."));
      return;
    }
    const sorted = sortRows(rows, sort.key, sort.descending);
    const tbody = h(
      "tbody",
      {},
      ...sorted.map((r) => {
        const t = tracks.get(r.key)!;
        const problems = problemsOf(r);
        return h(
          "tr",
          { "data-hook": r.key, tabindex: "-1", class: `${problems.length > 0 && (r.quarantined || r.errors + r.timeouts > 0) ? "problem" : ""}${r.enabled ? "" : " disabled"}` },
          h("td", { "data-label": "Problems" }, chips(problems)),
          h("th", { scope: "row", "data-label": "Hook" }, r.hook, r.enabled ? "" : h("span", { class: "sub" }, " (disabled)"), r.scope !== "deployment" ? h("div", { class: "sub" }, r.scope) : null),
          h("td", { "data-label": "Bundle" }, r.bundle),
          h("td", { "data-label": "Event" }, r.event),
          h("td", { "data-label": "Calls", class: "num calls" }, String(r.calls)),
          h("td", { "data-label": "Errors", class: `num errors${r.errors > 0 ? " bad" : ""}` }, String(r.errors)),
          h("td", { "data-label": "Timeouts", class: `num timeouts${r.timeouts > 0 ? " bad" : ""}` }, String(r.timeouts)),
          h("td", { "data-label": "p50", class: "num" }, fmtMs(r.p50_ms)),
          h("td", { "data-label": "p99", class: "num" }, fmtMs(r.p99_ms)),
          h(
            "td",
            { "data-label": "Trend", class: "trend" },
            sparkline(
              [
                { values: t.rate, className: "line-rate" },
                { values: t.p99, className: "line-p99" },
              ],
              `Calls per second (max ${fmtNum(maxOf(t.rate))}) and p99 per poll (max ${fmtMs(maxOf(t.p99))}) of ${r.hook}, last ${t.rate.length} polls`,
              120,
              28,
            ),
          ),
        );
      }),
    );
    arrowKeyRows(tbody);
    const headCell = (c: (typeof COLUMNS)[number]) => {
      const active = sort.key === c.key;
      const button = h("button", { type: "button", class: "sort" }, c.label);
      button.addEventListener("click", () => {
        sort = active && c.key !== "problems" ? { key: c.key, descending: !sort.descending } : { key: c.key, descending: c.numeric === true || c.key === "problems" };
        renderHooks();
        hooksEl.querySelector<HTMLButtonElement>(`th[aria-sort] button`)?.focus();
      });
      return h("th", { scope: "col", "aria-sort": active ? (sort.descending ? "descending" : "ascending") : null }, button);
    };
    const legend = h("span", { class: "sr-only" }, "Trend: calls per second and p99");
    replace(hooksEl, h("table", { class: "stack health-table" }, h("thead", {}, h("tr", {}, ...COLUMNS.map(headCell), h("th", { scope: "col" }, "Trend", legend))), tbody));
  }

  function renderBundles(): void {
    const list = rollup(rows);
    if (list.length === 0) {
      replace(bundlesEl, h("p", {}, "No bundle is installed."));
      return;
    }
    replace(
      bundlesEl,
      h(
        "table",
        { class: "stack" },
        h("thead", {}, h("tr", {}, ...["Problems", "Bundle", "Hooks", "Calls", "Errors", "Timeouts", "Worst p99"].map((t) => h("th", { scope: "col" }, t)))),
        h(
          "tbody",
          {},
          ...list.map((b) =>
            h(
              "tr",
              { "data-bundle": b.bundle, class: b.quarantined || b.errors + b.timeouts > 0 ? "problem" : "" },
              h("td", { "data-label": "Problems" }, chips(problemsOf(b))),
              h("th", { scope: "row", "data-label": "Bundle" }, h("a", { href: `#/bundles/${encodeURIComponent(b.bundle)}` }, b.bundle)),
              h("td", { "data-label": "Hooks", class: "num" }, String(b.hooks)),
              h("td", { "data-label": "Calls", class: "num" }, String(b.calls)),
              h("td", { "data-label": "Errors", class: `num${b.errors > 0 ? " bad" : ""}` }, String(b.errors)),
              h("td", { "data-label": "Timeouts", class: `num${b.timeouts > 0 ? " bad" : ""}` }, String(b.timeouts)),
              h("td", { "data-label": "Worst p99", class: "num" }, fmtMs(b.worst_p99_ms)),
            ),
          ),
        ),
      ),
    );
  }

  void poll();
  return () => {
    stopped = true;
    window.clearTimeout(timer);
    window.clearInterval(ticker);
  };
}

function push(list: Array<number | null>, value: number | null): void {
  list.push(value);
  if (list.length > HISTORY) list.shift();
}

function maxOf(values: ReadonlyArray<number | null>): number | null {
  const finite = values.filter((v): v is number => v !== null && Number.isFinite(v));
  return finite.length === 0 ? null : Math.max(...finite);
}

function fmtNum(value: number | null): string {
  return value === null ? "–" : value.toFixed(value < 10 ? 1 : 0);
}

function ms(seconds: number | null): number | null {
  return seconds === null ? null : seconds * 1000;
}
