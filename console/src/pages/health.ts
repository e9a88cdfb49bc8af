/**
 * Health: per-hook calls, outcomes, p50/p99 and timeouts (from /v1/status and the /metrics
 * histograms, polled every 2 s; the last 60 samples drawn as sparklines), sandbox restarts,
 * quarantined and slow bundles, audit lag and the audit head hash.
 */
import { api, apiOptional, errorText } from "../api.js";
import { sparkline, stackedBar } from "../charts.js";
import { fmtMs, h, replace, shortDigest } from "../dom.js";
import { buckets, parseMetrics, quantile, subtract, total, type Sample } from "../prom.js";

interface HookStats {
  hook: string;
  type: string;
  scope: string;
  session_id?: string;
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
const OUTCOME_CLASS: Record<string, string> = { ok: "o-ok", error: "o-bad", crashed: "o-bad", invalid_result: "o-bad", integrity_rejected: "o-bad", timeout: "o-warn" };

interface Track {
  rate: Array<number | null>;
  p50: Array<number | null>;
  p99: Array<number | null>;
  timeouts: Array<number | null>;
  prevCalls: number | null;
  prevTimeouts: number | null;
  prevBuckets: Array<[number, number]> | null;
}

export function mountHealth(root: HTMLElement): () => void {
  const summary = h("div", { class: "cards", id: "health-summary" });
  const hooksEl = h("div", { class: "hook-cards", id: "health-hooks" });
  const error = h("p", { class: "error", role: "alert", hidden: true });
  root.append(
    h("h1", {}, "Health"),
    h("p", { class: "hint" }, `Polled every ${POLL_MS / 1000} s; charts show the last ${HISTORY} samples (calls/s, p50 and p99 per interval).`),
    error,
    summary,
    h("h2", {}, "Hooks"),
    hooksEl,
  );
  const tracks = new Map<string, Track>();
  let prevAt = 0;

  async function poll(): Promise<void> {
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
      error.hidden = true;
    } catch (err) {
      error.hidden = false;
      error.textContent = errorText(err);
      return;
    }
    const now = performance.now();
    const dt = prevAt === 0 ? null : (now - prevAt) / 1000;
    prevAt = now;

    const digestName = new Map(status.bundles.map((b) => [b.digest, `${b.bundle}@${b.version}`]));
    const names = (digests: string[] | undefined) => (digests ?? []).map((d) => digestName.get(d) ?? shortDigest(d));
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

    const cards: HTMLElement[] = [];
    for (const hook of status.hooks) {
      const key = `${hook.scope}\u0000${hook.bundle}\u0000${hook.hook}\u0000${hook.session_id ?? ""}`;
      let t = tracks.get(key);
      if (t === undefined) tracks.set(key, (t = { rate: [], timeouts: [], p50: [], p99: [], prevCalls: null, prevTimeouts: null, prevBuckets: null }));
      const cumulative = buckets(samples, HOOK_SECONDS, { bundle: hook.bundle, hook: hook.hook });
      const interval = t.prevBuckets === null ? null : subtract(cumulative, t.prevBuckets);
      const rate = dt !== null && t.prevCalls !== null ? Math.max(0, hook.calls - t.prevCalls) / dt : null;
      push(t.rate, rate);
      push(t.timeouts, dt !== null && t.prevTimeouts !== null ? Math.max(0, hook.timeouts - t.prevTimeouts) / dt : null);
      t.prevTimeouts = hook.timeouts;
      push(t.p50, interval ? ms(quantile(0.5, interval)) : null);
      push(t.p99, interval ? ms(quantile(0.99, interval)) : null);
      t.prevCalls = hook.calls;
      t.prevBuckets = cumulative;
      const p50 = ms(quantile(0.5, cumulative));
      const p99 = ms(quantile(0.99, cumulative));
      const outcomes = Object.entries(hook.outcomes).filter(([, n]) => n > 0);
      cards.push(
        h(
          "article",
          { class: `hook-card${hook.enabled ? "" : " disabled"}`, "aria-label": `Hook ${hook.hook}` },
          h("h3", {}, h("span", { class: "hook-name" }, hook.hook), h("span", { class: "sub" }, ` ${hook.bundle} · ${hook.type} · ${hook.scope}${hook.session_id ? ` ${hook.session_id}` : ""}${hook.enabled ? "" : " · disabled"}`)),
          h(
            "dl",
            { class: "stats" },
            h("dt", {}, "calls"),
            h("dd", {}, String(hook.calls)),
            h("dt", {}, "p50"),
            h("dd", {}, fmtMs(p50)),
            h("dt", {}, "p99"),
            h("dd", {}, fmtMs(p99)),
            h("dt", {}, "timeouts"),
            h("dd", { class: hook.timeouts > 0 ? "bad" : "" }, String(hook.timeouts)),
            h("dt", {}, "errors"),
            h("dd", { class: hook.errors > 0 ? "bad" : "" }, String(hook.errors)),
          ),
          stackedBar(
            outcomes.map(([o, n]) => ({ label: o, value: n, className: OUTCOME_CLASS[o] ?? "o-skip" })),
            `Outcomes of ${hook.hook}: ${outcomes.map(([o, n]) => `${o} ${n}`).join(", ") || "none yet"}`,
          ),
          h("p", { class: "legend" }, outcomes.map(([o, n]) => `${o} ${n}`).join(" · ") || "no calls yet"),
          h("div", { class: "chart-label" }, h("span", { class: "key-rate" }, "calls/s"), " · ", h("span", { class: "key-timeouts" }, "timeouts"), ` (max ${fmtNum(maxOf(t.rate))}/s)`),
          sparkline(
            [
              { values: t.rate, className: "line-rate" },
              { values: t.timeouts, className: "line-timeouts" },
            ],
            `Calls and timeouts per second of ${hook.hook}, last ${t.rate.length} samples`,
          ),
          h("div", { class: "chart-label" }, h("span", { class: "key-p50" }, "p50"), " / ", h("span", { class: "key-p99" }, "p99"), ` per interval (max ${fmtMs(maxOf(t.p99))})`),
          sparkline(
            [
              { values: t.p50, className: "line-p50" },
              { values: t.p99, className: "line-p99" },
            ],
            `p50 and p99 latency of ${hook.hook} per interval`,
          ),
        ),
      );
    }
    if (cards.length === 0) replace(hooksEl, h("p", {}, "No hook is registered."));
    else replace(hooksEl, ...cards);
  }

  void poll();
  const timer = window.setInterval(() => void poll(), POLL_MS);
  return () => window.clearInterval(timer);
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
