/*
 * Shared bundles across replicas (issue 18), on top of the bundle manager (bundles.ts) and the
 * shared bundle state in Redis (store/bundles.ts).
 *
 *   upload to replica A ─► A verifies, loads, swaps ─► publish (one script: artifact, entry, seq, notify)
 *                                                        │
 *          ┌──── pub/sub "bundle:changed" ◄──────────────┘     + every reconcile_ms, + at every reconnect
 *          ▼
 *   replica B reconcile (one at a time, no other bundle change in between):
 *     seq unchanged ─► done (one round trip)
 *     else read every entry, in seq order:
 *       removed      ─► remove locally
 *       same digest  ─► nothing
 *       other digest ─► fetch artifact ─► verify with B's own keyring ─► load ─► atomic swap ─► persist
 *                       refused ─► B keeps its previous revision; the refusal is in its status
 *     local bundle the store has never heard of ─► seed it (only if still absent)
 *
 * Redis that lost data (store/data-loss.ts: its epoch key gone, or the revision below the highest
 * this replica has read): the replica says so, raises the counter back to that highest revision
 * (revision numbers keep their meaning), and keeps what it runs — an entry standing for an earlier
 * revision than the one a bundle runs here at is not applied but written back over (restore mode:
 * the replica that ran the newest revision wins), so a Redis restored from an older copy rolls no
 * replica back.
 *
 * This replica's own change that the store took but its data directory did not (bundles.ts answers
 * PUBLISHED_NOT_PERSISTED and undoes it here only): `notApplied` forgets that it runs it, so the next
 * pass applies and persists it like a peer's change — retried at every reconcile, NOT READY until then.
 *
 * Chains in flight finish on the revision they started on (bundles.ts pins). A refusal for a reason
 * that cannot change without a restart (signature, trust, a malformed bundle, a disabled profile…) is
 * not retried for the same digest; anything else (the store or the sandbox unavailable) is retried at
 * the next reconcile.
 *
 * A replica that refused the active revision of any bundle runs something else than its peers — an
 * older revision, or nothing — so a guard the operator shipped is not applied here: it is NOT READY
 * (`readiness()`, /readyz 503) until it runs the active revision (a newer revision it accepts, the
 * bundle removed, or a restart with a keyring that verifies it). The replica that took an upload
 * answers which live replicas accepted or refused it (`verdicts()`), waiting briefly for their
 * heartbeat records to say so.
 */
import { VcpError } from "../errors.js";
import { createOutageLog, systemClock, type Logger } from "../observe/events.js";
import { entrySource, sharedBundleState, type DataLossEvent, type PeerView, type RefusedRevision, type ReplicaBundleReport, type SharedBundleEntry, type SharedRevision, type SharedStore } from "../store/index.js";
import type { BundleManager, BundlePublisher } from "./bundles.js";

/** Refusals a retry cannot cure: the artifact or this replica's configuration would have to change. */
const PERMANENT_REFUSALS: ReadonlySet<string> = new Set([
  "SIGNATURE_INVALID", "UNSIGNED_BUNDLE", "TRUST_EXCEEDS_KEY", "DIGEST_MISMATCH", "INVALID_BUNDLE", "INVALID_HOOK", "INVALID_PREDICATE",
  "INVALID_MATCHER", "ACTION_NOT_CALLABLE", "BUNDLE_TOO_LARGE", "PROFILE_DISABLED", "UNKNOWN_PROFILE", "EXEC_DISABLED", "EXEC_NOT_ALLOWED",
  "EXEC_SHELL_DISABLED", "DUPLICATE_HOOK", "SESSION_HOOK_NOT_ALLOWED", "BUILD_FAILED",
]);

/** What the live replicas of the prefix did with one revision (`PUT /v1/bundles` answers it as `replicas`). */
export interface ReplicaVerdicts {
  /** Replica ids that run the revision (the one that took the upload included). */
  accepted: string[];
  /** Replicas that refused it, with the code and message of their refusal (their keyring, a disabled profile…). */
  refused: Array<{ replica: string; code: string; message: string }>;
  /** Live replicas that had said neither when the wait ended. */
  pending: string[];
}

