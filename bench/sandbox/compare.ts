/**
 * `--compare <report.json>`: what changed since an earlier sandbox report, so a reviewer re-reviews
 * only the difference. Pure: two reports in, a diff out.
 */
import { cell, fmtMs, fmtRatio, orderNotContainedFirst, SANDBOX_REPORT_SCHEMA, SANDBOX_REPORT_VERSION, type CaseReport, type SandboxReport } from "./report.js";

/**
 * Noise thresholds. These machines are noisy (and a short window's p99 is nearly its maximum), so a
 * latency change is reported only when it moved by at least LATENCY_RATIO_THRESHOLD× (either way)
 * AND by more than the noise floor: a fixed minimum, raised to the quiet baseline's own value of
 * that percentile in either run (a change smaller than the baseline itself is not evidence).
 */
export const LATENCY_RATIO_THRESHOLD = 2;
export const P50_MIN_MS = 2;
export const P99_MIN_MS = 5;
/** Same ratio, fixed floor, for the time until the host regained control. */
export const REGAINED_MIN_MS = 100;

export interface CaseChange {
  key: string;
  /** Fields whose value changed: contained, outcome, status, error_class, install_error, recycled, served_after, wedged. */
  changes: Array<{ field: string; before: unknown; after: unknown }>;
}

export interface LatencyDelta {
  key: string;
  metric: "bg_p50_ms" | "bg_p99_ms" | "regained_ms";
  before: number;
  after: number;
  delta_ms: number;
  ratio: number;
}

export interface Comparison {
  base: { started_at: string; verdict: string; total: number; not_contained: number };
  current: { started_at: string; verdict: string; total: number; not_contained: number };
  new_cases: Array<{ key: string; contained: boolean }>;
  removed_cases: string[];
  changed: CaseChange[];
  /** Cases that became not contained (subset of `changed`, listed for the headline). */
  regressions: string[];
  /** Cases that became contained. */
  fixed: string[];
  latency: LatencyDelta[];
  baseline: { p50_before: number | null; p50_after: number | null; p99_before: number | null; p99_after: number | null };
  environment: Array<{ key: string; before: unknown; after: unknown }>;
  /** The background-latency change below which a delta is treated as noise (see LATENCY_RATIO_THRESHOLD). */
  noise_floor_ms: { p50: number; p99: number };
  /** Nothing a reviewer needs to look at. */
  unchanged: boolean;
}

const keyOf = (c: Pick<CaseReport, "category" | "id">): string => `${c.category}/${c.id}`;

/** Check that a parsed JSON value is a sandbox report this code can compare against. */
export function assertComparable(value: unknown, what: string): asserts value is SandboxReport {
  const v = value as Partial<SandboxReport> | null;
  if (v === null || typeof v !== "object" || v.schema !== SANDBOX_REPORT_SCHEMA) throw new Error(`${what} is not a sandbox bench report (schema '${String(v?.schema)}')`);
  if (v.version !== SANDBOX_REPORT_VERSION) throw new Error(`${what} has report version ${String(v.version)}; this bench reads version ${SANDBOX_REPORT_VERSION}`);
  if (!Array.isArray(v.cases)) throw new Error(`${what} has no cases`);
}

function fieldsOf(c: CaseReport): Record<string, unknown> {
  return {
    contained: c.contained,
    outcome: c.observed.outcome,
    status: c.observed.status,
    install_error: c.observed.install_error,
    error_class: c.observed.error_class,
    recycled: c.recycled.observed,
    served_after: c.served_after,
    wedged: c.control.wedged,
    expected: `${c.expected.install_error ?? ""}${c.expected.outcome ?? ""}/${c.expected.status ?? ""}/${c.expected.recycled}`,
  };
}

function latencyDelta(key: string, metric: LatencyDelta["metric"], before: number | null | undefined, after: number | null | undefined, absMs: number): LatencyDelta | null {
  if (typeof before !== "number" || typeof after !== "number" || !Number.isFinite(before) || !Number.isFinite(after)) return null;
  const delta = after - before;
  const ratio = before > 0 ? after / before : Number.POSITIVE_INFINITY;
  const moved = Math.abs(delta) >= absMs && (ratio >= LATENCY_RATIO_THRESHOLD || ratio <= 1 / LATENCY_RATIO_THRESHOLD);
  return moved ? { key, metric, before, after, delta_ms: delta, ratio } : null;
}

