/**
 * Security report: the latest `npm run bench:sandbox` run (report.json, served by the server from
 * the directory the bench writes), drawn here — verdict, containment per category, bystander latency
 * under each attack, every case — plus the self-contained report.html as a download.
 */
import { apiOptional, authHeaders, check, errorText } from "../api.js";
import { barChart } from "../charts.js";
import { fmtTime } from "../format.js";
import { fmtMs, h, replace, scrollRegion } from "../dom.js";

interface CaseReport {
  id: string;
  category: string;
  title: string;
  contained: boolean;
  reasons: string[];
  expected: { outcome: string | null; status: string | null; install_error: string | null };
  observed: { outcome: string | null; status: string | null; install_error: string | null; error_class: string | null };
  background: { p50_ms: number | null; p99_ms: number | null; p99_ratio: number | null; errors: number; samples: number } | null;
  notes: string[];
}
interface Report {
  started_at: string;
  duration_s: number;
  subset: string | null;
  baseline: { p50_ms: number | null; p99_ms: number | null; samples: number };
  categories: Array<{ id: string; title: string; covered: boolean; note: string | null }>;
  cases: CaseReport[];
  summary: { total: number; contained: number; not_contained: number; process_restarts: number; wedged: number; background_errors: number; verdict: "PASS" | "FAIL" };
}

const outcomeText = (o: { outcome: string | null; status: string | null; install_error: string | null }) =>
  o.install_error ? `install refused ${o.install_error}` : o.outcome === null ? "nothing" : o.status ? `${o.outcome}/${o.status}` : o.outcome;

export function mountSecurity(root: HTMLElement): () => void {
  const body = h("div", { id: "security-body" }, h("p", {}, "Loading the latest report…"));
  root.append(h("h1", {}, "Security report"), body);
  void (async () => {
    let found;
    try {
      found = await apiOptional<Report>("/v1/console/security-report");
    } catch (err) {
      replace(body, h("p", { class: "error", role: "alert" }, errorText(err)));
      return;
    }
    if ("missing" in found) {
      replace(body, h("div", { class: "empty", id: "no-report" }, h("p", {}, h("strong", {}, "No report yet"), " — run ", h("code", {}, "npm run bench:sandbox"), " on the server's machine."), h("p", { class: "hint" }, found.missing.message)));
      return;
    }
    render(found.value);
  })();

  function render(r: Report): void {
    const s = r.summary;
    const download = h("button", { type: "button" }, "Download report.html");
    download.addEventListener("click", () => void downloadHtml(download));
    const cats = r.categories.map((k) => {
      const cases = r.cases.filter((c) => c.category === k.id);
      const bad = cases.filter((c) => !c.contained).length;
      return { k, cases, bad };
    });
    replace(
      body,
      h(
        "div",
        { class: `verdict ${s.verdict === "PASS" ? "pass" : "fail"}`, id: "verdict" },
        h("strong", {}, s.verdict === "PASS" ? "PASS" : "FAIL"),
        s.verdict === "PASS" ? ` — all ${s.total} cases contained` : ` — ${s.not_contained} of ${s.total} cases NOT contained`,
      ),
      h(
        "p",
        { class: "hint" },
        `${fmtTime(r.started_at)} · ${r.duration_s.toFixed(0)} s · ${s.process_restarts} sandbox restarts · ${s.wedged} wedged · ${s.background_errors} bystander chain errors${r.subset ? ` · subset: ${r.subset}` : ""} `,
        download,
      ),
      h("h2", {}, "Containment per category"),
      scrollRegion(
        "Containment per category",
        {},
        h(
          "table",
          { id: "categories" },
          h("thead", {}, h("tr", {}, ...["Category", "Cases", "Contained", "Not contained", "Worst bystander p99"].map((t) => h("th", { scope: "col" }, t)))),
          h(
            "tbody",
            {},
            ...cats.map(({ k, cases, bad }) => {
              const worst = Math.max(0, ...cases.map((c) => c.background?.p99_ratio ?? 0));
              return h(
                "tr",
                { class: bad > 0 ? "failed" : "" },
                h("th", { scope: "row" }, k.title),
                h("td", {}, k.covered ? String(cases.length) : `0 (${k.note ?? "not covered"})`),
                h("td", {}, String(cases.length - bad)),
                h("td", {}, bad > 0 ? h("strong", { class: "bad" }, String(bad)) : "0"),
                h("td", {}, worst > 0 ? `${worst.toFixed(1)}× baseline` : "–"),
              );
            }),
          ),
        ),
      ),
      h("h2", {}, "Bystander latency under each attack"),
      h("p", { class: "hint" }, `Well-behaved chains of other bundles ran during every attack; bars are their p99 (ms) over the attack window; the line is the quiet baseline p99 (${fmtMs(r.baseline.p99_ms)}).`),
      ...cats
        .filter(({ cases }) => cases.some((c) => c.background !== null))
        .map(({ k, cases }) =>
          h(
            "figure",
            { class: "chart" },
            h("figcaption", {}, k.title),
            barChart(
              cases.map((c) => ({ label: c.id, value: c.background?.p99_ms ?? null, bad: !c.contained })),
              // Drawn at the width it is shown at, so its text stays readable on a phone.
              { label: `Bystander p99 latency during ${k.title} attacks`, unit: "ms", reference: r.baseline.p99_ms, width: Math.max(280, Math.min(640, document.documentElement.clientWidth - 56)) },
            ),
          ),
        ),
      h("h2", {}, "Every case"),
      scrollRegion(
        "Every case",
        {},
        h(
          "table",
          { id: "cases" },
          h("thead", {}, h("tr", {}, ...["Case", "Contained", "Expected", "Observed", "Bystander p50 / p99", "Notes"].map((t) => h("th", { scope: "col" }, t)))),
          h(
            "tbody",
            {},
            ...[...r.cases]
              .sort((a, b) => Number(a.contained) - Number(b.contained))
              .map((c) =>
                h(
                  "tr",
                  { class: c.contained ? "" : "failed" },
                  h("th", { scope: "row" }, `${c.category}/${c.id}`, h("div", { class: "sub" }, c.title)),
                  h("td", {}, c.contained ? "yes" : h("strong", { class: "bad" }, `NO: ${c.reasons.join("; ")}`)),
                  h("td", {}, outcomeText(c.expected)),
                  h("td", {}, outcomeText(c.observed), c.observed.error_class ? ` (${c.observed.error_class})` : ""),
                  h("td", { class: "num" }, c.background ? `${fmtMs(c.background.p50_ms)} / ${fmtMs(c.background.p99_ms)}` : "–"),
                  h("td", {}, c.notes.join("; ")),
                ),
              ),
          ),
        ),
      ),
    );
  }
  return () => undefined;
}

async function downloadHtml(button: HTMLButtonElement): Promise<void> {
  button.disabled = true;
  try {
    const res = await check(await fetch("/v1/console/security-report.html", { headers: authHeaders(), cache: "no-store" }));
    const url = URL.createObjectURL(await res.blob());
    const a = h("a", { href: url, download: "vcp-hooks-security-report.html" });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  } catch (err) {
    button.after(h("span", { class: "error", role: "alert" }, ` ${errorText(err)}`));
  } finally {
    button.disabled = false;
  }
}

