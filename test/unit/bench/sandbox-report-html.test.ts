import { describe, expect, test } from "vitest";
import { bystanderChart, esc, renderHtml } from "../../../bench/sandbox/report-html.js";
import { makeCase, makeReport, notContained } from "./sandbox-fixtures.js";

const XSS = "<img src=x onerror=alert(1)>";

describe("report.html", () => {
  const cases = [
    makeCase("cpu-loop", "resource-exhaustion"),
    notContained(makeCase("bigint-cpu", "resource-exhaustion", { background: { window_ms: 300, samples: 50, p50_ms: 2, p99_ms: 9, errors: 1, error_kinds: {}, p50_ratio: 2, p99_ratio: 4.5 } }), `error text ${XSS}`),
    makeCase("set-oom", "process-killers", { background: null, notes: ["background paused"] }),
  ];
  const html = renderHtml(makeReport(cases));

  test("the verdict says FAIL with the count of cases not contained", () => {
    expect(html).toMatch(/<p class="verdict fail" id="verdict"><strong>FAIL — 1 of 3 cases NOT contained<\/strong><\/p>/);
    expect(renderHtml(makeReport([makeCase("a", "resource-exhaustion")]))).toContain("PASS — every one of 1 cases contained");
  });

  test("containment per category: counts, and an uncovered category is named, not dropped", () => {
    const table = html.slice(html.indexOf('<table id="categories">'), html.indexOf("</table>", html.indexOf('<table id="categories">')));
    expect(table).toMatch(/<tr class="bad"><th>Resource exhaustion<\/th><td class="n">2<\/td><td class="n">1<\/td><td class="n no">1<\/td><td class="n">4\.5×<\/td>/);
    expect(table).toContain("<th>Process killers</th><td class=\"n\">1</td><td class=\"n\">1</td><td class=\"n\">0</td>");
    expect(table).toContain("<th>Integrity</th><td colspan=\"6\">not covered: not yet covered: no checker</td>");
  });

  test("one bar per measured attack, the failing one red, with the quiet baseline line; unmeasured cases get no bar", () => {
    const chart = bystanderChart("Resource exhaustion", cases.slice(0, 2), 2);
    expect(chart.match(/<rect /g)).toHaveLength(2);
    expect(chart).toMatch(/<rect [^>]*fill="#b3261e"><title>resource-exhaustion\/bigint-cpu: p99 9\.00 ms \(4\.5× baseline\)<\/title>/);
    expect(chart).toContain("quiet p99 2.00 ms");
    expect(bystanderChart("Process killers", [cases[2]!], 2)).toBe("");
  });

  test("every case is listed, the not-contained one first, with its reason", () => {
    const table = html.slice(html.indexOf('<table id="cases">'));
    const order = ["resource-exhaustion/bigint-cpu", "resource-exhaustion/cpu-loop", "process-killers/set-oom"].map((id) => table.indexOf(id));
    expect(order.every((i) => i > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(table).toContain("background paused");
  });

  test("guest text is escaped: an error carrying markup is shown as text", () => {
    expect(html).not.toContain(XSS);
    expect(html).toContain("error text &lt;img src=x onerror=alert(1)&gt;");
    expect(esc(`"'&`)).toBe("&quot;&#39;&amp;");
  });

  test("self-contained: no script, no stylesheet link, no external URL", () => {
    expect(html).not.toMatch(/<script|<link|<iframe|@import/i);
    expect(html).not.toMatch(/<[^>]*\s(?:src|href)\s*=/i);
    expect(html).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
  });
});