export function compareReports(base: SandboxReport, current: SandboxReport): Comparison {
  const before = new Map(base.cases.map((c) => [keyOf(c), c]));
  const after = new Map(current.cases.map((c) => [keyOf(c), c]));
  const noiseP50 = Math.max(P50_MIN_MS, base.baseline?.p50_ms ?? 0, current.baseline?.p50_ms ?? 0);
  const noiseP99 = Math.max(P99_MIN_MS, base.baseline?.p99_ms ?? 0, current.baseline?.p99_ms ?? 0);
  const newCases = orderNotContainedFirst(current.cases.filter((c) => !before.has(keyOf(c)))).map((c) => ({ key: keyOf(c), contained: c.contained }));
  const removed = base.cases.filter((c) => !after.has(keyOf(c))).map(keyOf);
  const changed: CaseChange[] = [];
  const latency: LatencyDelta[] = [];
  for (const c of orderNotContainedFirst(current.cases)) {
    const key = keyOf(c);
    const old = before.get(key);
    if (old === undefined) continue;
    const a = fieldsOf(old);
    const b = fieldsOf(c);
    const changes = Object.keys(b)
      .filter((f) => a[f] !== b[f])
      .map((field) => ({ field, before: a[field], after: b[field] }));
    if (changes.length) changed.push({ key, changes });
    for (const d of [
      latencyDelta(key, "bg_p50_ms", old.background?.p50_ms, c.background?.p50_ms, noiseP50),
      latencyDelta(key, "bg_p99_ms", old.background?.p99_ms, c.background?.p99_ms, noiseP99),
      latencyDelta(key, "regained_ms", old.control.regained_ms, c.control.regained_ms, REGAINED_MIN_MS),
    ]) {
      if (d) latency.push(d);
    }
  }
  const flipped = (to: boolean): string[] => changed.filter((ch) => ch.changes.some((x) => x.field === "contained" && x.after === to)).map((ch) => ch.key);
  const envKeys = [...new Set([...Object.keys(base.environment ?? {}), ...Object.keys(current.environment ?? {})])];
  const environment = envKeys
    .filter((k) => k !== "cpu_model" && base.environment?.[k] !== current.environment?.[k])
    .map((key) => ({ key, before: base.environment?.[key], after: current.environment?.[key] }));
  const regressions = [...flipped(false), ...newCases.filter((c) => !c.contained).map((c) => c.key)];
  return {
    base: { started_at: base.started_at, verdict: base.summary.verdict, total: base.summary.total, not_contained: base.summary.not_contained },
    current: { started_at: current.started_at, verdict: current.summary.verdict, total: current.summary.total, not_contained: current.summary.not_contained },
    new_cases: newCases,
    removed_cases: removed,
    changed,
    regressions,
    fixed: flipped(true),
    latency,
    baseline: { p50_before: base.baseline?.p50_ms ?? null, p50_after: current.baseline?.p50_ms ?? null, p99_before: base.baseline?.p99_ms ?? null, p99_after: current.baseline?.p99_ms ?? null },
    environment,
    noise_floor_ms: { p50: noiseP50, p99: noiseP99 },
    unchanged: newCases.length === 0 && removed.length === 0 && changed.length === 0 && latency.length === 0,
  };
}

/** compare.md: regressions first, then new and removed cases, changed outcomes, latency deltas. */
export function renderComparison(cmp: Comparison): string {
  const out: string[] = [];
  const line = (text = ""): void => void out.push(text);
  line(`# Sandbox bench — changes since ${cmp.base.started_at}`);
  line();
  line(`Before: ${cmp.base.verdict}, ${cmp.base.not_contained} of ${cmp.base.total} not contained. Now: ${cmp.current.verdict}, ${cmp.current.not_contained} of ${cmp.current.total} not contained.`);
  line();
  if (cmp.unchanged) {
    line("No case was added, removed or changed, and no latency moved beyond the noise thresholds.");
    line();
  }
  line(`## Newly not contained (${cmp.regressions.length})`);
  line();
  line(cmp.regressions.length ? cmp.regressions.map((k) => `- **${k}**`).join("\n") : "None.");
  line();
  line(`## Newly contained (${cmp.fixed.length})`);
  line();
  line(cmp.fixed.length ? cmp.fixed.map((k) => `- ${k}`).join("\n") : "None.");
  line();
  line(`## New cases (${cmp.new_cases.length})`);
  line();
  line(cmp.new_cases.length ? cmp.new_cases.map((c) => `- ${c.key}: ${c.contained ? "contained" : "**NOT contained**"}`).join("\n") : "None.");
  line();
  line(`## Removed cases (${cmp.removed_cases.length})`);
  line();
  line(cmp.removed_cases.length ? cmp.removed_cases.map((k) => `- ${k}`).join("\n") : "None.");
  line();
  line(`## Changed outcomes (${cmp.changed.length})`);
  line();
  if (cmp.changed.length) {
    line("| case | field | before | after |");
    line("| --- | --- | --- | --- |");
    for (const ch of cmp.changed) for (const x of ch.changes) line(`| ${cell(ch.key)} | ${x.field} | ${cell(String(x.before))} | ${cell(String(x.after))} |`);
  } else {
    line("None.");
  }
  line();
  line(
    `## Latency deltas (${cmp.latency.length}; reported when a value moved ${LATENCY_RATIO_THRESHOLD}× either way and by more than the noise floor: ` +
      `bg p50 ${fmtMs(cmp.noise_floor_ms.p50)}, bg p99 ${fmtMs(cmp.noise_floor_ms.p99)} (the quiet baselines), regained control ${REGAINED_MIN_MS} ms)`,
  );
  line();
  if (cmp.latency.length) {
    line("| case | metric | before | after | delta | ratio |");
    line("| --- | --- | ---: | ---: | ---: | ---: |");
    for (const d of cmp.latency) line(`| ${cell(d.key)} | ${d.metric} | ${fmtMs(d.before)} | ${fmtMs(d.after)} | ${d.delta_ms >= 0 ? "+" : ""}${fmtMs(d.delta_ms)} | ${fmtRatio(d.ratio)} |`);
  } else {
    line("None.");
  }
  line();
  const b = cmp.baseline;
  line(`Quiet baseline: p50 ${fmtMs(b.p50_before)} → ${fmtMs(b.p50_after)}, p99 ${fmtMs(b.p99_before)} → ${fmtMs(b.p99_after)}.`);
  if (cmp.environment.length) {
    line();
    line("Environment changed: " + cmp.environment.map((e) => `${e.key} ${String(e.before)} → ${String(e.after)}`).join("; "));
  }
  line();
  return out.join("\n");
}
