/*
 * The bundle manager: every change to the installed policy, one at a time.
 *
 *   install(input) ─ verify ─► activate: load in sandbox ─► atomic registry swap (registry.swapBundle: deployment,
 *                    session and profile hooks in one commit) ─► publish ─► persist ─► settled ─► retire old
 *                    (a failed publish or persist swaps the previous revision back, then settles; a persist
 *                    that fails after the publish: PUBLISHED_NOT_PERSISTED, and the reconcile applies it again)
 *   restore(deadline) ─ read data dir ─ re-verify ─► activate, a load past its budget retried (no publish, no persist)
 *   remove(name)   ─ registry swap ─► publish ─► persist ─► settled ─► retire
 *   applyShared / removeShared (bundle-sync.ts, inside `exclusive`) ─ a change another replica
 *                    published: verified here with this replica's keyring ─► activate ─► persist
 *
 * "publish" exists only with a shared store (store.kind redis): the change is written to Redis for
 * every replica, and a failure there undoes the swap like a failed persist (STORE_UNAVAILABLE). Once
 * published, a change is the deployment's: a persist failing after it undoes the change on this
 * replica only, which then catches up with the shared store like any peer (see `activate`).
 *
 * A retired revision's isolates are released (`backend.unloadBundle`) only once no chain that started
 * on it is in flight (spec §6.3, DESIGN §3.4 hot swap): every chain pins the digests of its plan
 * (`RevisionPins`) for as long as it runs. A failure anywhere leaves the installed revision as it was
 * and is recorded on it (`BundleInfo.errors`).
 */
import { VcpError, type ErrorCode } from "../errors.js";
import { hasActionHooks, isVcpManifest, manifestHookDefinitions, manifestHookNames, manifestProfileHooks } from "../bundle/hooks.js";
import { validateExecHook } from "../bundle/exec-hook.js";
import { parseManifest, type Manifest } from "../bundle/manifest.js";
import { createArtifact, isArtifactLike, verifyArtifact, type VcpArtifact, type VerifiedArtifact } from "../bundle/artifact.js";
import type { Keyring } from "../bundle/keys.js";
import { KEPT_REVISIONS, type BundleStore } from "../bundle/store.js";
import { compareVersions } from "../bundle/version.js";
import { DeadlineBackoff } from "../model/backoff.js";
import type { Clock, Logger } from "../observe/events.js";
import type { Metrics } from "../observe/metrics.js";
import type { ActionResolver, BundleRevision, Principal, Registry } from "../registry/index.js";
import type { EnabledProfile } from "../profiles/enabled.js";
import type { ChainBackend } from "../pool/backend.js";
import type { BundleInfo, BundleInstallError, InstallOptions, KeptRevision } from "./types.js";

export const SYSTEM_PRINCIPAL: Principal = Object.freeze({ id: "runtime", role: "system" });
export const LOCAL_OPERATOR: Principal = Object.freeze({ id: "local-operator", role: "operator" });

const MAX_RECORDED_ERRORS = 5;
/** No command lane: what a deployment that says nothing about `exec` gets (PROFILES §6: off by default). */
const EXEC_OFF = Object.freeze({ enabled: false, shell: false });

/** In-flight chains per bundle digest, and the retired revisions waiting for them to finish. */
export interface RevisionPins {
  /** A chain starts on these revisions. */
  pin(digests: readonly string[]): void;
  /** That chain finished: a retired revision no chain uses any more is unloaded. */
  unpin(digests: readonly string[]): void;
  /** This revision is no longer installed: unload it now if idle, else when its last chain finishes. */
  retire(digest: string): Promise<void>;
  /** Chains in flight on a revision (0 when none). */
  inFlight(digest: string): number;
}

/**
 * @example
 * ```ts
 * const pins = createRevisionPins({ backend, logger });
 * pins.pin([digest]);
 * await pins.retire(digest); // still in flight: kept loaded
 * pins.unpin([digest]);      // now unloaded
 * ```
 */
