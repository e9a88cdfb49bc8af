// The console's pure rules behind issue 28: the Decisions filters in the URL and for the API, which
// live records join the list, Health's problems-first order and rollup, routes, the approval dialog's
// default option.
import { describe, expect, test } from "vitest";
import { apiQuery, DEFAULT_FILTERS, filtersFromQuery, queryOfFilters, recordMatches, recordOfStreamEvent, toJsonLines, type DecisionRecord, type StreamEvent } from "../../../console/src/decision.js";
import { problemsOf, rollup, sortRows, type HookRow } from "../../../console/src/health-rank.js";
import { parseHash } from "../../../console/src/route.js";
import { countdown, defaultOption } from "../../../console/src/approval-options.js";

const NOW = Date.parse("2026-11-28T10:00:00.000Z");
const record = (over: Partial<DecisionRecord> = {}): DecisionRecord => ({
  chain_id: "c1",
  at: "2026-11-28T09:50:00.000Z",
  profile: "gemini-cli",
  event: "BeforeTool",
  outcome: "block",
  errors: 0,
  decided_by: { hook: "block_destructive_shell", bundle: "gemini-safe-shell" },
  reason: "blocked: rm -rf /",
  subject: { kind: "tool", tool: "run_shell_command", command: "rm -rf /", summary: "run_shell_command: rm -rf /" },
  hooks: [{ hook: "block_destructive_shell", bundle: "gemini-safe-shell", outcome: "ok", verdict: "block", duration_ms: 0.3 }],
  changes: [],
  session: "gem-1",
  client: "app",
  ...over,
});

describe("Decisions filters", () => {
  test("the URL holds only what differs from the defaults, and reads back the same", () => {
    const f = { ...DEFAULT_FILTERS, outcome: "block" as const, subject: "rm -rf", chain: "c1" };
    expect(queryOfFilters(f)).toBe("outcome=block&subject=rm+-rf&chain=c1");
    expect(filtersFromQuery(queryOfFilters(f))).toEqual(f);
    expect(queryOfFilters(DEFAULT_FILTERS)).toBe("");
  });

  test("unknown values in a link fall back to the defaults; text is bounded", () => {
    const f = filtersFromQuery(`range=forever&outcome=maybe&subject=${"x".repeat(1000)}`);
    expect(f.range).toBe("1h");
    expect(f.outcome).toBe("");
    expect(f.subject).toHaveLength(256);
  });

  test("the API query: a relative range is a since; custom from/to are ISO; empty filters are left out", () => {
    expect(Object.fromEntries(apiQuery({ ...DEFAULT_FILTERS, range: "15m", outcome: "block", profile: "gemini-cli" }, NOW))).toEqual({ since: "2026-11-28T09:45:00.000Z", outcome: "block", profile: "gemini-cli" });
    const custom = apiQuery({ ...DEFAULT_FILTERS, range: "custom", since: "2026-11-28T08:00", until: "" }, NOW);
    expect(custom.has("until")).toBe(false);
    expect(Date.parse(custom.get("since")!)).toBe(new Date("2026-11-28T08:00").getTime());
  });

  test("a live record joins the list only when it matches every filter", () => {
    const f = { ...DEFAULT_FILTERS, range: "15m" as const };
    expect(recordMatches(record(), f, NOW)).toBe(true);
    expect(recordMatches(record({ at: "2026-11-28T09:40:00.000Z" }), f, NOW)).toBe(false);
    expect(recordMatches(record(), { ...f, subject: "RM -RF" }, NOW)).toBe(true);
    expect(recordMatches(record(), { ...f, outcome: "allow" }, NOW)).toBe(false);
    expect(recordMatches(record(), { ...f, hook: "other" }, NOW)).toBe(false);
    expect(recordMatches(record(), { ...f, bundle: "gemini-safe-shell", session: "gem-1", profile: "gemini-cli" }, NOW)).toBe(true);
  });

  test("a stream event carries the record; an older server's event is made into one (an abort is a block)", () => {
    const legacy: StreamEvent = { chain_id: "c2", type: "pre_inject", ts: "2026-11-28T09:59:00.000Z", session_id: "s", status: "completed", reason: null, aborted_by: null, hooks: [{ hook: "explode", bundle: "flaky", outcome: "error", duration_ms: 1 }, { hook: "redact", bundle: "b", outcome: "ok", duration_ms: 1, modification: [{ op: "replace", path: "/context/note", value: "x" }] }] };
    expect(recordOfStreamEvent({ ...legacy, decision: record() })).toEqual(record());
    expect(recordOfStreamEvent(legacy)).toMatchObject({ profile: "vcp", event: "pre_inject", outcome: "modify", errors: 1, changes: [{ hook: "redact", op: "replace", path: "/context/note" }], subject: { kind: "vcp", summary: "pre_inject" } });
    expect(recordOfStreamEvent({ ...legacy, status: "aborted", aborted_by: "explode", reason: "no" })).toMatchObject({ outcome: "block", decided_by: { hook: "explode", bundle: "flaky" }, reason: "no" });
  });

  test("the export is one record per line", () => {
    const text = toJsonLines([record(), record({ chain_id: "c2" })]);
    expect(text.split("\n")).toHaveLength(3);
    expect(JSON.parse(text.split("\n")[1]!).chain_id).toBe("c2");
    expect(toJsonLines([])).toBe("");
  });
});

