/*
 * `runtime.bundles`: the bundle manager (bundles.ts) as callers reach it. Every change a principal
 * makes (install, remove, roll back) first takes its turn from the registry-change limit — with a
 * shared store the one every replica counts against (store/adapters.ts `registryAdmission`) — and a
 * roll back reinstalls a kept revision through the same verification as an upload.
 */
import type { VcpArtifact } from "../bundle/artifact.js";
import type { Principal } from "../registry/index.js";
import type { BundleManager } from "./bundles.js";
import type { BundleSync, ReplicaVerdicts } from "./bundle-sync.js";
import type { BundleInfo, BundleSource, InstallOptions, KeptRevision } from "./types.js";

export interface BundlesApi {
  /**
   * Install a verified `.vcpb` artifact, or (only when signatures are not required) a
   * `{ manifest, code }` source. Same digest as installed: a no-op returning its info. Another
   * revision: an atomic hot swap. A failure changes nothing and is recorded in `errors`.
   */
  install(bundle: VcpArtifact | BundleSource, options?: InstallOptions): Promise<BundleInfo>;
  remove(name: string, options?: { principal?: Principal }): Promise<BundleInfo>;
  list(): BundleInfo[];
  get(name: string): BundleInfo | undefined;
  /**
   * With `store: redis`: which live replicas run `digest` of `bundle` (`accepted`), refused it
   * (`refused`: replica, code, message — e.g. their keyring does not trust its signer) or have not
   * said yet (`pending`), waiting up to `waitMs` (default `store.upload_wait_ms`) for the silent
   * ones. Null with the local store (one replica: the one that installed it).
   */
  replicas(bundle: string, digest: string, options?: { waitMs?: number }): Promise<ReplicaVerdicts | null>;
  /** The revisions kept of an installed bundle, newest (active) first: what a roll back can return to. */
  revisions(name: string): Promise<KeptRevision[]>;
  /** One kept revision and its manifest (UNKNOWN_REVISION when it is not kept). */
  revision(name: string, digest: string): Promise<KeptRevision & { manifest: unknown }>;
  /** Install a kept revision again (re-verified, downgrade allowed): a roll back. */
  rollback(name: string, digest: string, options?: { principal?: Principal }): Promise<BundleInfo>;
}

export interface BundlesApiDeps {
  bundles: BundleManager;
  /** With a shared store: the replicas' verdicts on a revision (bundle-sync.ts). */
  sync: BundleSync | undefined;
  /** `store.upload_wait_ms`: how long `replicas` waits for silent replicas by default. */
  uploadWaitMs: number;
  /** The registry-change limit (spec §8.2.5), taken before any work on a change. */
  admit(principal: Principal | undefined): Promise<void>;
}

/**
 * @example
 * ```ts
 * const api = createBundlesApi({ bundles, sync: undefined, uploadWaitMs: 0, admit: async () => undefined });
 * await api.install({ manifest, code });
 * ```
 */
export function createBundlesApi(deps: BundlesApiDeps): BundlesApi {
  const { bundles, sync, admit } = deps;
  return {
    async install(bundle, options = {}) {
      await admit(options.principal);
      return bundles.install(bundle, options);
    },
    async remove(name, options = {}) {
      await admit(options.principal);
      return bundles.remove(name, options.principal);
    },
    list: () => bundles.list(),
    get: (name) => bundles.get(name),
    replicas: async (bundle, digest, options = {}) => (sync === undefined ? null : sync.verdicts(bundle, digest, options.waitMs ?? deps.uploadWaitMs)),
    revisions: (name) => bundles.revisions(name),
    revision: (name, digest) => bundles.revision(name, digest),
    async rollback(name, digest, options = {}) {
      await admit(options.principal);
      // SECURITY: the kept artifact is verified again like an upload (digest, signatures, keyring).
      return bundles.install(await bundles.revisionArtifact(name, digest), { ...options, allowDowngrade: true });
    },
  };
}