export function createRevisionPins(deps: { backend: Pick<ChainBackend, "unloadBundle">; logger: Logger }): RevisionPins {
  const inFlightByDigest = new Map<string, number>();
  const retiredDigests = new Set<string>();

  async function releaseIfIdle(digest: string): Promise<void> {
    if (retiredDigests.has(digest) && (inFlightByDigest.get(digest) ?? 0) === 0) {
      retiredDigests.delete(digest);
      await deps.backend.unloadBundle(digest).catch((err: unknown) => deps.logger.warn({ err, digest }, "unloading a retired bundle failed"));
    }
  }

  return {
    pin(digests) {
      for (const digest of digests) inFlightByDigest.set(digest, (inFlightByDigest.get(digest) ?? 0) + 1);
    },
    unpin(digests) {
      for (const digest of digests) {
        const left = (inFlightByDigest.get(digest) ?? 1) - 1;
        if (left === 0) inFlightByDigest.delete(digest);
        else inFlightByDigest.set(digest, left);
        if (left === 0 && retiredDigests.has(digest)) void releaseIfIdle(digest);
      }
    },
    async retire(digest) {
      retiredDigests.add(digest);
      await releaseIfIdle(digest);
    },
    inFlight: (digest) => inFlightByDigest.get(digest) ?? 0,
  };
}

export interface BundleManagerDeps {
  backend: ChainBackend;
  registry: Registry;
  pins: RevisionPins;
  /** PROFILE_DISABLED unless the profile is enabled (fire-profile.ts `assertEnabled`). */
  enabledProfile(ref: string): EnabledProfile;
  /** The data directory's bundle store; undefined: nothing persists. */
  store: BundleStore | undefined;
  keyring: Keyring | undefined;
  requireSignatures: boolean;
  maxBundleBytes: number;
  metrics: Pick<Metrics, "recordBundleChange">;
  clock: Clock;
  logger: Logger;
  /** SANDBOX_CLOSED once the runtime is closed. */
  assertOpen(): void;
  /** The deployment's command lane switches (vcp.yaml `exec`, PROFILES §6): the install gate of exec hooks. Default off. */
  exec?: { readonly enabled: boolean; readonly shell: boolean };
  /** An install was refused (any code): the runtime audits it. Never called for restore. */
  onRefused?(refusal: { bundle: string | undefined; digest: string | undefined; error: unknown; principal: Principal }): Promise<void>;
  /** With a shared store: writes each install and removal for the other replicas (bundle-sync.ts). */
  publisher?: BundlePublisher;
  /**
   * A change that swapped the registry is over: kept (published, persisted) or undone. Only now may
   * what its swaps did to sessions' hooks reach the shared store (store/session-hook-sync.ts).
   */
  onSettled?(bundle: string): void;
}

/** Where a local install or removal is announced to the other replicas (Redis; src/install/bundle-sync.ts). */
export interface BundlePublisher {
  publish(artifact: VcpArtifact, info: BundleInfo, options: { allowDowngrade: boolean }): Promise<void>;
  unpublish(name: string): Promise<void>;
  /**
   * This replica published a change of `bundle`, then could not persist it and undid it here: the
   * shared store holds a change this replica does not run. Reconcile it like a peer's (applied and
   * persisted at the next reconcile; not ready meanwhile).
   */
  notApplied(bundle: string, failure: VcpError): void;
}

