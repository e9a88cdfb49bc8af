/**
 * Slow-bundle detection (DESIGN §4.1, "a bundle whose hooks keep timing out may not occupy more than
 * one worker"). A bundle revision is slow while it has at least `timeouts` hook timeouts within the
 * last `windowMs`; the supervisor then admits at most one in-flight chain that contains a slow (or
 * crash-suspect) bundle, so the other workers keep serving chains of well-behaved bundles.
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
