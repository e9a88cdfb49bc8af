/**
 * Background load: well-behaved chains fired in a closed loop at a fixed number in flight while the
 * attacks run. Every completed chain is recorded with its start time, so a window (an attack, the
 * quiet baseline) selects the chains that *started* inside it.
 */
import type { Runtime } from "../../src/index.js";
import { nowNs, percentile } from "../lib/stats.js";
import { checkWellBehaved, wellBehavedInput } from "./fixtures.js";
import type { WindowStats } from "./report.js";

interface Sample {
  startNs: bigint;
  latencyNs: number;
  /** null: served exactly; otherwise the error kind. */
  error: string | null;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class BackgroundLoad {
  #samples: Sample[] = [];
  #running = false;
  #loops: Promise<void>[] = [];
  #seq = 0;
  #generation = 0;
  #lastError: string | null = null;
  /** Start times of chains in flight, so a window can wait for the chains that started inside it. */
  #pending = new Set<bigint>();

  constructor(
    private runtime: Runtime,
    private readonly inFlight: number,
    /** Pause between a loop's chains, so the load stays "modest" on a 2-core machine. */
    private readonly thinkMs: number,
  ) {}

  start(runtime: Runtime = this.runtime): void {
    if (this.#running) throw new Error("background load already running");
    this.runtime = runtime;
    this.#running = true;
    const generation = ++this.#generation;
    this.#loops = Array.from({ length: this.inFlight }, (_, i) => this.#loop(i, generation));
  }

  /**
   * Stop the loops, waiting at most `maxMs` for their chains: a chain stuck on a wedged runtime is
   * abandoned (its loop ends when it settles, and records nothing once a new generation started).
   */
  async stop(maxMs: number): Promise<void> {
    this.#running = false;
    this.#generation++;
    await Promise.race([Promise.all(this.#loops), sleep(maxMs)]);
    this.#loops = [];
    this.#pending.clear();
  }

  /** Drop everything recorded so far (between cases, to bound memory). */
  reset(): void {
    this.#samples = [];
  }

  lastError(): string | null {
    return this.#lastError;
  }

  async #loop(slot: number, generation: number): Promise<void> {
    while (this.#running && generation === this.#generation) {
      const text = `bg-${slot}-${this.#seq++ % 1000}`;
      const runtime = this.runtime;
      const t0 = nowNs();
      this.#pending.add(t0);
      let error: string | null;
      try {
        const result = await runtime.fire("on_transition", wellBehavedInput(`s-bg-${slot}`, text));
        const bad = checkWellBehaved(result, text);
        error = bad?.kind ?? null;
        if (bad) this.#lastError = bad.detail;
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        error = `rejected:${typeof code === "string" ? code : "error"}`;
        this.#lastError = (err as Error).message;
        // A closed or restarting runtime rejects at once; do not spin.
        await sleep(20);
      }
      if (generation !== this.#generation) return;
      this.#samples.push({ startNs: t0, latencyNs: Number(nowNs() - t0), error });
      this.#pending.delete(t0);
      if (this.thinkMs > 0) await sleep(this.thinkMs);
    }
  }

  /** Wait (at most `maxMs`) until every chain that started at or before `toNs` has completed. */
  async settle(toNs: bigint, maxMs: number): Promise<void> {
    const deadline = Date.now() + maxMs;
    while ([...this.#pending].some((t) => t <= toNs) && Date.now() < deadline) await sleep(5);
  }

  /** Chains that started in [fromNs, toNs]. Latency percentiles are over the chains served exactly. */
  window(fromNs: bigint, toNs: bigint): WindowStats {
    const inside = this.#samples.filter((s) => s.startNs >= fromNs && s.startNs <= toNs);
    const ok = inside.filter((s) => s.error === null).map((s) => s.latencyNs);
    const errorKinds: Record<string, number> = {};
    for (const s of inside) if (s.error !== null) errorKinds[s.error] = (errorKinds[s.error] ?? 0) + 1;
    return {
      window_ms: Number(toNs - fromNs) / 1e6,
      samples: ok.length,
      p50_ms: ok.length ? percentile(ok, 50) / 1e6 : null,
      p99_ms: ok.length ? percentile(ok, 99) / 1e6 : null,
      errors: inside.length - ok.length,
      error_kinds: errorKinds,
    };
  }
}