export interface BundleManager {
  install(input: unknown, options: InstallOptions): Promise<BundleInfo>;
  remove(name: string, principal: Principal | undefined): Promise<BundleInfo>;
  /**
   * Reinstall what the data directory holds, re-verified; a bundle that no longer verifies stops the
   * start. A load that runs past its budget is retried with backoff until `deadline` (performance.now()).
   */
  restore(deadline: number): Promise<void>;
  /** By name: stable across restarts and hot swaps (chain order is `hooks.chain`, not this). */
  list(): BundleInfo[];
  get(name: string): BundleInfo | undefined;
  /** Installed bundles in the order they were first installed (metrics' `vcp_bundle_info`). */
  infos(): BundleInfo[];
  /** The registry's action check: only an installed revision's exports run. */
  resolveAction: ActionResolver;
  /** Run `task` with no other bundle change before it ends (the shared-bundle reconciler). */
  exclusive<T>(task: () => Promise<T>): Promise<T>;
  /**
   * Only inside `exclusive`: activate a revision another replica published. Verified against this
   * replica's keyring; downgrades allowed (the shared order decides); persisted locally, not published.
   * A refusal leaves the installed revision as it was and is recorded on it (`errors`).
   */
  applyShared(artifact: unknown): Promise<BundleInfo>;
  /** Only inside `exclusive`: remove a bundle the shared store removed (not published again). */
  removeShared(name: string): Promise<BundleInfo | undefined>;
  /** The artifact of an installed bundle (to seed an empty shared store). */
  installedArtifact(name: string): VcpArtifact | undefined;
  /** The revisions the data directory keeps of an installed bundle, newest (active) first (UNKNOWN_BUNDLE). */
  revisions(name: string): Promise<KeptRevision[]>;
  /** One kept revision with its manifest (UNKNOWN_BUNDLE, UNKNOWN_REVISION). */
  revision(name: string, digest: string): Promise<KeptRevision & { manifest: unknown }>;
  /** The artifact of a kept revision, to install again (UNKNOWN_BUNDLE, UNKNOWN_REVISION): verified by the install. */
  revisionArtifact(name: string, digest: string): Promise<unknown>;
}

interface InstalledBundle {
  info: BundleInfo;
  manifest: Manifest;
  artifact: VcpArtifact;
}

/**
 * @example
 * ```ts
 * const bundles = createBundleManager({ backend, registry, pins, enabledProfile, store, keyring,
 *   requireSignatures: false, maxBundleBytes: 5 << 20, metrics, clock, logger, assertOpen });
 * await bundles.install({ manifest, code }, {});
 * ```
 */