describe("Health: problems first", () => {
  const row = (key: string, over: Partial<HookRow> = {}): HookRow => ({ key, hook: key, bundle: key.split("/")[0]!, event: "pre_inject", scope: "deployment", enabled: true, calls: 100, errors: 0, timeouts: 0, p50_ms: 1, p99_ms: 2, quarantined: false, demoted: false, slow: false, ...over });
  const rows = [
    row("a/fast"),
    row("b/slowest", { p99_ms: 2600 }),
    row("c/failing", { errors: 11, p99_ms: 5 }),
    row("d/demoted", { demoted: true }),
    row("e/quarantined", { quarantined: true }),
    row("f/timeouts", { timeouts: 2 }),
  ];

  test("quarantined, then failures by share, then demoted or slow, then p99", () => {
    expect(sortRows(rows, "problems", true).map((r) => r.key)).toEqual(["e/quarantined", "c/failing", "f/timeouts", "d/demoted", "b/slowest", "a/fast"]);
  });

  test("any column sorts both ways", () => {
    expect(sortRows(rows, "p99_ms", true)[0]!.key).toBe("b/slowest");
    expect(sortRows(rows, "hook", false).map((r) => r.hook)[0]).toBe("a/fast");
    expect(sortRows(rows, "hook", true).map((r) => r.hook)[0]).toBe("f/timeouts");
  });

  test("the chips name each problem; a healthy hook has none", () => {
    expect(problemsOf(rows[2]!)).toEqual(["11 errors"]);
    expect(problemsOf(row("x", { quarantined: true, errors: 1, timeouts: 1, slow: true }))).toEqual(["quarantined", "1 error", "1 timeout", "slow"]);
    expect(problemsOf(rows[0]!)).toEqual([]);
  });

  test("the per-bundle rollup sums and puts the failing bundle first", () => {
    const r = rollup([row("x/one", { errors: 3 }), row("x/two", { p99_ms: 9 }), row("y/ok")]);
    expect(r.map((b) => [b.bundle, b.hooks, b.calls, b.errors, b.worst_p99_ms])).toEqual([
      ["x", 2, 200, 3, 9],
      ["y", 1, 100, 0, 2],
    ]);
  });
});

describe("routes and the approval dialog", () => {
  const PAGES = ["decisions", "health", "bundles"];
  test("page, param and query of a hash; an unknown page is the first", () => {
    expect(parseHash("#/decisions?outcome=block&chain=c1", PAGES)).toEqual({ id: "decisions", param: "", query: "outcome=block&chain=c1" });
    expect(parseHash("#/bundles/gemini-safe-shell", PAGES)).toEqual({ id: "bundles", param: "gemini-safe-shell", query: "" });
    expect(parseHash("#/bundles/%E0%A4%A", PAGES).param).toBe("");
    expect(parseHash("#main", PAGES)).toEqual({ id: "decisions", param: "", query: "" });
  });

  test("the default decision's option: the first refusing one for deny, the first granting one for allow", () => {
    expect(defaultOption(["Allow once", "Allow always", "Deny"], "deny")).toBe(2);
    expect(defaultOption(["Allow once", "Allow always", "Deny"], "allow")).toBe(0);
    expect(defaultOption(["Ship it", "Hold"], "allow")).toBe(0);
    expect(countdown("2026-11-28T10:04:59.100Z", NOW)).toBe("5:00");
    expect(countdown("2026-11-28T09:00:00.000Z", NOW)).toBe("0:00");
  });
});
