/**
 * The decision record (one per chain, every profile; GET /v1/decisions and the `decision` of each
 * decision-stream event) and the Decisions page's filters as they live in the URL. Pure: no DOM, so
 * the unit tests read it directly.
 */
export type Outcome = "allow" | "block" | "modify" | "ask";
export const OUTCOMES: readonly Outcome[] = ["allow", "block", "modify", "ask"];

export interface DecisionRecord {
  chain_id: string;
  at: string;
  profile: string;
  event: string;
  outcome: Outcome;
  errors: number;
  decided_by: { hook: string; bundle: string; revision?: string } | null;
  reason: string | null;
  subject: { kind: string; tool?: string; command?: string; path?: string; prompt_sha256?: string; vcp_type?: string; summary: string };
  hooks: Array<{ hook: string; bundle: string; outcome: string; verdict?: string; duration_ms: number; reason?: string }>;
  changes: Array<{ hook: string; op: string; path: string }>;
  session: string | null;
  client: string | null;
}

/** A hook outcome that is a failure (threw, timed out, invalid output, crashed, refused) — not a skip. */
export function hookFailed(outcome: string): boolean {
  return outcome !== "ok" && !outcome.startsWith("skipped");
}

/** The Decisions page's time ranges: a relative window (live rows join it) or a custom since/until. */
export const RANGES = { "15m": 15 * 60_000, "1h": 60 * 60_000, "24h": 24 * 60 * 60_000 } as const;
export type Range = keyof typeof RANGES | "custom";
export const RANGE_LABELS: Record<Range, string> = { "15m": "last 15 minutes", "1h": "last hour", "24h": "last day", custom: "custom…" };

export interface DecisionFilters {
  range: Range;
  /** Custom range only: local date-time strings as a datetime-local input holds them. */
  since: string;
  until: string;
  outcome: Outcome | "";
  profile: string;
  bundle: string;
  hook: string;
  session: string;
  subject: string;
  /** The chain whose detail is open. */
  chain: string;
}

export const DEFAULT_FILTERS: DecisionFilters = { range: "1h", since: "", until: "", outcome: "", profile: "", bundle: "", hook: "", session: "", subject: "", chain: "" };

const TEXT_KEYS = ["since", "until", "profile", "bundle", "hook", "session", "subject", "chain"] as const;

/** Filters from the query part of the page's hash (`#/decisions?outcome=block&chain=…`); unknown values fall back to the defaults. */
export function filtersFromQuery(query: string): DecisionFilters {
  const p = new URLSearchParams(query);
  const out: DecisionFilters = { ...DEFAULT_FILTERS };
  const range = p.get("range");
  if (range !== null && (range === "custom" || range in RANGES)) out.range = range as Range;
  const outcome = p.get("outcome");
  if (outcome !== null && (OUTCOMES as readonly string[]).includes(outcome)) out.outcome = outcome as Outcome;
  for (const key of TEXT_KEYS) out[key] = (p.get(key) ?? "").slice(0, 256);
  return out;
}

/** The query part of a deep link: only what differs from the defaults, in a stable order. */
export function queryOfFilters(f: DecisionFilters): string {
  const p = new URLSearchParams();
  if (f.range !== DEFAULT_FILTERS.range) p.set("range", f.range);
  if (f.outcome) p.set("outcome", f.outcome);
  for (const key of TEXT_KEYS) {
    if ((key === "since" || key === "until") && f.range !== "custom") continue;
    if (f[key]) p.set(key, f[key]);
  }
  return p.toString();
}

/** `since`/`until` for GET /v1/decisions (ISO), from a relative range at `now` or the custom inputs. */
export function windowOf(f: DecisionFilters, now: number): { since: string | null; until: string | null } {
  if (f.range !== "custom") return { since: new Date(now - RANGES[f.range]).toISOString(), until: null };
  const iso = (local: string) => {
    if (local === "") return null;
    const t = new Date(local).getTime();
    return Number.isNaN(t) ? null : new Date(t).toISOString();
  };
  return { since: iso(f.since), until: iso(f.until) };
}