export function createBundleManager(deps: BundleManagerDeps): BundleManager {
  const { backend, registry, pins, store, clock, logger } = deps;
  const installed = new Map<string, InstalledBundle>();
  const verifyOptions = { requireSignatures: deps.requireSignatures, maxCodeBytes: deps.maxBundleBytes, ...(deps.keyring !== undefined ? { keyring: deps.keyring } : {}) };
  // Bundle changes run one at a time: install awaits the sandbox between reading and swapping.
  let bundleQueue: Promise<unknown> = Promise.resolve();
  const serially = <T>(task: () => Promise<T>): Promise<T> => {
    const run = bundleQueue.then(task, task);
    bundleQueue = run.catch(() => undefined);
    return run;
  };

  async function installNow(input: unknown, installOptions: InstallOptions): Promise<BundleInfo> {
    deps.assertOpen();
    try {
      const verified = verifyInstallInput(input);
      return await activate(verified, {
        principal: installOptions.principal ?? LOCAL_OPERATOR,
        allowDowngrade: installOptions.allowDowngrade === true,
        persist: true,
        publish: true,
      });
    } catch (err) {
      recordFailure(input, err);
      // Durable before the caller hears of it, like every decision of the runtime; the refusal stands either way.
      await deps.onRefused?.({ bundle: bundleNameOf(input), digest: digestOf(input), error: err, principal: installOptions.principal ?? LOCAL_OPERATOR }).catch((auditErr: unknown) => logger.error({ err: auditErr }, "audit: a bundle refusal could not be recorded"));
      throw err;
    }
  }

  /** A `.vcpb` is verified (digest, manifest, signatures, trust); a source is accepted only when signatures are optional. */
  function verifyInstallInput(input: unknown): VerifiedArtifact {
    if (isArtifactLike(input)) return verifyArtifact(input, verifyOptions);
    if (typeof input !== "object" || input === null || !("manifest" in input)) {
      throw new VcpError("INVALID_BUNDLE", "expected a .vcpb artifact ({ format, manifest, code, digest, signatures }) or a { manifest, code } source", { field: "(root)" });
    }
    const source = input as { manifest: unknown; code?: unknown };
    if (deps.requireSignatures) {
      const name = bundleNameOf(input) ?? "(unnamed)";
      throw new VcpError("UNSIGNED_BUNDLE", `bundle '${name}': a { manifest, code } source is unsigned and signatures are required; install a signed .vcpb`, { bundle: name });
    }
    const manifest = parseManifest(source.manifest);
    // An exec-only bundle has no code (PROFILES §6); every other one must bring some.
    if (typeof source.code !== "string" || (source.code.length === 0 && hasActionHooks(manifest))) {
      throw new VcpError("INVALID_BUNDLE", `bundle '${manifest.bundle}': code must be a non-empty string`, { field: "code" });
    }
    const bytes = Buffer.byteLength(source.code, "utf8");
    if (bytes > deps.maxBundleBytes) {
      throw new VcpError("BUNDLE_TOO_LARGE", `bundle '${manifest.bundle}': code is ${bytes} bytes, above the cap of ${deps.maxBundleBytes}`, { bundle: manifest.bundle, bytes, limit: deps.maxBundleBytes });
    }
    const artifact = createArtifact(manifest, source.code);
    return { artifact, manifest, digest: artifact.digest, trust: manifest.trust, key_id: null };
  }

  async function activate(
    verified: VerifiedArtifact,
    how: { principal: Principal; allowDowngrade: boolean; persist: boolean; publish: boolean; activatedAt?: string },
  ): Promise<BundleInfo> {
    const { manifest, digest } = verified;
    // PROFILE_DISABLED before anything is loaded or swapped: the installed revision stays as it was.
    if (!isVcpManifest(manifest)) deps.enabledProfile(manifest.profile!);
    const previous = installed.get(manifest.bundle);
    // The same revision again is a no-op, unless the sandbox quarantined it: reloading lifts that.
    // (Published again all the same: the shared store may have lost it, or hold another revision.)
    if (previous !== undefined && previous.info.digest === digest && !backend.stats().quarantined.includes(digest)) {
      if (how.publish && deps.publisher !== undefined) await deps.publisher.publish(verified.artifact, previous.info, { allowDowngrade: how.allowDowngrade });
      return previous.info;
    }
    if (previous !== undefined && !how.allowDowngrade && compareVersions(manifest.version, previous.info.version) < 0) {
      throw new VcpError(
        "VERSION_DOWNGRADE",
        `bundle '${manifest.bundle}': version ${manifest.version} is lower than the installed ${previous.info.version}; install with allowDowngrade to roll back`,
        { bundle: manifest.bundle, installed: previous.info.version, requested: manifest.version },
      );
    }
    // The command lane's gate (PROFILES §6), before anything is loaded: the deployment allows exec, the
    // bundle is signed with system trust, no session scope, no shell string without exec.shell.
    manifest.hooks.forEach((hook, index) => {
      if (hook.exec === undefined) return;
      validateExecHook(hook, index, {
        trust: verified.trust,
        signed: verified.key_id !== null,
        scope: hook.scope ?? "deployment",
        config: deps.exec ?? EXEC_OFF,
        file: `bundle '${manifest.bundle}'`,
      });
    });
    const code = verified.artifact.code;
    const memoryMb = manifest.limits?.memory_mb;
    // An exec-only bundle has nothing for the sandbox: its hooks never reach it.
    const { exports } = !hasActionHooks(manifest)
      ? { exports: [] as string[] }
      : await backend.loadBundle({
          name: manifest.bundle,
          digest,
          code,
          trust: verified.trust,
          isolation: manifest.isolation,
          ...(memoryMb !== undefined ? { memoryMb } : {}),
          // Fair share is charged per signer (pool/admission.ts shareAccount).
          signedBy: verified.key_id,
        });
    const exported = new Set(exports);
    const missing = manifest.hooks.find((hook) => hook.action !== undefined && !exported.has(hook.action));
    if (missing !== undefined) {
      if (previous?.info.digest !== digest) await backend.unloadBundle(digest);
      throw new VcpError(
        "ACTION_NOT_CALLABLE",
        `bundle '${manifest.bundle}': hook '${missing.name}' names action '${missing.action}', which is not an exported function (spec §6.2.6); exports: ${exports.join(", ") || "none"}`,
        { bundle: manifest.bundle, hook: missing.name, action: missing.action, exports },
      );
    }
    const info: BundleInfo = {
      bundle: manifest.bundle,
      version: manifest.version,
      digest,
      trust: verified.trust,
      hooks: manifestHookNames(manifest, "deployment"),
      session_hooks: manifestHookNames(manifest, "session"),
      activated_at: how.activatedAt ?? new Date(clock.wallNow()).toISOString(),
      signed_by: verified.key_id,
      errors: [],
      ...(isVcpManifest(manifest) ? {} : { profile: profileRefOf(manifest) }),
    };
    // The registry resolves actions against `installed`, so the new revision is entered first
    // and rolled back if the atomic registry swap refuses it.
    installed.set(manifest.bundle, { info, manifest, artifact: verified.artifact });
    try {
      // One commit: deployment and profile hooks, the session offers, and every session hook of the bundle rebound.
      registry.swapBundle(manifest.bundle, revisionOf(manifest, digest), { scope: "deployment", principal: how.principal });
    } catch (err) {
      if (previous) installed.set(manifest.bundle, previous);
      else installed.delete(manifest.bundle);
      if (previous?.info.digest !== digest) await backend.unloadBundle(digest);
      throw err;
    }
    // Publish first, then persist. A failed publish (Redis down: the common failure) undoes nothing on
    // disk. A failed persist after the publish cannot take the change back from the shared store — the
    // other replicas may already run it — so this replica undoes it here only (memory agrees with its
    // disk), tells the publisher, and from then on treats the change like a peer's: its reconcile
    // applies and persists it again, NOT READY until then (bundle-sync.ts `notApplied`). The caller
    // hears PUBLISHED_NOT_PERSISTED, never a refusal of a change that runs elsewhere.
    let published = false;
    try {
      if (how.publish && deps.publisher !== undefined) {
        try {
          await deps.publisher.publish(verified.artifact, info, { allowDowngrade: how.allowDowngrade });
          published = true;
        } catch (err) {
          // Not shared ⇒ not installed: every replica runs what the shared store says, this one included.
          restoreHooks(manifest.bundle, previous);
          if (previous?.info.digest !== digest) await backend.unloadBundle(digest);
          throw err;
        }
      }
      if (how.persist && store !== undefined) {
        try {
          await store.activate(verified.artifact, { bundle: info.bundle, version: info.version, digest, activated_at: info.activated_at, signed_by: info.signed_by });
        } catch (err) {
          // Not persisted ⇒ not installed here: a restart must not bring back something else than what runs.
          restoreHooks(manifest.bundle, previous);
          if (previous?.info.digest !== digest) await backend.unloadBundle(digest);
          const failure = storeFailure(err, `persisting bundle '${manifest.bundle}'`);
          if (!published) throw failure;
          deps.publisher?.notApplied(info.bundle, failure);
          const kept = previous === undefined ? "no revision of it" : `${previous.info.version} (${previous.info.digest})`;
          throw publishedNotPersisted(
            failure,
            `bundle '${info.bundle}' ${info.version} (${digest}) is live in the shared store (the other replicas apply it), but this replica's data directory could not be written (${failure.message}); this replica keeps running ${kept}, reports not ready, and applies ${info.version} at its next reconcile once its data directory can be written`,
            { bundle: info.bundle, version: info.version, digest, kept: previous?.info.digest ?? null },
          );
        }
      }
    } finally {
      settled(manifest.bundle);
    }
    if (previous && previous.info.digest !== digest) await pins.retire(previous.info.digest);
    logger.info({ bundle: info.bundle, version: info.version, digest, signed_by: info.signed_by }, "bundle installed");
    return info;
  }

  /**
   * Undo a registry swap: `previous` (if any) becomes the active revision again, its hooks as they
   * were. The session hooks the failed revision had dropped come back as they were (registry.ts
   * `revive`, each with `hook.registered`); the others are bound to `previous` again. The change is not
   * settled yet (`onSettled`), so no drop has reached the shared store.
   */
  function restoreHooks(name: string, previous: InstalledBundle | undefined): void {
    // The registry resolves the restored hooks' actions against `installed`: put the previous revision
    // back there first, or the re-registration is refused as "not the installed revision".
    if (previous) installed.set(name, previous);
    else installed.delete(name);
    try {
      registry.swapBundle(name, previous === undefined ? null : revisionOf(previous.manifest, previous.info.digest), { scope: "deployment", principal: SYSTEM_PRINCIPAL });
    } catch (err) {
      logger.error({ err, bundle: name }, "could not restore the previous hooks after a failed bundle change");
    }
  }

  /**
   * A change that swapped the registry is over, kept or undone: the session hooks its swaps dropped
   * (and the undo did not bring back) stay dropped, here and — only now — in the shared store.
   */
  function settled(name: string): void {
    registry.settleSwap(name);
    deps.onSettled?.(name);
  }

  /** A manifest's revision as the registry takes it: deployment hooks, session offers, profile hooks. */
  function revisionOf(manifest: Manifest, digest: string): BundleRevision {
    return {
      version: manifest.version,
      digest,
      deployment: manifestHookDefinitions(manifest, "deployment", digest),
      session: manifestHookDefinitions(manifest, "session", digest),
      ...(isVcpManifest(manifest) ? {} : { profile: { id: deps.enabledProfile(manifest.profile!).profile.id, hooks: manifestProfileHooks(manifest, digest) } }),
    };
  }

  function profileRefOf(manifest: Manifest): string {
    const profile = deps.enabledProfile(manifest.profile!).profile;
    return `${profile.id}@${profile.version}`;
  }

  /** Status: a failed attempt is recorded on the installed revision it did not replace. */
  function recordFailure(input: unknown, err: unknown): void {
    const name = bundleNameOf(input);
    const entry = name === undefined ? undefined : installed.get(name);
    if (entry === undefined || name === undefined) return;
    const failure: BundleInstallError = {
      code: err instanceof VcpError ? err.code : "INTERNAL",
      message: err instanceof Error ? err.message : String(err),
      at: new Date(clock.wallNow()).toISOString(),
    };
    installed.set(name, { ...entry, info: { ...entry.info, errors: [...entry.info.errors, failure].slice(-MAX_RECORDED_ERRORS) } });
  }

  async function removeNow(name: string, principal: Principal | undefined, publish: boolean): Promise<BundleInfo> {
    deps.assertOpen();
    const entry = installed.get(name);
    if (entry === undefined) throw new VcpError("UNKNOWN_BUNDLE", `bundle '${name}' is not installed`, { bundle: name });
    registry.swapBundle(name, null, { scope: "deployment", principal: principal ?? LOCAL_OPERATOR });
    installed.delete(name);
    // Unpublish first, then persist: the order and its failures as in `activate`.
    let published = false;
    try {
      if (publish && deps.publisher !== undefined) {
        try {
          await deps.publisher.unpublish(name);
          published = true;
        } catch (err) {
          restoreHooks(entry.manifest.bundle, entry);
          throw err;
        }
      }
      if (store !== undefined) {
        try {
          await store.remove(name);
        } catch (err) {
          // Not persisted ⇒ not removed here: put the hooks back so memory and disk agree.
          restoreHooks(entry.manifest.bundle, entry);
          const failure = storeFailure(err, `removing bundle '${name}'`);
          if (!published) throw failure;
          deps.publisher?.notApplied(name, failure);
          deps.metrics.recordBundleChange("not_persisted");
          throw publishedNotPersisted(
            failure,
            `bundle '${name}' is removed in the shared store (the other replicas drop it), but this replica's data directory could not be written (${failure.message}); this replica keeps running ${entry.info.version} (${entry.info.digest}), reports not ready, and removes it at its next reconcile once its data directory can be written`,
            { bundle: name, removed: true, kept: entry.info.digest },
          );
        }
      }
    } finally {
      settled(name);
    }
    await pins.retire(entry.info.digest);
    deps.metrics.recordBundleChange("removed");
    return entry.info;
  }

  /**
   * Reinstall what the data directory holds, re-verified against the current keyring. A bundle that
   * no longer verifies stops the start: running without a policy the operator installed would be a
   * silent fail-open. One whose load ran past `pool.load_timeout_ms` was accepted before: a busy
   * machine, not a refusal, so it is tried again (activateRestored) until `deadline`.
   */
  async function restore(deadline: number): Promise<void> {
    if (store === undefined) return;
    let stored;
    try {
      stored = await store.loadInstalled();
    } catch (err) {
      await backend.close().catch(() => undefined);
      throw err;
    }
    for (const { entry, file, artifact } of stored) {
      try {
        const verified = verifyArtifact(artifact, verifyOptions);
        if (verified.digest !== entry.digest || verified.manifest.bundle !== entry.bundle) {
          throw new VcpError("STORE_CORRUPT", `${file} holds ${verified.manifest.bundle} ${verified.digest}, not the revision the index names`, { file });
        }
        await activateRestored(verified, entry, deadline);
      } catch (err) {
        await backend.close().catch(() => undefined);
        const code: ErrorCode = err instanceof VcpError ? err.code : "STORE_CORRUPT";
        const details = err instanceof VcpError ? err.details : undefined;
        const advice =
          details?.["timed_out"] === true
            ? "its top-level code ran past pool.load_timeout_ms at every try within pool.start_timeout_ms: on a busy machine raise them"
            : `reinstall it, or remove its entry from ${store.dir}/installed.json`;
        throw new VcpError(
          code,
          `reloading installed bundle '${entry.bundle}' from ${file}: ${err instanceof Error ? err.message : String(err)} (${advice})`,
          { ...details, bundle: entry.bundle, file },
          { cause: err },
        );
      }
    }
  }

  /** Activate a restored bundle, trying a load that ran out of its budget again with backoff until `deadline` (performance.now()). */
  async function activateRestored(verified: VerifiedArtifact, entry: { bundle: string; activated_at: string }, deadline: number): Promise<void> {
    const backoff = new DeadlineBackoff(deadline - performance.now(), () => performance.now());
    for (;;) {
      try {
        await activate(verified, { principal: SYSTEM_PRINCIPAL, allowDowngrade: true, persist: false, publish: false, activatedAt: entry.activated_at });
        return;
      } catch (err) {
        const timedOut = err instanceof VcpError && err.details?.["timed_out"] === true;
        const waitMs = timedOut ? backoff.failed() : undefined;
        if (waitMs === undefined) throw err;
        logger.warn(
          { bundle: entry.bundle, attempt: backoff.failedAttempts, retry_in_ms: waitMs, error: (err as Error).message },
          "reloading an installed bundle ran past pool.load_timeout_ms (a busy machine?); retrying",
        );
        await new Promise((resolve) => setTimeout(resolve, waitMs));
      }
    }
  }

  return {
    install: (input, installOptions) =>
      serially(() => installNow(input, installOptions)).then(
        (info) => {
          deps.metrics.recordBundleChange("installed");
          return info;
        },
        (err: unknown) => {
          // Live in the shared store, so not a failed install; this replica's disk still has to catch up.
          deps.metrics.recordBundleChange(err instanceof VcpError && err.code === "PUBLISHED_NOT_PERSISTED" ? "not_persisted" : "failed");
          throw err;
        },
      ),
    remove: (name, principal) => serially(() => removeNow(name, principal, true)),
    exclusive: (task) => serially(task),
    async applyShared(artifact) {
      deps.assertOpen();
      try {
        // SECURITY: a revision from the shared store is verified here against this replica's own keyring
        // and signature policy, exactly like an upload: whoever can write to Redis cannot make a replica
        // run code no key it trusts signed, nor at a trust level above that key's max_trust.
        const verified = verifyInstallInput(artifact);
        const info = await activate(verified, { principal: SYSTEM_PRINCIPAL, allowDowngrade: true, persist: true, publish: false });
        deps.metrics.recordBundleChange("installed");
        return info;
      } catch (err) {
        recordFailure(artifact, err);
        deps.metrics.recordBundleChange("failed");
        throw err;
      }
    },
    async removeShared(name) {
      if (!installed.has(name)) return undefined;
      return removeNow(name, SYSTEM_PRINCIPAL, false);
    },
    installedArtifact: (name) => installed.get(name)?.artifact,
    async revisions(name) {
      const active = installed.get(name)?.info;
      if (active === undefined) throw new VcpError("UNKNOWN_BUNDLE", `bundle '${name}' is not installed`, { bundle: name });
      // Without a data directory only the active revision exists.
      const kept = store === undefined ? [] : await store.revisions(name);
      const list = kept.length > 0 ? kept : [{ version: active.version, digest: active.digest, activated_at: active.activated_at, signed_by: active.signed_by }];
      return list.map((e) => ({ version: e.version, digest: e.digest, signed_by: e.signed_by, activated_at: e.activated_at, active: e.digest === active.digest }));
    },
    async revision(name, digest) {
      const found = (await this.revisions(name)).find((r) => r.digest === digest);
      const artifact = found === undefined ? undefined : found.active ? installed.get(name)?.artifact : await store?.revisionArtifact(name, digest);
      if (found === undefined || artifact === undefined) throw unknownRevision(name, digest);
      return { ...found, manifest: (artifact as { manifest?: unknown }).manifest ?? null };
    },
    async revisionArtifact(name, digest) {
      if (!installed.has(name)) throw new VcpError("UNKNOWN_BUNDLE", `bundle '${name}' is not installed`, { bundle: name });
      const artifact = installed.get(name)?.info.digest === digest ? installed.get(name)?.artifact : await store?.revisionArtifact(name, digest);
      if (artifact === undefined) throw unknownRevision(name, digest);
      return artifact;
    },
    restore,
    list: () => [...installed.values()].map((b) => b.info).sort((a, b) => (a.bundle < b.bundle ? -1 : a.bundle > b.bundle ? 1 : 0)),
    get: (name) => installed.get(name)?.info,
    infos: () => [...installed.values()].map((b) => b.info),
    resolveAction(ref) {
      const bundle = installed.get(ref.bundle);
      // During install the bundle is verified before it is entered here; see activate().
      if (bundle === undefined) return `bundle '${ref.bundle}' is not installed`;
      if (ref.digest !== undefined && ref.digest !== bundle.info.digest) return `bundle '${ref.bundle}' revision ${ref.digest} is not the installed one`;
      return true;
    },
  };
}

