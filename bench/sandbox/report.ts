/**
 * The sandbox bench report: its versioned JSON schema, the verdict, and the markdown a security
 * reviewer signs off on. Pure functions only (no runtime, no I/O), so test/unit/bench/ can check
 * them without a sandbox.
 *
 * Layout of report.md (the order is the point: what failed comes first):
 * ```
 *   # verdict line
 *   ## Not contained          ← every failing case, before anything else
 *   ## Summary                ← one row per category
 *   ## Environment · Threat model · Background baseline
 *   ## <category> …           ← one table per category, not-contained rows first
 * ```
 */

/** Bump `SANDBOX_REPORT_VERSION` on any incompatible change of {@link SandboxReport}. */
export const SANDBOX_REPORT_SCHEMA = "vcp-hooks/bench-sandbox";
export const SANDBOX_REPORT_VERSION = 1;

/** Report categories in the order the issue lists them (cross-call is the corpus's extra one). */
export const REPORT_CATEGORIES = [
  { id: "resource-exhaustion", title: "Resource exhaustion" },
  { id: "process-killers", title: "Process killers" },
  { id: "escape-probes", title: "Escape probes" },
  { id: "exfiltration", title: "Exfiltration" },
  { id: "result-tampering", title: "Result tampering" },
  { id: "cross-call", title: "Cross-call state" },
  { id: "integrity", title: "Integrity" },
  { id: "predicate-dos", title: "Predicate DoS" },
  { id: "tenant-isolation", title: "Tenant isolation" },
  { id: "attribution", title: "Attribution" },
  { id: "profile-hooks", title: "Profile hooks" },
  { id: "profile-boundary", title: "Profile boundary" },
] as const;
export type ReportCategory = (typeof REPORT_CATEGORIES)[number]["id"];

export type RecycleKind = "none" | "isolate" | "process";

/** Latency of the well-behaved background chains over a window (ms). */
export interface WindowStats {
  window_ms: number;
  samples: number;
  p50_ms: number | null;
  p99_ms: number | null;
  /** Background chains that did not come back exactly right (rejected, a hook failed, wrong result). */
  errors: number;
  /** `errors` by kind: `hook:crashed`, `rejected:SANDBOX_OVERLOADED`, `wrong-result`, … */
  error_kinds: Record<string, number>;
}

export interface CaseWindow extends WindowStats {
  /** p50 / baseline p50, p99 / baseline p99 (null when either side has no samples). */
  p50_ratio: number | null;
  p99_ratio: number | null;
}

export interface CaseExpected {
  outcome: string | null;
  status: string | null;
  install_error: string | null;
  error_matches: string | null;
  annotations: Record<string, unknown> | null;
  recycled: RecycleKind;
}

export interface CaseObserved {
  /** Hook outcome, or `install_refused` / `installed` for install cases, or null when nothing came back. */
  outcome: string | null;
  status: string | null;
  install_error: string | null;
  /** Coarse class of the error (RangeError, MemoryLimit, Timeout, HostCrash, a VcpError code, …). */
  error_class: string | null;
  /** Error text, truncated. */
  error: string | null;
  annotations: Record<string, unknown> | null;
  duration_ms: number | null;
  chain_status: string | null;
}

