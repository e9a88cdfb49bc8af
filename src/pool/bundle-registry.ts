import type { BundleMeta } from "./protocol.js";

/**
 * A crash-suspect bundle is on probation — its chains run alone — until it has completed this many
 * chains without a crash, or for SUSPECT_MS at most. Counted in chains, not time, so an innocent
 * bundle that was merely busy during someone else's crash is slowed for a few chains only.
 */
export const PROBATION_CHAINS = 8;
export const SUSPECT_MS = 10 * 60_000;

/** What a quarantine records: the digest, and why (bundle, hook, chain, reason…) for logs and events. */
export type QuarantineInfo = Record<string, unknown> & { digest: string };

/**
 * What the supervisor knows about each bundle revision it was given (DESIGN §4.1). Starts no process
 * and reads no file: the supervisor tells it what happened, admission and the workers ask it.
 *
 * ```
 *  loaded(meta) ─▶ loaded ──a crash pinned on it (crash.ts)──────────────▶ quarantined: its hooks are
 *                    │                                                     not run (recorded `crashed`)
 *                    └──running during a crash pinned on nobody──▶ suspect: its chains run alone
 *                                  │  PROBATION_CHAINS clean chains, or SUSPECT_MS ─▶ cleared
 *                                  └─ its next crash, now certain ─▶ quarantined
 *  loaded(meta) again ─▶ quarantine and suspicion lifted        unloaded(digest) ─▶ forgotten
 * ```
 *
 * SECURITY: being a suspect never leads to a quarantine by itself; only a crash with no other code
 * running does (recovery.ts).
 */
export class BundleRegistry {
  /** Insertion order: a restarted host reloads them in the order they were loaded. */
  private readonly bundles = new Map<string, BundleMeta>();
  private readonly quarantines = new Map<string, QuarantineInfo>();
  /** Suspect digest → when it became one and the chains it has completed alone since. */
  private readonly suspects = new Map<string, { since: number; cleanChains: number }>();

  /** A load succeeded: the revision is loaded and any quarantine or suspicion is lifted. True when it was quarantined. */
  loaded(meta: BundleMeta): boolean {
    this.bundles.set(meta.digest, meta);
    this.suspects.delete(meta.digest);
    return this.quarantines.delete(meta.digest);
  }

  /** Forget a revision and its marks; its metadata when it was loaded (then the host must release it). */
  unloaded(digest: string): BundleMeta | undefined {
    const meta = this.bundles.get(digest);
    this.bundles.delete(digest);
    this.quarantines.delete(digest);
    this.suspects.delete(digest);
    return meta;
  }

  isLoaded(digest: string): boolean {
    return this.bundles.has(digest);
  }

  nameOf(digest: string): string | undefined {
    return this.bundles.get(digest)?.name;
  }

  /** The revisions a restarted host loads again: loaded, not quarantined, in load order. */
  toReload(): BundleMeta[] {
    const out: BundleMeta[] = [];
    for (const [digest, meta] of this.bundles) if (!this.quarantines.has(digest)) out.push(meta);
    return out;
  }

  quarantine(info: QuarantineInfo): void {
    this.quarantines.set(info.digest, info);
    this.suspects.delete(info.digest);
  }

  isQuarantined(digest: string): boolean {
    return this.quarantines.has(digest);
  }

  /** The quarantined ones among a chain's digests (the worker records their hooks `crashed`), or undefined. */
  quarantinedAmong(digests: readonly string[]): string[] | undefined {
    if (this.quarantines.size === 0) return undefined;
    let out: string[] | undefined;
    for (const digest of digests) if (this.quarantines.has(digest)) (out ??= []).push(digest);
    return out;
  }

  /** It ran during a crash that could not be pinned on one bundle. A quarantined revision stays quarantined. */
  suspect(digest: string, now: number): void {
    if (!this.quarantines.has(digest)) this.suspects.set(digest, { since: now, cleanChains: 0 });
  }

  /** On probation; a suspect whose probation is over (chains or time) is cleared here. */
  isSuspect(digest: string, now: number): boolean {
    const probation = this.suspects.get(digest);
    if (probation === undefined) return false;
    if (now - probation.since > SUSPECT_MS || probation.cleanChains >= PROBATION_CHAINS) {
      this.suspects.delete(digest);
      return false;
    }
    return true;
  }

  /** A chain with these revisions ran (alone, for a suspect) and did not kill the host. */
  chainCompleted(digests: readonly string[]): void {
    if (this.suspects.size === 0) return;
    for (const digest of digests) {
      const probation = this.suspects.get(digest);
      if (probation !== undefined) probation.cleanChains++;
    }
  }

  quarantinedDigests(): string[] {
    return [...this.quarantines.keys()];
  }

  suspectDigests(now: number): string[] {
    return [...this.suspects.keys()].filter((digest) => this.isSuspect(digest, now));
  }
}
