/**
 * Slow-bundle detection (DESIGN §4.1, "a bundle whose hooks keep timing out may not occupy more than
 * one worker"). A bundle revision is slow while it has at least `timeouts` hook timeouts within the
 * last `windowMs`; the supervisor then admits at most one in-flight chain that contains a slow (or
 * demoted, see WorkerShareTracker) bundle — the slow lane — so the other workers keep serving chains
 * of well-behaved bundles.
 *
 * A sliding window of timestamps per digest: at most `timeouts` entries are kept, so memory stays
 * bounded whatever the timeout rate.
 */
export class SlowTracker {
  private readonly hits = new Map<string, number[]>();

  constructor(
    private readonly threshold: number,
    private readonly windowMs: number,
  ) {}

  record(digest: string, now: number): void {
    let times = this.hits.get(digest);
    if (times === undefined) {
      times = [];
      this.hits.set(digest, times);
    }
    times.push(now);
    if (times.length > this.threshold) times.shift();
  }

  isSlow(digest: string, now: number): boolean {
    const times = this.hits.get(digest);
    if (times === undefined) return false;
    while (times.length > 0 && now - times[0]! > this.windowMs) times.shift();
    if (times.length === 0) {
      this.hits.delete(digest);
      return false;
    }
    return times.length >= this.threshold;
  }

  reset(digest: string): void {
    this.hits.delete(digest);
  }

  slowDigests(now: number): string[] {
    return [...this.hits.keys()].filter((digest) => this.isSlow(digest, now));
  }
}

/**
 * Fair share of worker time per bundle revision (DESIGN §4.1). A hook that stays just under its
 * timeout never counts as slow above, yet a bundle running such hooks from many callers holds every
 * worker, and other tenants' chains wait behind it (median 0.2 ms → ≈1.9 s on the fairness bench).
 * This tracker charges each revision the wall time its hooks held a worker, and marks a revision
 * *demoted* while its recent share exceeds
 *
 *     threshold = max(1 / active revisions, 1 / workers)
 *
 * of the pool's capacity: more than an equal split among the revisions that ran recently, and more
 * than one worker's worth (below that, running one chain at a time would cost it nothing). A demoted
 * revision goes to the slow lane — at most one chain with a slow or demoted revision in flight — so
 * the other workers keep serving everyone else. It is promoted again once its share falls below
 * HYSTERESIS × threshold (e.g. when the other tenants go quiet and `active` drops to 1).
 *
 * Usage decays exponentially with time constant `tauMs`: for a steady rate of r worker-ms per ms the
 * decayed sum approaches r × tauMs, so share = sum / (workers × tauMs). One number per revision, and
 * revisions idle for several tauMs are forgotten: memory stays bounded.
 */
export class WorkerShareTracker {
  private readonly usage = new Map<string, { ms: number; at: number }>();
  private readonly demoted = new Set<string>();
  private refreshedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly workers: number,
    private readonly tauMs: number = 3_000,
  ) {}

  /** Charge `ms` of worker time to `digest` (a hook's duration, when its chain reports back). */
  record(digest: string, ms: number, now: number): void {
    if (!(ms > 0)) return;
    const entry = this.usage.get(digest);
    if (entry === undefined) {
      this.usage.set(digest, { ms, at: now });
      return;
    }
    entry.ms = this.decayed(entry, now) + ms;
    entry.at = now;
  }

  isDemoted(digest: string, now: number): boolean {
    this.refresh(now);
    return this.demoted.has(digest);
  }

  demotedDigests(now: number): string[] {
    this.refresh(now);
    return [...this.demoted];
  }

  /** Share of the pool's capacity `digest` used recently (0…1), for stats and tests. */
  share(digest: string, now: number): number {
    const entry = this.usage.get(digest);
    return entry === undefined ? 0 : this.decayed(entry, now) / (this.workers * this.tauMs);
  }

  reset(digest: string): void {
    this.usage.delete(digest);
    this.demoted.delete(digest);
  }

  private decayed(entry: { ms: number; at: number }, now: number): number {
    return entry.ms * Math.exp(-Math.max(0, now - entry.at) / this.tauMs);
  }

  /** Recomputed at most every REFRESH_MS: admission asks per waiting chain, this walks every revision. */
  private refresh(now: number): void {
    if (now - this.refreshedAt < REFRESH_MS) return;
    this.refreshedAt = now;
    let active = 0;
    for (const [digest, entry] of this.usage) {
      const idle = now - entry.at;
      if (idle > FORGET_AFTER_TAUS * this.tauMs) {
        this.usage.delete(digest);
        this.demoted.delete(digest);
      } else if (idle <= this.tauMs) {
        active++;
      }
    }
    const threshold = Math.max(1 / Math.max(1, active), 1 / this.workers);
    for (const [digest, entry] of this.usage) {
      const share = this.decayed(entry, now) / (this.workers * this.tauMs);
      if (this.demoted.has(digest)) {
        if (share < HYSTERESIS * threshold) this.demoted.delete(digest);
      } else if (share > threshold) {
        this.demoted.add(digest);
      }
    }
  }
}

const REFRESH_MS = 50;
const FORGET_AFTER_TAUS = 5;
/**
 * A demoted revision that keeps one worker busy uses ≈ 1 / workers of the capacity, which is the
 * threshold itself on two workers: promotion waits until it is clearly below, or it would flap.
 */
const HYSTERESIS = 0.7;
