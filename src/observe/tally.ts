/**
 * Counters and histograms for the chain hot path, read by prom-client's Registry at scrape time.
 *
 * Why not prom-client's own: every labelled `inc`/`observe` there validates the label object and
 * hashes it into a key (a child from `labels()` does the same on each call), and a 5-hook chain makes
 * ~22 such updates on the main thread. Here a series is looked up once per label tuple through nested
 * Maps (no key string built, no object allocated) and updated as plain numbers; the scrape turns the
 * numbers into the same exposition prom-client writes (names, label order, `le` first on buckets,
 * cumulative buckets, `+Inf`, `_sum`, `_count`). Series are never removed, as with prom-client, so
 * their number is bounded by the label values the caller uses.
 *
 * The Registry accepts any object with `name`, `help`, `type`, `get()` (it formats what
 * `getForPromString()` or `get()` returns); these implement that contract and register themselves.
 */
import type { Registry } from "prom-client";

type Labels = Readonly<Record<string, string>>;

interface Exported {
  labels: Record<string, string | number>;
  sharedLabels?: Labels;
  value: number;
  metricName?: string;
  /** prom-client's buckets carry `exemplar: null` when exemplars are off; kept so JSON scrapes match. */
  exemplar?: null;
}

/** Label values → series, one Map level per label name. */
class SeriesTable<S> {
  private readonly root = new Map<string, unknown>();
  /** Every series in creation order (the order prom-client writes them in). */
  readonly all: Array<{ labels: Labels; series: S }> = [];

  constructor(
    private readonly labelNames: readonly string[],
    private readonly create: () => S,
  ) {}

  /** Up to three label values, in label-name order: no array is built for the lookup. */
  get(a: string, b?: string, c?: string): S {
    const n = this.labelNames.length;
    let level = this.root;
    if (n > 1) level = (level.get(a) as Map<string, unknown> | undefined) ?? this.level(level, a);
    if (n > 2) level = (level.get(b!) as Map<string, unknown> | undefined) ?? this.level(level, b!);
    const leaf = n === 1 ? a : n === 2 ? b : c;
    return (level.get(leaf!) as S | undefined) ?? this.add(level, [a, b, c].slice(0, n));
  }

  private level(parent: Map<string, unknown>, value: string): Map<string, unknown> {
    const next = new Map<string, unknown>();
    parent.set(value, next);
    return next;
  }

  private add(level: Map<string, unknown>, values: ReadonlyArray<string | undefined>): S {
    const labels: Record<string, string> = {};
    // As prom-client prints them: a value that is not a string (a caller's bug) becomes its String().
    this.labelNames.forEach((name, i) => (labels[name] = String(values[i])));
    const series = this.create();
    level.set(values[values.length - 1]!, series);
    this.all.push({ labels: Object.freeze(labels), series });
    return series;
  }

  clear(): void {
    this.root.clear();
    this.all.length = 0;
  }
}

/** One counter series: `inc()` is a field update. */
export interface CounterCell {
  value: number;
}

/** A labelled counter (at least one label) whose series are looked up by label values in label-name order. */
export class TallyCounter {
  readonly type = "counter";
  readonly aggregator = "sum";
  private readonly table: SeriesTable<CounterCell>;

  constructor(
    readonly name: string,
    readonly help: string,
    labelNames: readonly string[],
    registry: Registry,
  ) {
    if (labelNames.length === 0 || labelNames.length > 3) throw new TypeError(`${name}: a tally counter has one to three labels`);
    this.table = new SeriesTable(labelNames, () => ({ value: 0 }));
    registry.registerMetric(this as never);
  }

  /** The series of these label values (in label-name order); keep it to update it without a lookup. */
  cell(a: string, b?: string, c?: string): CounterCell {
    return this.table.get(a, b, c);
  }

  get(): { name: string; help: string; type: string; values: Exported[]; aggregator: string } {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.table.all.map(({ labels, series }) => ({ labels: { ...labels }, value: series.value })) };
  }

  reset(): void {
    this.table.clear();
  }
}

/** One histogram series: counts per bucket (not cumulative; the last slot is above every bound). */
export class HistogramCell {
  sum = 0;
  count = 0;
  readonly counts: Float64Array;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

/** A labelled histogram, exposed exactly as prom-client's Histogram with the same buckets. */
export class TallyHistogram {
  readonly type = "histogram";
  readonly aggregator = "sum";
  private readonly table: SeriesTable<HistogramCell>;
  private readonly bounds: readonly number[];

  constructor(
    readonly name: string,
    readonly help: string,
    labelNames: readonly string[],
    buckets: readonly number[],
    registry: Registry,
  ) {
    if (labelNames.length === 0 || labelNames.length > 3) throw new TypeError(`${name}: a tally histogram has one to three labels`);
    this.bounds = Object.freeze([...buckets].sort((a, b) => a - b));
    this.table = new SeriesTable(labelNames, () => new HistogramCell(this.bounds));
    registry.registerMetric(this as never);
  }

  cell(a: string, b?: string, c?: string): HistogramCell {
    return this.table.get(a, b, c);
  }

  /** What the Registry formats: buckets carry `le` first, then the series labels (as prom-client). */
  getForPromString(): { name: string; help: string; type: string; values: Exported[]; aggregator: string } {
    const values: Exported[] = [];
    const bucket = `${this.name}_bucket`;
    for (const { labels, series } of this.table.all) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += series.counts[i]!;
        values.push({ labels: { le }, sharedLabels: labels, value: cumulative, metricName: bucket, exemplar: null });
      });
      values.push({ labels: { le: "+Inf" }, sharedLabels: labels, value: series.count, metricName: bucket, exemplar: null });
      values.push({ labels: {}, sharedLabels: labels, value: series.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: labels, value: series.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** The JSON form (Registry.getMetricsAsJSON): series labels merged into each value's labels. */
  get(): { name: string; help: string; type: string; values: Exported[]; aggregator: string } {
    const data = this.getForPromString();
    return { ...data, values: data.values.map(({ sharedLabels, ...value }) => ({ ...value, labels: { ...value.labels, ...sharedLabels } })) };
  }

  reset(): void {
    this.table.clear();
  }
}
