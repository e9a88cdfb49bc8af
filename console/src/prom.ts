/**
 * Prometheus text exposition (what GET /metrics answers), parsed in the page for the Health charts,
 * and quantiles estimated from histogram buckets the way PromQL's histogram_quantile does.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = LINE.exec(line);
    if (m === null) continue;
    const labels: Record<string, string> = {};
    if (m[2] !== undefined) {
      for (const l of m[2].matchAll(LABEL)) labels[l[1]!] = l[2]!.replace(/\\n/g, "\n").replace(/\\"/g, '"').replace(/\\\\/g, "\\");
    }
    const raw = m[3]!;
    const value = raw === "+Inf" ? Infinity : raw === "-Inf" ? -Infinity : Number(raw);
    out.push({ name: m[1]!, labels, value });
  }
  return out;
}

/** The sum of the samples of one metric whose labels include `match`. */
export function total(samples: readonly Sample[], name: string, match: Record<string, string> = {}): number {
  let sum = 0;
  for (const s of samples) if (s.name === name && matches(s.labels, match)) sum += s.value;
  return sum;
}

function matches(labels: Record<string, string>, match: Record<string, string>): boolean {
  for (const [k, v] of Object.entries(match)) if (labels[k] !== v) return false;
  return true;
}

/** Cumulative buckets `[le, count]` of one histogram series, sorted by `le`. */
export function buckets(samples: readonly Sample[], name: string, match: Record<string, string>): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const s of samples) {
    if (s.name !== `${name}_bucket` || !matches(s.labels, match)) continue;
    const le = s.labels.le === "+Inf" ? Infinity : Number(s.labels.le);
    out.push([le, s.value]);
  }
  return out.sort((a, b) => a[0] - b[0]);
}

/** Bucket counts of `now` minus those of `before` (the observations in between). */
export function subtract(now: Array<[number, number]>, before: Array<[number, number]>): Array<[number, number]> {
  const prior = new Map(before);
  return now.map(([le, n]) => [le, Math.max(0, n - (prior.get(le) ?? 0))]);
}

/**
 * The q-quantile (0 < q < 1) of cumulative buckets, interpolated linearly inside the bucket it falls
 * in (the lowest bucket from 0). null without observations; the highest finite bound when it falls in
 * the +Inf bucket.
 */
export function quantile(q: number, cumulative: Array<[number, number]>): number | null {
  const count = cumulative.length ? cumulative[cumulative.length - 1]![1] : 0;
  if (count <= 0) return null;
  const rank = q * count;
  let prevLe = 0;
  let prevCount = 0;
  for (const [le, n] of cumulative) {
    if (n >= rank) {
      if (le === Infinity) return prevLe;
      if (n === prevCount) return le;
      return prevLe + (le - prevLe) * ((rank - prevCount) / (n - prevCount));
    }
    prevLe = le;
    prevCount = n;
  }
  return prevLe;
}
