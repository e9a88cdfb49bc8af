/**
 * How Health ranks hooks and bundles: problems first (quarantined, errors, timeouts, demoted or slow,
 * then p99), and the per-bundle rollup. Pure: no DOM, unit-tested.
 */
export interface HookRow {
  /** `bundle/hook` (plus ` @session` for a session hook): unique per row. */
  key: string;
  hook: string;
  bundle: string;
  /** "pre_inject", or "gemini-cli · BeforeTool". */
  event: string;
  scope: string;
  enabled: boolean;
  calls: number;
  errors: number;
  timeouts: number;
  p50_ms: number | null;
  p99_ms: number | null;
  quarantined: boolean;
  demoted: boolean;
  slow: boolean;
}

export type SortKey = "problems" | "hook" | "bundle" | "event" | "calls" | "errors" | "timeouts" | "p50_ms" | "p99_ms";

/** The problems of a row, worst first, as the chips read ("quarantined", "3 errors", …); [] when healthy. */
export function problemsOf(r: Pick<HookRow, "quarantined" | "errors" | "timeouts" | "demoted" | "slow">): string[] {
  const out: string[] = [];
  if (r.quarantined) out.push("quarantined");
  if (r.errors > 0) out.push(`${r.errors} error${r.errors === 1 ? "" : "s"}`);
  if (r.timeouts > 0) out.push(`${r.timeouts} timeout${r.timeouts === 1 ? "" : "s"}`);
  if (r.demoted) out.push("demoted");
  if (r.slow) out.push("slow");
  return out;
}

/** Problems first: quarantined, then the share of failed calls, then failures, demoted/slow, then p99. */
export function problemRank(a: HookRow, b: HookRow): number {
  const tiers = (r: HookRow): number[] => [
    r.quarantined ? 1 : 0,
    r.errors + r.timeouts > 0 ? 1 : 0,
    r.calls > 0 ? (r.errors + r.timeouts) / r.calls : 0,
    r.errors + r.timeouts,
    r.demoted || r.slow ? 1 : 0,
    r.p99_ms ?? -1,
    r.calls,
  ];
  const ta = tiers(a);
  const tb = tiers(b);
  for (let i = 0; i < ta.length; i++) if (ta[i] !== tb[i]) return tb[i]! - ta[i]!;
  return a.key.localeCompare(b.key);
}

/** Rows sorted by a column; numbers largest first when descending, names A→Z when ascending. */
export function sortRows(rows: readonly HookRow[], key: SortKey, descending: boolean): HookRow[] {
  const out = [...rows];
  if (key === "problems") return out.sort(problemRank);
  out.sort((a, b) => {
    const x = a[key];
    const y = b[key];
    const c = typeof x === "string" || typeof y === "string" ? String(x).localeCompare(String(y)) : (x ?? -1) - ((y as number | null) ?? -1);
    return (descending ? -c : c) || a.key.localeCompare(b.key);
  });
  return out;
}

export interface BundleRollup {
  bundle: string;
  hooks: number;
  calls: number;
  errors: number;
  timeouts: number;
  worst_p99_ms: number | null;
  quarantined: boolean;
  demoted: boolean;
  slow: boolean;
}

/** One row per bundle, problems first (the same order as the hooks). */
export function rollup(rows: readonly HookRow[]): BundleRollup[] {
  const by = new Map<string, BundleRollup>();
  for (const r of rows) {
    let b = by.get(r.bundle);
    if (b === undefined) by.set(r.bundle, (b = { bundle: r.bundle, hooks: 0, calls: 0, errors: 0, timeouts: 0, worst_p99_ms: null, quarantined: false, demoted: false, slow: false }));
    b.hooks++;
    b.calls += r.calls;
    b.errors += r.errors;
    b.timeouts += r.timeouts;
    if (r.p99_ms !== null) b.worst_p99_ms = Math.max(b.worst_p99_ms ?? 0, r.p99_ms);
    b.quarantined ||= r.quarantined;
    b.demoted ||= r.demoted;
    b.slow ||= r.slow;
  }
  const asRow = (b: BundleRollup): HookRow => ({ key: b.bundle, hook: "", bundle: b.bundle, event: "", scope: "", enabled: true, calls: b.calls, errors: b.errors, timeouts: b.timeouts, p50_ms: null, p99_ms: b.worst_p99_ms, quarantined: b.quarantined, demoted: b.demoted, slow: b.slow });
  return [...by.values()].sort((a, b) => problemRank(asRow(a), asRow(b)));
}