/** Why this replica is not ready, or null: it runs the active shared revision of every bundle it reconciled. */
export type BundleReadiness = { ready: true; reason: null } | { ready: false; reason: string };

/** How often `verdicts` re-reads the replicas' records while some have not answered. */
const VERDICT_POLL_MS = 100;

export interface BundleSync {
  /** Announces local installs and removals (the bundle manager's `publisher`). */
  readonly publisher: BundlePublisher;
  /** Subscribe, reconcile once (when connected), and keep reconciling. */
  start(bundles: BundleManager): Promise<void>;
  /** Reconcile now (also what a notification, a reconnect and the timer do). */
  reconcile(): Promise<void>;
  /** This replica's part of its heartbeat record. */
  report(): ReplicaBundleReport;
  /** The shared revision last read from the store (null before the first read). */
  desiredRevision(): number | null;
  /** Not ready while this replica refuses the active revision of a bundle (see the file comment). */
  readiness(): BundleReadiness;
  /** Which live replicas run `digest` of `bundle` or refused it; waits up to `waitMs` for the silent ones. */
  verdicts(bundle: string, digest: string, waitMs: number): Promise<ReplicaVerdicts>;
  close(): Promise<void>;
}

/**
 * @example
 * ```ts
 * const sync = createBundleSync({ shared, logger });
 * const bundles = createBundleManager({ ...deps, publisher: sync.publisher });
 * await sync.start(bundles);
 * ```
 */