/** The digest an install input claims (a `.vcpb`), for the audit of a refusal; undefined otherwise. */
function digestOf(input: unknown): string | undefined {
  const digest = typeof input === "object" && input !== null ? (input as { digest?: unknown }).digest : undefined;
  return typeof digest === "string" ? digest.slice(0, 80) : undefined;
}

/** The `bundle` name an install input claims, for status; undefined when it names none. */
function bundleNameOf(input: unknown): string | undefined {
  const manifest = typeof input === "object" && input !== null ? (input as { manifest?: unknown }).manifest : undefined;
  const name = typeof manifest === "object" && manifest !== null ? (manifest as { bundle?: unknown }).bundle : undefined;
  return typeof name === "string" ? name : undefined;
}

function storeFailure(err: unknown, what: string): VcpError {
  if (err instanceof VcpError) return err;
  return new VcpError("STORE_CORRUPT", `${what}: the data directory could not be written: ${err instanceof Error ? err.message : String(err)}`, {}, { cause: err });
}

/**
 * The shared store took a change this replica made, and its own data directory did not: the change is
 * the deployment's, this replica undid it locally and reconciles to it (bundle-sync.ts `notApplied`).
 */
function publishedNotPersisted(failure: VcpError, message: string, details: Record<string, unknown>): VcpError {
  return new VcpError("PUBLISHED_NOT_PERSISTED", message, { ...details, store_error: failure.toJSON() }, { cause: failure });
}

function unknownRevision(bundle: string, digest: string): VcpError {
  return new VcpError("UNKNOWN_REVISION", `bundle '${bundle}' has no kept revision ${digest} (the server keeps the last ${KEPT_REVISIONS})`, { bundle, digest });
}
