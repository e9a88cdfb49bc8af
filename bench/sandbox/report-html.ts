/**
 * report.html of the sandbox bench: the same report as report.md, for a reviewer's browser — the
 * verdict, containment per category, a chart of bystander latency under each attack, and every case.
 * Self-contained: one file, inline CSS and SVG, no script, no external asset (it opens offline and
 * under `default-src 'none'`). Pure: no I/O, so test/unit/bench/ checks it on fixtures.
 *
 * SECURITY: every text from the report (case ids, reasons, guest error text) goes through `esc`;
 * nothing from a case is ever emitted as markup.
 */
import { fmtMs, fmtRatio, orderNotContainedFirst, type CaseReport, type SandboxReport } from "./report.js";

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** HTML-escape text for element content and attribute values. */
export function esc(text: unknown): string {
  return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const STYLE = `
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1c2430;background:#f6f7f9;margin:0;padding:1rem 1.5rem 3rem;max-width:1200px}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem}
.verdict{font-size:1.2rem;padding:.6rem .9rem;border-radius:6px}.pass{background:#e5f4ea;color:#1d7a46}.fail{background:#fdecea;color:#b3261e}
.meta{color:#5b6675}
table{border-collapse:collapse;width:100%;background:#fff;font-size:.9rem;margin:.5rem 0}
th,td{text-align:left;padding:.35rem .55rem;border-bottom:1px solid #d9dee5;vertical-align:top}
thead th{background:#eef1f5}
tr.bad td,tr.bad th{background:#fff4f3}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.no{color:#b3261e;font-weight:600}
figure{background:#fff;border:1px solid #d9dee5;border-radius:6px;padding:.5rem .75rem;margin:.75rem 0}
figcaption{font-weight:600}
svg text{font:11px system-ui,sans-serif;fill:#1c2430}
.wrap{overflow-x:auto}
#cases td{overflow-wrap:anywhere}#cases th{min-width:12rem}
pre{white-space:pre-wrap;background:#fff;border:1px solid #d9dee5;padding:.5rem;font-size:.8rem}
`;

function expectedText(c: CaseReport): string {
  const e = c.expected;
  if (e.install_error) return `install refused ${e.install_error}`;
  return e.status === null ? (e.outcome ?? "?") : `${e.outcome ?? "?"}/${e.status}`;
}

function observedText(c: CaseReport): string {
  const o = c.observed;
  if (o.install_error) return `install refused ${o.install_error}`;
  if (o.outcome === null) return "nothing returned";
  return o.status ? `${o.outcome}/${o.status}` : o.outcome;
}

/**
 * Horizontal bars: each case's bystander p99 over its attack window, red when not contained, with
 * the quiet baseline p99 as a dashed line.
 */
export function bystanderChart(title: string, cases: readonly CaseReport[], baselineP99: number | null): string {
  const rows = cases.filter((c) => c.background !== null);
  if (rows.length === 0) return "";
  const width = 760;
  const labelW = 240;
  const rowH = 16;
  const height = rows.length * rowH + 20;
  const max = Math.max(1e-9, baselineP99 ?? 0, ...rows.map((c) => c.background?.p99_ms ?? 0));
  const scale = (v: number): number => (v / max) * (width - labelW - 120);
  const bars = rows.map((c, i) => {
    const top = i * rowH + 2;
    const v = c.background?.p99_ms ?? null;
    const label = `<text x="${labelW - 4}" y="${top + 11}" text-anchor="end">${esc(c.id.length > 36 ? `${c.id.slice(0, 35)}…` : c.id)}</text>`;
    if (v === null) return `${label}<text x="${labelW + 2}" y="${top + 11}">no samples</text>`;
    const w = Math.max(1, scale(v));
    return (
      `${label}<rect x="${labelW}" y="${top + 2}" width="${w.toFixed(1)}" height="${rowH - 5}" fill="${c.contained ? "#1f5fbf" : "#b3261e"}"><title>${esc(`${c.category}/${c.id}: p99 ${fmtMs(v)} (${fmtRatio(c.background?.p99_ratio)} baseline)`)}</title></rect>` +
      `<text x="${(labelW + w + 4).toFixed(1)}" y="${top + 11}">${esc(`${fmtMs(v)} (${fmtRatio(c.background?.p99_ratio)})`)}</text>`
    );
  });
  let ref = "";
  if (baselineP99 !== null) {
    const x = (labelW + scale(baselineP99)).toFixed(1);
    ref = `<line x1="${x}" x2="${x}" y1="0" y2="${rows.length * rowH + 2}" stroke="#a35c00" stroke-dasharray="4 3" stroke-width="1.5"/><text x="${x}" y="${height - 3}">quiet p99 ${esc(fmtMs(baselineP99))}</text>`;
  }
  return (
    `<figure><figcaption>${esc(title)}</figcaption><div class="wrap"><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${esc(`Bystander p99 latency during ${title} attacks`)}">` +
    bars.join("") +
    ref +
    `</svg></div></figure>`
  );
}

/**
 * The whole report as one HTML document.
 *
 * @example
 * ```ts
 * writeFileSync("report.html", renderHtml(report));
 * ```
 */
export function renderHtml(report: SandboxReport): string {
  const s = report.summary;
  const out: string[] = [];
  const verdict = s.verdict === "PASS" ? `PASS — every one of ${s.total} cases contained` : `FAIL — ${s.not_contained} of ${s.total} cases NOT contained`;
  out.push(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">`);
  out.push(`<title>${esc(`Sandbox bench — ${s.verdict}`)}</title><style>${STYLE}</style></head><body>`);
  out.push(`<h1>vcp-hooks sandbox bench</h1>`);
  out.push(`<p class="verdict ${s.verdict === "PASS" ? "pass" : "fail"}" id="verdict"><strong>${esc(verdict)}</strong></p>`);
  out.push(
    `<p class="meta">${esc(
      `${report.started_at} · ${report.duration_s.toFixed(0)} s · ${s.contained} contained · ${s.not_contained} not contained · ${s.process_restarts} sandbox process restart(s) · ${s.wedged} wedged · ${s.background_errors} bystander chain error(s)` +
        (report.subset ? ` · subset: ${report.subset}` : ""),
    )}</p>`,
  );

  const failing = orderNotContainedFirst(report.cases).filter((c) => !c.contained);
  out.push(`<h2>Not contained</h2>`);
  if (failing.length === 0) out.push(`<p>None.</p>`);
  else {
    out.push(`<table><thead><tr><th>case</th><th>expected</th><th>observed</th><th>why</th></tr></thead><tbody>`);
    for (const c of failing) out.push(`<tr class="bad"><th>${esc(`${c.category}/${c.id}`)}</th><td>${esc(expectedText(c))}</td><td>${esc(observedText(c))}</td><td>${esc(c.reasons.join("; "))}</td></tr>`);
    out.push(`</tbody></table>`);
  }

  out.push(`<h2>Containment per category</h2><table id="categories"><thead><tr><th>category</th><th>cases</th><th>contained</th><th>not contained</th><th>worst bystander p99</th><th>process restarts</th><th>bystander errors</th></tr></thead><tbody>`);
  for (const k of report.categories) {
    const cases = report.cases.filter((c) => c.category === k.id);
    if (!k.covered || cases.length === 0) {
      out.push(`<tr><th>${esc(k.title)}</th><td colspan="6">${esc(`not covered${k.note ? `: ${k.note}` : ""}`)}</td></tr>`);
      continue;
    }
    const bad = cases.filter((c) => !c.contained).length;
    const ratios = cases.map((c) => c.background?.p99_ratio).filter((x): x is number => typeof x === "number" && Number.isFinite(x));
    out.push(
      `<tr${bad ? ' class="bad"' : ""}><th>${esc(k.title)}</th><td class="n">${cases.length}</td><td class="n">${cases.length - bad}</td><td class="n${bad ? " no" : ""}">${bad}</td>` +
        `<td class="n">${esc(ratios.length ? fmtRatio(Math.max(...ratios)) : "–")}</td><td class="n">${cases.reduce((n, c) => n + c.recycled.process_restarts, 0)}</td><td class="n">${cases.reduce((n, c) => n + (c.background?.errors ?? 0), 0)}</td></tr>`,
    );
  }
  out.push(`</tbody></table>`);

  const b = report.baseline;
  out.push(`<h2>Bystander latency under each attack</h2>`);
  out.push(
    `<p>${esc(`Well-behaved chains of other bundles run in a closed loop during every attack. Bars: their p99 over the attack window (ratio to the quiet baseline). Quiet baseline: ${b.samples} chains, p50 ${fmtMs(b.p50_ms)}, p99 ${fmtMs(b.p99_ms)}.`)}</p>`,
  );
  for (const k of report.categories) out.push(bystanderChart(k.title, orderNotContainedFirst(report.cases.filter((c) => c.category === k.id)), b.p99_ms));

  out.push(`<h2>Every case</h2><div class="wrap"><table id="cases"><thead><tr><th>case</th><th>contained</th><th>expected</th><th>observed</th><th>error class</th><th>regained / recovered</th><th>bystander p50 / p99</th><th>notes</th></tr></thead><tbody>`);
  for (const c of orderNotContainedFirst(report.cases)) {
    out.push(
      `<tr${c.contained ? "" : ' class="bad"'}><th>${esc(`${c.category}/${c.id}`)}<br><small>${esc(c.title)}</small></th>` +
        `<td>${c.contained ? "yes" : `<span class="no">NO</span>: ${esc(c.reasons.join("; "))}`}</td><td>${esc(expectedText(c))}</td><td>${esc(observedText(c))}</td><td>${esc(c.observed.error_class ?? "–")}</td>` +
        `<td class="n">${esc(`${fmtMs(c.control.regained_ms)} / ${fmtMs(c.control.recovered_ms)}`)}</td>` +
        `<td class="n">${esc(c.background ? `${fmtMs(c.background.p50_ms)} / ${fmtMs(c.background.p99_ms)}` : "–")}</td><td>${esc(c.notes.join("; "))}</td></tr>`,
    );
  }
  out.push(`</tbody></table></div>`);

  out.push(`<h2>Environment</h2><table>`);
  for (const [key, value] of Object.entries(report.environment)) out.push(`<tr><th>${esc(key)}</th><td>${esc(value)}</td></tr>`);
  out.push(`</table><h2>Threat model</h2><p>${esc(report.threat_model)}</p>`);
  out.push(`<h2>Configuration</h2><pre>${esc(JSON.stringify(report.config, null, 2))}</pre>`);
  out.push(`</body></html>\n`);
  return out.join("\n");
}