export interface CaseReport {
  id: string;
  category: ReportCategory;
  title: string;
  source: "corpus" | "integrity" | "scenario";
  contained: boolean;
  /** Why the case is not contained (empty when contained). */
  reasons: string[];
  expected: CaseExpected;
  observed: CaseObserved;
  control: {
    /** Wall time from the attack's (last) fire() until it resolved: the host had control again. */
    regained_ms: number | null;
    /**
     * Of regained_ms, the time the sandbox host's busiest thread waited for a CPU (starvation.ts): the
     * machine's load. The `max_fire_ms` cap applies to the rest. Absent in reports before 2026-11-28.
     */
    starved_ms?: number | null;
    /** From the attack's fire() until the next well-behaved chain succeeded (covers process restarts). */
    recovered_ms: number | null;
    /** The attack did not return within its deadline: the runtime was replaced. */
    wedged: boolean;
  };
  recycled: {
    expected: RecycleKind;
    observed: RecycleKind;
    /** `measured` from status().sandbox; `inferred` from the outcome when the runtime does not expose it. */
    basis: "measured" | "inferred";
    process_restarts: number;
  };
  /** A well-behaved chain was served exactly after the case (null: the case does not use the runtime). */
  served_after: boolean | null;
  /** Background chains during the attack window, against the quiet baseline (null: not measured, see notes). */
  background: CaseWindow | null;
  /** Caveats a reviewer should read with the row (e.g. the background load was paused). */
  notes: string[];
}

export interface CategoryStatus {
  id: ReportCategory;
  title: string;
  covered: boolean;
  /** Why a category has no cases ("not yet covered: …"). */
  note: string | null;
}

export interface Summary {
  total: number;
  contained: number;
  not_contained: number;
  not_contained_ids: string[];
  process_restarts: number;
  wedged: number;
  background_errors: number;
  verdict: "PASS" | "FAIL";
}

export interface SandboxReport {
  schema: typeof SANDBOX_REPORT_SCHEMA;
  version: number;
  started_at: string;
  duration_s: number;
  quick: boolean;
  /** Set when only part of the corpus ran (--quick, a filter). */
  subset: string | null;
  environment: Record<string, string | number>;
  config: Record<string, unknown>;
  threat_model: string;
  baseline: WindowStats;
  categories: CategoryStatus[];
  cases: CaseReport[];
  summary: Summary;
}

export const THREAT_MODEL =
  "Hook actions are untrusted JavaScript from policy bundles: each runs in its own isolated-vm isolate (one per worker " +
  "and bundle) inside a piscina worker of a supervised sandbox process, with only the ECMAScript built-ins and a frozen " +
  "`vcp` object. The attacker controls a bundle's code, manifest conditions and results, at any trust level, and aims " +
  "to (a) exhaust CPU, memory or the process so that other bundles' chains stall or die, (b) reach host objects, Node " +
  "APIs, the environment or the network, (c) tamper with what the runtime records or what the next hook sees, " +
  "(d) break constitution integrity, or (e) stall the host with hostile predicates. A case is contained when the runtime " +
  "reports exactly the expected outcome, the probes found only the safe values, no connection reached the listener, " +
  "and the same runtime still serves a well-behaved chain exactly afterwards. Out of scope: the host OS, the Node/V8 " +
  "binary itself, side channels (timing beyond the millisecond clock) and a malicious deployment operator.";

/** Summary and verdict: any not-contained case fails the review. */
export function summarize(cases: readonly CaseReport[]): Summary {
  const failing = orderNotContainedFirst(cases).filter((c) => !c.contained);
  return {
    total: cases.length,
    contained: cases.length - failing.length,
    not_contained: failing.length,
    not_contained_ids: failing.map((c) => `${c.category}/${c.id}`),
    process_restarts: cases.reduce((n, c) => n + c.recycled.process_restarts, 0),
    wedged: cases.filter((c) => c.control.wedged).length,
    background_errors: cases.reduce((n, c) => n + (c.background?.errors ?? 0), 0),
    verdict: failing.length === 0 ? "PASS" : "FAIL",
  };
}

/** Process exit status of a run: 1 if any case is not contained. */
export function exitCodeOf(report: Pick<SandboxReport, "cases">): 0 | 1 {
  return report.cases.some((c) => !c.contained) ? 1 : 0;
}

/** Stable order: not-contained cases first, then category order, then id. */
export function orderNotContainedFirst<T extends Pick<CaseReport, "contained" | "category" | "id">>(cases: readonly T[]): T[] {
  const rank = (c: T): number => REPORT_CATEGORIES.findIndex((k) => k.id === c.category);
  return [...cases].sort((a, b) => Number(a.contained) - Number(b.contained) || rank(a) - rank(b) || a.id.localeCompare(b.id));
}

