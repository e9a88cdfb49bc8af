/**
 * Slow-bundle detection (DESIGN §4.1, "a bundle whose hooks keep timing out may not occupy more than
 * one worker"). A bundle revision is slow while it has at least `timeouts` hook timeouts within the
 * last `windowMs`; the supervisor then admits at most one in-flight chain that contains a slow
 * bundle — the slow lane — so the other workers keep serving chains of well-behaved bundles.
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
 * Whose fair share a bundle revision is charged to: the tenant that deploys it, known by the key that
 * signed it (`key:<key id>`), or for an unsigned bundle its name (`bundle:<name>`). Not the revision
 * or the bundle: a hog split over four bundles signed by one key held both workers as four "light"
 * revisions, none over its share, and another tenant's p50 went from 2.6 ms to 613 ms (issue 24).
 */
export function shareAccount(bundle: { readonly name: string; readonly signedBy?: string | null }): string {
  return typeof bundle.signedBy === "string" && bundle.signedBy.length > 0 ? `key:${bundle.signedBy}` : `bundle:${bundle.name}`;
}

/**
 * Fair share of worker time per account (DESIGN §4.1; an account is a signer, see {@link shareAccount}).
 * A hook that stays just under its timeout never counts as slow above, yet a bundle running such hooks
 * from many callers holds every worker, and other tenants' chains wait behind it (median 0.2 ms →
 * ≈1.7 s on bench/fairness.ts). This tracker charges each account the wall time its revisions' hooks
 * held a worker, and marks an account *demoted* while its recent share of the pool's capacity exceeds
 *
 *     threshold = max(1 / active accounts, 1 / workers)
 *
 * — more than an equal split among the accounts that ran recently, and more than one worker's worth
 * (below that a cap of one chain would cost it nothing) — and chains *without* it ran recently too.
 * The supervisor then admits at most `cap()` = max(1, ⌊workers × threshold⌋) chains with a revision of
 * that account at once; chains of other accounts overtake the rest. An account that every recent chain
 * contains (a deployment policy on the only busy hook type) is never demoted: capping it would only
 * throttle everyone, protecting no one. It is promoted again once its share falls below
 * HYSTERESIS × threshold, or once it is alone again.
 *
 * Usage decays exponentially with time constant `tauMs`: for a steady rate of r worker-ms per ms the
 * decayed sum approaches r × tauMs, so share = sum / (workers × tauMs). A few numbers per account,
 * and accounts idle for several tauMs are forgotten: memory stays bounded. A new revision does not
 * wipe its account's record (it would let a tenant shed its demotion by re-uploading).
 */
export class WorkerShareTracker {
  private readonly usage = new Map<string, Usage>();
  /** All chains that reported back (decayed count), to tell whether chains without a revision run. */
  private readonly allChains: Decayed = { value: 0, at: 0 };
  private readonly demoted = new Set<string>();
  private threshold = 1;
  private refreshedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly workers: number,
    private readonly tauMs: number = 3_000,
  ) {}

  /** A chain reported back: `accounts` are its revisions' accounts (distinct), `hookMs` the worker time of its executed hooks per account. */
  recordChain(accounts: readonly string[], hookMs: ReadonlyMap<string, number>, now: number): void {
    this.add(this.allChains, 1, now);
    for (const account of accounts) {
      let entry = this.usage.get(account);
      if (entry === undefined) {
        entry = { ms: { value: 0, at: now }, chains: { value: 0, at: now }, seenAt: now };
        this.usage.set(account, entry);
      }
      this.add(entry.chains, 1, now);
      this.add(entry.ms, hookMs.get(account) ?? 0, now);
      entry.seenAt = now;
    }
  }

  isDemoted(account: string, now: number): boolean {
    this.refresh(now);
    return this.demoted.has(account);
  }

  /** Chains with a revision of a demoted account that may be in flight at once: its share of the workers. */
  cap(): number {
    return Math.max(1, Math.floor(this.workers * this.threshold));
  }

  demotedAccounts(now: number): string[] {
    this.refresh(now);
    return [...this.demoted];
  }

  /** Share of the pool's capacity `account` used recently (0…1), for stats and tests. */
  share(account: string, now: number): number {
    const entry = this.usage.get(account);
    return entry === undefined ? 0 : this.decayed(entry.ms, now) / (this.workers * this.tauMs);
  }

  private add(d: Decayed, amount: number, now: number): void {
    const at = Math.max(now, d.at); // never backwards: a late report counts as fresh
    d.value = this.decayed(d, at) + amount;
    d.at = at;
  }

  private decayed(d: Decayed, now: number): number {
    return d.value * Math.exp(-Math.max(0, now - d.at) / this.tauMs);
  }

  /** Recomputed at most every REFRESH_MS: admission asks per waiting chain, this walks every account. */
  private refresh(now: number): void {
    if (now - this.refreshedAt < REFRESH_MS) return;
    this.refreshedAt = now;
    let active = 0;
    for (const [account, entry] of this.usage) {
      const idle = now - entry.seenAt;
      if (idle > FORGET_AFTER_TAUS * this.tauMs) {
        this.usage.delete(account);
        this.demoted.delete(account);
      } else if (idle <= this.tauMs) {
        active++;
      }
    }
    this.threshold = Math.max(1 / Math.max(1, active), 1 / this.workers);
    const all = this.decayed(this.allChains, now);
    for (const [account, entry] of this.usage) {
      const share = this.decayed(entry.ms, now) / (this.workers * this.tauMs);
      const othersRan = all - this.decayed(entry.chains, now) >= MIN_OTHER_CHAINS;
      if (this.demoted.has(account)) {
        if (!othersRan || share < HYSTERESIS * this.threshold) this.demoted.delete(account);
      } else if (othersRan && share > this.threshold) {
        this.demoted.add(account);
      }
    }
  }
}

interface Decayed {
  value: number;
  at: number;
}

interface Usage {
  /** Worker time of the account's hooks. */
  ms: Decayed;
  /** Chains that contained a revision of the account. */
  chains: Decayed;
  seenAt: number;
}

const REFRESH_MS = 50;
const FORGET_AFTER_TAUS = 5;
/** Decayed count of chains without an account below which it is "in every chain" (≈ none in the last time constant). */
const MIN_OTHER_CHAINS = 0.3;
/**
 * A demoted account held at its cap uses ≈ cap / workers of the capacity, which is about the
 * threshold itself: promotion waits until it is clearly below, or it would flap.
 */
const HYSTERESIS = 0.7;