export function createBundleSync(deps: {
  shared: SharedStore;
  logger: Logger;
  /** This replica's install or removal of `bundle` is in the store (what its swap withdrew from sessions goes); never rejects. */
  onPublished?(bundle: string): Promise<void>;
}): BundleSync {
  const { shared, logger } = deps;
  const state = sharedBundleState(shared.connection);
  let bundles: BundleManager | undefined;
  // The shared revision reconciled to, and its generation (seq numbers compare only within one).
  let applied: number | null = null;
  let appliedGeneration: string | null = null;
  let desired: number | null = null;
  /** The highest shared revision read or written: the counter never goes below it again (data loss). */
  let highest = 0;
  /**
   * The revision each bundle's state here stands for (installed or removed): the entry's seq, or the
   * `from` of an entry written back after a data loss. An entry standing for an earlier one is stale.
   */
  const runsAt = new Map<string, number>();
  /** The last data loss the revision check below has accounted for (a loss the heartbeat noticed first). */
  let lossHandled: DataLossEvent | null = shared.dataLoss.last();
  /** The last floor record read (undefined before the first read: an old record is learnt, not alarmed). */
  let floorSeen: string | null | undefined;
  const refused = new Map<string, RefusedRevision>();
  let running: Promise<void> | null = null;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  let unsubscribe: (() => Promise<void>) | undefined;
  let stopReady: (() => void) | undefined;
  let closed = false;
  // One warning when reconciliation starts failing, one a minute while it does, one line when it resumes.
  const outage = createOutageLog({ logger, clock: systemClock, failing: "store: bundle reconciliation failed; retrying at the next notification or interval", recovered: "store: bundle reconciliation resumed" });

  /**
   * The last change of each bundle this replica published (one entry per bundle): what to take back
   * when the bundle manager undoes it here after the store took it (`notApplied`).
   */
  const ownChange = new Map<string, { seq: number; digest: string | null; version: string | null; runsAtBefore: number | undefined }>();

  const publisher: BundlePublisher = {
    async publish(artifact, info, options) {
      const result = await state.publish({
        bundle: info.bundle, digest: info.digest, version: info.version, artifactJson: JSON.stringify(artifact),
        by: shared.replicaId, allowDowngrade: options.allowDowngrade, mode: "replace", floor: highest,
      });
      ownChange.set(info.bundle, { seq: result.seq, digest: info.digest, version: info.version, runsAtBefore: runsAt.get(info.bundle) });
      refused.delete(info.bundle);
      if (result.changed) runsAt.set(info.bundle, result.seq);
      // This replica already runs it: the notification it sends itself finds nothing to do.
      advanceIfNext(result);
      await deps.onPublished?.(info.bundle);
    },
    async unpublish(name) {
      const result = await state.remove({ bundle: name, by: shared.replicaId, floor: highest });
      ownChange.set(name, { seq: result.seq, digest: null, version: null, runsAtBefore: runsAt.get(name) });
      refused.delete(name);
      if (result.changed) runsAt.set(name, result.seq);
      advanceIfNext(result);
      await deps.onPublished?.(name);
    },
    notApplied(bundle, failure) {
      // Called inside the bundle manager's queue, right after its publish: no pass ran in between.
      const own = ownChange.get(bundle);
      ownChange.delete(bundle);
      // What this replica runs of the bundle stands for the revision it stood for before the change…
      if (own?.runsAtBefore === undefined) runsAt.delete(bundle);
      else runsAt.set(bundle, own.runsAtBefore);
      // …and the next pass reads every entry instead of trusting a revision marked applied: it applies
      // (and persists) the change again, retried at each reconcile while the data directory refuses it.
      applied = null;
      // Not ready until then, like a peer that refused the revision (or could not apply the removal).
      const kept = bundles?.get(bundle);
      const at = new Date().toISOString();
      if (own !== undefined && own.digest !== null) refused.set(bundle, { bundle, digest: own.digest, version: own.version, revision: own.seq, code: failure.code, message: failure.message, at });
      else if (own !== undefined && kept !== undefined) refused.set(bundle, { bundle, digest: kept.digest, version: kept.version, removed: true, revision: own.seq, code: failure.code, message: failure.message, at });
      logger.warn({ bundle, revision: own?.seq ?? null, code: failure.code, error: failure.message }, `store: this replica's change of bundle '${bundle}' is in the shared store but its data directory could not be written; it undid the change here and applies it again at the next reconcile`);
    },
  };

  /** Our own change was the very next one: nothing else to reconcile for it. */
  function advanceIfNext(result: SharedRevision & { changed: boolean }): void {
    highest = Math.max(highest, result.seq);
    if (result.changed && applied !== null && result.generation === appliedGeneration && result.seq === applied + 1) applied = result.seq;
  }

  /** One pass, inside the bundle manager's queue: nothing else changes bundles meanwhile. */
  async function pass(manager: BundleManager): Promise<boolean> {
    return manager.exclusive(async () => {
      const current = await state.revision();
      shared.dataLoss.epochSeen(current.epoch);
      desired = current.seq;
      const lost = current.seq < highest;
      if (lost) {
        // Below what this replica has read: Redis lost data. Emptied (the epoch says so, maybe through
        // the heartbeat first) or rewound (an older copy): the alarm once, then the counter back up.
        const loss = shared.dataLoss.last();
        const emptied = loss !== null && loss !== lossHandled && loss.kind === "emptied";
        if (!emptied) shared.dataLoss.rewound(highest, current.seq);
        lossHandled = shared.dataLoss.last();
        const id = await state.floor({ highest, by: shared.replicaId, kind: emptied ? "emptied" : "rewound" });
        if (id !== null) floorSeen = id;
      } else if (applied !== null && current.seq === applied && current.generation === appliedGeneration && !retryableRefusal()) return false;
      const { seq: readSeq, generation, entries, floor } = await state.read();
      // Another replica found Redis rewound before this one could see it (it raised the counter first).
      if (!lost && floor !== null && floorSeen !== undefined && floor.id !== floorSeen && floor.kind === "rewound" && floor.by !== shared.replicaId) {
        shared.dataLoss.rewound(floor.highest, floor.found, floor.by);
        lossHandled = shared.dataLoss.last();
      }
      floorSeen = floor?.id ?? null;
      desired = readSeq;
      let changed = false;
      const named = new Set<string>();
      for (const entry of entries) {
        named.add(entry.bundle);
        if (isStale(manager, entry)) changed = (await writeBack(manager, entry.bundle)) || changed;
        else changed = (await applyEntry(manager, entry)) || changed;
      }
      // A bundle this replica holds that the store has never heard of (an empty, new or emptied Redis): share it.
      for (const info of manager.list()) {
        if (!named.has(info.bundle)) changed = (await writeBack(manager, info.bundle)) || changed;
      }
      highest = Math.max(highest, readSeq);
      applied = readSeq;
      appliedGeneration = generation;
      return changed;
    });
  }

  /** A revision refused for a reason that may pass (a data directory, the sandbox, the store): the next pass reads the entries again even when the revision did not move. */
  function retryableRefusal(): boolean {
    for (const r of refused.values()) if (!PERMANENT_REFUSALS.has(r.code)) return true;
    return false;
  }

  /** An entry that stands for an earlier revision than this replica's state of its bundle, and differs from it: Redis went back. */
  function isStale(manager: BundleManager, entry: SharedBundleEntry): boolean {
    const mine = runsAt.get(entry.bundle);
    if (mine === undefined || entrySource(entry) >= mine) return false;
    const local = manager.get(entry.bundle);
    return entry.removed === true ? local !== undefined : local?.digest !== entry.digest;
  }

  /**
   * Write this replica's state of `bundle` back to the store (restore mode: it stands unless a later
   * revision is there): after a data loss, and for a bundle the store has never heard of.
   */
  async function writeBack(manager: BundleManager, bundle: string): Promise<boolean> {
    const from = runsAt.get(bundle) ?? 0;
    const info = manager.get(bundle);
    const artifact = info === undefined ? undefined : manager.installedArtifact(bundle);
    if (info !== undefined && artifact === undefined) return false;
    const result = info === undefined
      ? await state.remove({ bundle, by: shared.replicaId, restoreFrom: from, floor: highest })
      : await state.publish({ bundle, digest: info.digest, version: info.version, artifactJson: JSON.stringify(artifact), by: shared.replicaId, allowDowngrade: false, mode: "restore", from, floor: highest });
    highest = Math.max(highest, result.seq);
    if (!result.changed) return false;
    logger.info({ bundle, digest: info?.digest ?? null, revision: result.seq, runs_at: from }, info === undefined ? "store: wrote back the removal of a bundle over an older entry" : "store: shared this replica's revision of a bundle (the store did not have it, or had an older one)");
    return true;
  }

  async function applyEntry(manager: BundleManager, entry: SharedBundleEntry): Promise<boolean> {
    const local = manager.get(entry.bundle);
    if (entry.removed === true) {
      if (local !== undefined) {
        try {
          await manager.removeShared(entry.bundle);
        } catch (err) {
          // Like a refused revision: kept here, NOT READY, retried at the next reconcile; the other entries still apply.
          const code = err instanceof VcpError ? err.code : "INTERNAL";
          const message = err instanceof Error ? err.message : String(err);
          refused.set(entry.bundle, { bundle: entry.bundle, digest: local.digest, version: local.version, removed: true, revision: entry.seq, code, message, at: new Date().toISOString() });
          logger.warn({ bundle: entry.bundle, revision: entry.seq, code, error: message, kept: local.digest }, `store: this replica could not apply shared revision ${entry.seq} (the removal of bundle '${entry.bundle}'); it keeps revision ${local.digest}`);
          return true;
        }
        logger.info({ bundle: entry.bundle, revision: entry.seq, by: entry.by }, "store: bundle removed (shared revision)");
      }
      refused.delete(entry.bundle);
      runsAt.set(entry.bundle, entrySource(entry));
      return local !== undefined;
    }
    if (local?.digest === entry.digest) {
      refused.delete(entry.bundle);
      runsAt.set(entry.bundle, entrySource(entry));
      return false;
    }
    const known = refused.get(entry.bundle);
    if (known !== undefined && known.digest === entry.digest && PERMANENT_REFUSALS.has(known.code)) return false;
    try {
      const artifact = await state.artifact(entry.digest);
      if (artifact === undefined) {
        throw new VcpError("STORE_UNAVAILABLE", `bundle '${entry.bundle}' ${entry.digest}: the shared store no longer holds this artifact (a newer revision replaced it)`, { operation: "reading a bundle artifact", bundle: entry.bundle, digest: entry.digest });
      }
      // SECURITY: applyShared verifies the artifact with this replica's keyring (bundles.ts); the store is not trusted.
      const info = await manager.applyShared(artifact);
      refused.delete(entry.bundle);
      runsAt.set(entry.bundle, entrySource(entry));
      logger.info({ bundle: info.bundle, version: info.version, digest: info.digest, revision: entry.seq, by: entry.by }, "store: bundle activated (shared revision)");
      return true;
    } catch (err) {
      const code = err instanceof VcpError ? err.code : "INTERNAL";
      const message = err instanceof Error ? err.message : String(err);
      refused.set(entry.bundle, { bundle: entry.bundle, digest: entry.digest, version: entry.version, revision: entry.seq, code, message, at: new Date().toISOString() });
      logger.warn(
        { bundle: entry.bundle, digest: entry.digest, revision: entry.seq, code, error: message, kept: local?.digest ?? null },
        `store: this replica refused shared revision ${entry.seq} of bundle '${entry.bundle}'; it keeps ${local === undefined ? "no revision of it" : `revision ${local.digest}`}`,
      );
      return true;
    }
  }

  async function reconcile(): Promise<void> {
    if (bundles === undefined || closed) return;
    if (running !== null) {
      again = true;
      return running;
    }
    const manager = bundles;
    running = (async () => {
      do {
        again = false;
        try {
          const changed = await pass(manager);
          outage.succeeded();
          // Peers see the new revision in status at once, not at the next heartbeat.
          if (changed) await shared.presence.beat().catch(() => undefined);
        } catch (err) {
          outage.failed(err);
        }
      } while (again && !closed);
    })().finally(() => {
      running = null;
    });
    return running;
  }

  return {
    publisher,
    async start(manager) {
      bundles = manager;
      unsubscribe = await state.onChange(() => void reconcile());
      // After a reconnect: messages sent meanwhile are lost; read the state instead.
      stopReady = shared.connection.onReady(() => void reconcile());
      if (shared.connection.connected()) await reconcile();
      timer = setInterval(() => void reconcile(), shared.options.reconcileMs);
      timer.unref();
    },
    reconcile,
    report: () => ({
      revision: applied,
      bundles: Object.fromEntries((bundles?.list() ?? []).map((b) => [b.bundle, { version: b.version, digest: b.digest }])),
      refused: [...refused.values()],
    }),
    desiredRevision: () => desired,
    readiness() {
      if (refused.size === 0) return { ready: true, reason: null };
      const which = [...refused.values()].map((r) =>
        r.removed === true ? `'${r.bundle}' removal (shared revision ${r.revision}; it keeps ${r.version ?? "?"} ${r.digest}): ${r.code}` : `'${r.bundle}' ${r.version ?? "?"} (${r.digest}, shared revision ${r.revision}): ${r.code}`,
      );
      return { ready: false, reason: `this replica refused the active revision of bundle ${which.join("; ")}; it does not run what its peers run` };
    },
    async verdicts(bundle, digest, waitMs) {
      const deadline = Date.now() + waitMs;
      for (;;) {
        // One heartbeat: this replica's record refreshed, everyone's read back.
        await shared.presence.beat().catch(() => undefined);
        const verdicts = classifyPeers(shared.presence.peers(), bundle, digest);
        const left = deadline - Date.now();
        if (verdicts.pending.length === 0 || left <= 0) return verdicts;
        await new Promise((resolve) => setTimeout(resolve, Math.min(VERDICT_POLL_MS, left)));
      }
    },
    async close() {
      closed = true;
      clearInterval(timer);
      stopReady?.();
      await unsubscribe?.().catch(() => undefined);
      await running?.catch(() => undefined);
    },
  };
}

/** Each live replica's answer about `digest` of `bundle`, from its heartbeat record. */
export function classifyPeers(peers: readonly PeerView[], bundle: string, digest: string): ReplicaVerdicts {
  const out: ReplicaVerdicts = { accepted: [], refused: [], pending: [] };
  for (const peer of peers) {
    if (!peer.live) continue;
    if (peer.bundles[bundle]?.digest === digest) {
      out.accepted.push(peer.id);
      continue;
    }
    const refusal = peer.refused.find((r) => r.bundle === bundle && r.digest === digest);
    if (refusal !== undefined) out.refused.push({ replica: peer.id, code: refusal.code, message: refusal.message });
    else out.pending.push(peer.id);
  }
  return out;
}