// ── markdown ───────────────────────────────────────────────────────────────────────────────────

export function fmtMs(ms: number | null | undefined, digits?: number): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "–";
  const d = digits ?? (ms < 10 ? 2 : ms < 100 ? 1 : 0);
  return `${ms.toFixed(d)} ms`;
}

export function fmtRatio(x: number | null | undefined): string {
  return x === null || x === undefined || !Number.isFinite(x) ? "–" : `${x.toFixed(x >= 10 ? 0 : 1)}×`;
}

/** Escape a table cell: pipes and newlines would break the row. */
export function cell(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\|/g, "\\|").replace(/\r?\n/g, " ").replace(/`/g, "'");
}

function expectedText(e: CaseExpected): string {
  if (e.install_error) return `install refused ${e.install_error}`;
  // Scenario rows state a property in `outcome` and have no per-hook status.
  if (e.status === null) return e.outcome ?? "?";
  return `${e.outcome ?? "?"}/${e.status}`;
}

function observedText(o: CaseObserved): string {
  if (o.install_error) return `install refused ${o.install_error}`;
  if (o.outcome === null) return "nothing returned";
  return o.status ? `${o.outcome}/${o.status}` : o.outcome;
}

function bgText(w: CaseWindow | null, notes: readonly string[] = []): string {
  if (w === null) return notes.length ? notes.join("; ") : "–";
  if (w.samples === 0) return "no samples";
  return `${fmtMs(w.p50_ms)} / ${fmtMs(w.p99_ms)} (${fmtRatio(w.p50_ratio)} / ${fmtRatio(w.p99_ratio)})`;
}

function recycledText(c: CaseReport): string {
  const obs = c.recycled.basis === "inferred" ? `${c.recycled.observed}*` : c.recycled.observed;
  return c.recycled.expected === c.recycled.observed ? obs : `${obs} (exp. ${c.recycled.expected})`;
}

/** report.md. Not-contained cases come first: in their own section and at the top of each table. */
export function renderMarkdown(report: SandboxReport): string {
  const s = report.summary;
  const out: string[] = [];
  const line = (text = ""): void => void out.push(text);
  line(`# Sandbox bench — ${s.verdict === "PASS" ? "PASS: every case contained" : `FAIL: ${s.not_contained} of ${s.total} cases NOT contained`}`);
  line();
  line(
    `${report.started_at} · ${report.duration_s.toFixed(0)} s · ${s.total} cases · ${s.contained} contained · **${s.not_contained} not contained** · ` +
      `${s.process_restarts} sandbox process restart(s) · ${s.wedged} wedged · ${s.background_errors} background chain error(s)` +
      (report.subset ? ` · subset: ${report.subset}` : ""),
  );
  line();

  line("## Not contained");
  line();
  const failing = orderNotContainedFirst(report.cases).filter((c) => !c.contained);
  if (failing.length === 0) {
    line("None.");
  } else {
    line("| case | expected | observed | error class | why |");
    line("| --- | --- | --- | --- | --- |");
    for (const c of failing) {
      line(`| ${cell(`${c.category}/${c.id}`)} | ${cell(expectedText(c.expected))} | ${cell(observedText(c.observed))} | ${cell(c.observed.error_class ?? "–")} | ${cell(c.reasons.join("; "))} |`);
    }
  }
  line();

  line("## Summary");
  line();
  line("| category | cases | contained | not contained | max regained control | worst bg p99 (× baseline) | process restarts | bg errors |");
  line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const k of report.categories) {
    const cases = report.cases.filter((c) => c.category === k.id);
    if (!k.covered || cases.length === 0) {
      line(`| ${k.title} | 0 | – | – | – | – | – | – |`);
      continue;
    }
    const bad = cases.filter((c) => !c.contained).length;
    const regained = Math.max(...cases.map((c) => c.control.regained_ms ?? 0));
    const ratios = cases.map((c) => c.background?.p99_ratio).filter((x): x is number => typeof x === "number" && Number.isFinite(x));
    const restarts = cases.reduce((n, c) => n + c.recycled.process_restarts, 0);
    const bgErrors = cases.reduce((n, c) => n + (c.background?.errors ?? 0), 0);
    line(
      `| ${k.title} | ${cases.length} | ${cases.length - bad} | ${bad === 0 ? "0" : `**${bad}**`} | ${fmtMs(regained)} | ${ratios.length ? fmtRatio(Math.max(...ratios)) : "–"} | ${restarts} | ${bgErrors} |`,
    );
  }
  line(`| **total** | ${s.total} | ${s.contained} | ${s.not_contained === 0 ? "0" : `**${s.not_contained}**`} | | | ${s.process_restarts} | ${s.background_errors} |`);
  line();
  const uncovered = report.categories.filter((k) => !k.covered);
  for (const k of uncovered) line(`- ${k.title}: ${k.note ?? "not yet covered"}`);
  if (uncovered.length) line();

  line("## Environment");
  line();
  for (const [key, value] of Object.entries(report.environment)) line(`- ${key}: ${value}`);
  line();
  line("Configuration:");
  line();
  line("```json");
  line(JSON.stringify(report.config, null, 2));
  line("```");
  line();

  line("## Threat model");
  line();
  line(report.threat_model);
  line();

  line("## Background load");
  line();
  const b = report.baseline;
  line(
    `Well-behaved 3-hook chains (3 bundles) fire in a closed loop during every case. Quiet baseline over ${fmtMs(b.window_ms, 0)}: ` +
      `${b.samples} chains, p50 ${fmtMs(b.p50_ms)}, p99 ${fmtMs(b.p99_ms)}, ${b.errors} error(s). ` +
      "Per case, \"bg p50 / p99\" is the same measurement over the attack window (from the attack's fire until a well-behaved chain " +
      "was served again, at least the minimum window), with the ratio to the baseline; \"bg errors\" counts background chains that " +
      "did not come back exactly right (e.g. `crashed` while the sandbox process restarted): the blast radius. " +
      "Multi-call cases (state one call leaves for the next) run with the load paused: isolates are per (worker, bundle), so under " +
      "load consecutive calls land on different workers' isolates and such a probe would test nothing.",
  );
  line();
  line("\"regained\" is the wall time of the attack's fire() (the host had control again); \"recovered\" runs until the next well-behaved chain succeeded. Recycled values marked * are inferred from the outcome (the runtime does not expose isolate recreation).");
  line();

  for (const k of report.categories) {
    line(`## ${k.title}`);
    line();
    const cases = orderNotContainedFirst(report.cases.filter((c) => c.category === k.id));
    if (!k.covered || cases.length === 0) {
      line(`Not yet covered${k.note ? `: ${k.note}` : "."}`);
      line();
      continue;
    }
    line("| case | contained | expected | observed | error class | regained / recovered | recycled | bg p50 / p99 (× baseline) | bg errors |");
    line("| --- | --- | --- | --- | --- | ---: | --- | ---: | ---: |");
    for (const c of cases) {
      line(
        `| ${cell(c.id)} | ${c.contained ? "yes" : `**NO**: ${cell(c.reasons.join("; "))}`} | ${cell(expectedText(c.expected))} | ${cell(observedText(c.observed))} | ${cell(c.observed.error_class ?? "–")} | ` +
          `${fmtMs(c.control.regained_ms)} / ${fmtMs(c.control.recovered_ms)} | ${recycledText(c)} | ${cell(bgText(c.background, c.notes))} | ${c.background?.errors ?? "–"} |`,
      );
    }
    line();
  }
  return out.join("\n");
}
