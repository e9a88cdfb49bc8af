import { describe, expect, test } from "vitest";
import { escapeControl, escapeControlKeepLines, parseCommand, UsageError } from "../../../src/cli/common.js";
import { describePredicate, formatTrace } from "../../../src/cli/fire.js";

describe("parseCommand", () => {
  const options = { out: { type: "string", short: "o" } } as const;

  test("parses options, positionals, --help and --json", () => {
    const parsed = parseCommand("build", ["dir", "-o", "x.vcpb", "--json"], options, { min: 1, max: 1, names: "<dir>" });
    expect(parsed.positionals).toEqual(["dir"]);
    expect(parsed.values).toMatchObject({ out: "x.vcpb", json: true });
    expect(parseCommand("build", ["--help"], options, { min: 1, max: 1, names: "<dir>" }).help).toBe(true);
  });

  test.each([
    [["dir", "--bogus"], "build: unknown option '--bogus'"],
    [["dir", "--out"], "build: option '--out' needs a value"],
    [[], "build: missing <dir>"],
    [["a", "b"], "build: unexpected argument 'b'"],
  ])("usage errors name the problem: %j", (args, message) => {
    expect(() => parseCommand("build", args, options, { min: 1, max: 1, names: "<dir>" })).toThrow(new UsageError(message));
  });
});

describe("fire trace", () => {
  test("predicates read as text", () => {
    expect(describePredicate({ field: "context.x", operator: "gte", value: 7 })).toBe("context.x gte 7");
    expect(
      describePredicate({ combine: "or", children: [{ field: "event.severity", operator: "eq", value: "major" }, { field: "event.severity", operator: "eq", value: "critical" }] }),
    ).toBe('(event.severity eq "major" or event.severity eq "critical")');
  });

  test("the trace shows order, priority, skips, outcomes and the changed keys", () => {
    const text = formatTrace(
      {
        chain_id: "0123456789",
        type: "pre_inject",
        status: "completed",
        reason: null,
        aborted_by: null,
        context: { a: 2 },
        constitution: { id: "k", rules: [] },
        cascade_failure: false,
        duration_ms: 1.5,
        hook_results: [
          { hook: "skip_me", bundle: "b", scope: "deployment", trust: "deployment", status: "continue", outcome: "skipped_predicate", duration_ms: 0 },
          { hook: "change", bundle: "b", scope: "deployment", trust: "deployment", status: "modify", outcome: "ok", duration_ms: 0.25, modified_context: true, annotations: { n: 1 } },
        ],
      },
      { priorities: new Map([["skip_me", 90], ["change", 10]]), skips: new Map([["skip_me", { field: "context.s", operator: "gte", value: 7 }]]), changes: [{ path: "context.a", kind: "changed", before: 1, after: 2 }] },
    );
    expect(text).toContain("pre_inject chain 01234567: COMPLETED");
    expect(text).toMatch(/1\s+skip_me\s+b\s+90\s+continue\s+skipped_predicate/);
    expect(text).toContain("skipped: condition false: context.s gte 7");
    expect(text).toMatch(/2\s+change\s+b\s+10\s+modify\s+ok\s+0\.250/);
    expect(text).toContain("modified: context");
    expect(text).toContain("~ context.a: 1 → 2");
  });
});

describe("escapeControl", () => {
  const ESC = String.fromCharCode(0x1b);
  test("spells out C0 (line breaks included), DEL and C1; leaves other text alone", () => {
    const raw = `a${ESC}[2J\n\r\t${String.fromCharCode(0)}${String.fromCharCode(0x7f)}${String.fromCharCode(0x9b)}${String.fromCharCode(0x9f)}é€😀`;
    expect(escapeControl(raw)).toBe("a\\x1b[2J\\n\\r\\t\\x00\\x7f\\x9b\\x9fé€😀");
  });
  test("the line-keeping form leaves line breaks and tabs, escapes the rest", () => {
    expect(escapeControlKeepLines(`x\n\ty${ESC}]52;c;QQ==${String.fromCharCode(7)}\r`)).toBe("x\n\ty\\x1b]52;c;QQ==\\x07\\r");
  });
});
