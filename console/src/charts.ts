/** Small inline SVG charts (no chart library): sparklines and stacked bars, each with a text label for screen readers. */
import { svg } from "./dom.js";

export interface Series {
  values: ReadonlyArray<number | null>;
  className: string;
}

/** Lines over the last N samples, sharing one y scale from 0; gaps where a value is null. */
export function sparkline(series: readonly Series[], label: string, width = 220, height = 44): SVGElement {
  const max = Math.max(1e-9, ...series.flatMap((s) => s.values.filter((v): v is number => v !== null && Number.isFinite(v))));
  const n = Math.max(2, ...series.map((s) => s.values.length));
  const x = (i: number) => (i / (n - 1)) * (width - 2) + 1;
  const y = (v: number) => height - 2 - (v / max) * (height - 4);
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": label, class: "spark" });
  root.appendChild(svg("title", {}, label));
  root.appendChild(svg("line", { x1: 0, x2: width, y1: height - 1, y2: height - 1, class: "axis" }));
  for (const s of series) {
    let d = "";
    let pen = false;
    s.values.forEach((v, i) => {
      if (v === null || !Number.isFinite(v)) {
        pen = false;
        return;
      }
      d += `${pen ? "L" : "M"}${x(i + n - s.values.length).toFixed(1)},${y(v).toFixed(1)}`;
      pen = true;
    });
    if (d !== "") root.appendChild(svg("path", { d, class: s.className, fill: "none" }));
  }
  return root;
}

/** One horizontal bar split by part (e.g. outcomes); parts with 0 are left out. */
export function stackedBar(parts: ReadonlyArray<{ label: string; value: number; className: string }>, label: string, width = 220, height = 12): SVGElement {
  const sum = parts.reduce((n, p) => n + p.value, 0);
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": label, class: "bar" });
  root.appendChild(svg("title", {}, label));
  root.appendChild(svg("rect", { x: 0, y: 0, width, height, class: "bar-empty" }));
  let at = 0;
  for (const p of parts) {
    if (p.value <= 0 || sum === 0) continue;
    const w = (p.value / sum) * width;
    root.appendChild(svg("rect", { x: at.toFixed(1), y: 0, width: Math.max(1, w).toFixed(1), height, class: p.className }, svg("title", {}, `${p.label}: ${p.value}`)));
    at += w;
  }
  return root;
}

/** Horizontal bars for labelled values with an optional reference line (e.g. the quiet baseline). */
export function barChart(rows: ReadonlyArray<{ label: string; value: number | null; bad?: boolean }>, options: { label: string; unit: string; reference?: number | null; width?: number }): SVGElement {
  const width = options.width ?? 640;
  const labelW = Math.min(200, Math.round(width * 0.4));
  const rowH = 16;
  const height = rows.length * rowH + 18;
  const max = Math.max(1e-9, options.reference ?? 0, ...rows.map((r) => r.value ?? 0));
  const scale = (v: number) => (v / max) * (width - labelW - 60);
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": options.label, class: "barchart", preserveAspectRatio: "xMinYMin meet" });
  root.appendChild(svg("title", {}, options.label));
  rows.forEach((r, i) => {
    const top = i * rowH + 2;
    root.appendChild(svg("text", { x: labelW - 4, y: top + 11, "text-anchor": "end", class: "bar-label" }, r.label.length > 30 ? `${r.label.slice(0, 29)}…` : r.label));
    if (r.value !== null) {
      root.appendChild(svg("rect", { x: labelW, y: top + 2, width: Math.max(1, scale(r.value)).toFixed(1), height: rowH - 5, class: r.bad ? "bar-bad" : "bar-ok" }));
      root.appendChild(svg("text", { x: labelW + scale(r.value) + 4, y: top + 11, class: "bar-value" }, `${r.value.toFixed(r.value < 10 ? 2 : 1)} ${options.unit}`));
    } else {
      root.appendChild(svg("text", { x: labelW + 2, y: top + 11, class: "bar-value" }, "not measured"));
    }
  });
  if (options.reference !== null && options.reference !== undefined) {
    const rx = labelW + scale(options.reference);
    root.appendChild(svg("line", { x1: rx, x2: rx, y1: 0, y2: rows.length * rowH + 2, class: "ref" }));
    root.appendChild(svg("text", { x: rx + 2, y: height - 3, class: "bar-value" }, `quiet baseline ${options.reference.toFixed(2)} ${options.unit}`));
  }
  return root;
}