/** The GET /v1/decisions query for the filters (without `limit`/`cursor`). */
export function apiQuery(f: DecisionFilters, now: number): URLSearchParams {
  const p = new URLSearchParams();
  const { since, until } = windowOf(f, now);
  if (since !== null) p.set("since", since);
  if (until !== null) p.set("until", until);
  if (f.outcome) p.set("outcome", f.outcome);
  for (const key of ["profile", "bundle", "hook", "session", "subject"] as const) if (f[key].trim()) p.set(key, f[key].trim());
  return p;
}

/** Whether a live record belongs in the list the filters show (the same rules the server applies). */
export function recordMatches(d: DecisionRecord, f: DecisionFilters, now: number): boolean {
  const { since, until } = windowOf(f, now);
  const at = Date.parse(d.at);
  if (since !== null && at < Date.parse(since)) return false;
  if (until !== null && at > Date.parse(until)) return false;
  if (f.outcome && d.outcome !== f.outcome) return false;
  if (f.profile.trim() && d.profile !== f.profile.trim()) return false;
  if (f.bundle.trim() && !d.hooks.some((x) => x.bundle === f.bundle.trim())) return false;
  if (f.hook.trim() && !d.hooks.some((x) => x.hook === f.hook.trim())) return false;
  if (f.session.trim() && d.session !== f.session.trim()) return false;
  if (f.subject.trim() && !d.subject.summary.toLowerCase().includes(f.subject.trim().toLowerCase())) return false;
  return true;
}

/** How a row names the chain: "gemini-cli · BeforeTool", or "vcp · pre_inject". */
export function chainLabel(d: Pick<DecisionRecord, "profile" | "event">): string {
  return `${d.profile} · ${d.event}`;
}

/** The records as JSON lines (what the export downloads): one record per line, in the order given. */
export function toJsonLines(records: readonly DecisionRecord[]): string {
  return records.map((r) => JSON.stringify(r)).join("\n") + (records.length > 0 ? "\n" : "");
}

/** A decision-stream event: the record under `decision`, beside the older per-chain fields. */
export interface StreamEvent {
  decision?: DecisionRecord;
  chain_id: string;
  type?: string;
  profile?: string;
  event?: string;
  ts: string;
  session_id: string;
  status: "completed" | "aborted";
  reason: string | null;
  aborted_by: string | null;
  hooks: Array<{ hook: string; bundle: string; outcome: string; duration_ms: number; reason?: string; error?: string; annotations?: unknown; modification?: unknown }>;
}

/**
 * The record of a stream event. A server older than the decision record sends only the per-chain
 * fields: the record is made from them (no subject beyond the chain's type, an abort as a block).
 */
export function recordOfStreamEvent(e: StreamEvent): DecisionRecord {
  if (e.decision !== undefined) return e.decision;
  const abortedBy = e.aborted_by === null ? undefined : e.hooks.find((x) => x.hook === e.aborted_by);
  const modified = e.hooks.filter((x) => Array.isArray(x.modification) && x.modification.length > 0);
  const event = e.event ?? e.type ?? "";
  return {
    chain_id: e.chain_id,
    at: e.ts,
    profile: e.profile ?? "vcp",
    event,
    outcome: e.status === "aborted" ? "block" : modified.length > 0 ? "modify" : "allow",
    errors: e.hooks.filter((x) => hookFailed(x.outcome)).length,
    decided_by: abortedBy ? { hook: abortedBy.hook, bundle: abortedBy.bundle } : null,
    reason: e.reason,
    subject: e.profile === undefined ? { kind: "vcp", vcp_type: event, summary: event } : { kind: "event", summary: event },
    hooks: e.hooks.map((x) => ({ hook: x.hook, bundle: x.bundle, outcome: x.outcome, duration_ms: x.duration_ms, ...(x.reason !== undefined ? { reason: x.reason } : {}) })),
    changes: modified.flatMap((x) => (x.modification as Array<{ op: string; path: string }>).map((m) => ({ hook: x.hook, op: m.op, path: m.path }))),
    session: e.session_id || null,
    client: null,
  };
}
