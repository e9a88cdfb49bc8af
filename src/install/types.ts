/*
 * What the deployed-bundle side of the runtime hands out and takes: an installed bundle's view, the
 * revisions the data directory keeps, install sources and options. Re-exported by src/index.ts.
 */
import type { ErrorCode } from "../errors.js";
import type { Manifest, ManifestInput } from "../bundle/manifest.js";
import type { Principal } from "../registry/index.js";

/** Why the last install attempt of an installed bundle failed (the installed revision stayed active). */
export interface BundleInstallError {
  code: ErrorCode | "INTERNAL";
  message: string;
  at: string;
}

/** A bundle as installed: the manifest normalized, its digest, and when it became active. */
export interface BundleInfo {
  bundle: string;
  version: string;
  digest: string;
  trust: Manifest["trust"];
  hooks: string[];
  session_hooks: string[];
  activated_at: string;
  /** Key id of the best verifying signature, or null for an unsigned bundle (signatures not required). */
  signed_by: string | null;
  /** Failed install attempts since this revision became active, oldest first (at most 5). */
  errors: BundleInstallError[];
  /** Event-profile bundles only: the profile their hooks belong to, `<id>@<version>` (absent for vcp@1). */
  profile?: string;
}

/** A revision of a bundle the data directory keeps (the active one and the last few before it). */
export interface KeptRevision {
  version: string;
  digest: string;
  signed_by: string | null;
  activated_at: string;
  /** The revision chains run now. */
  active: boolean;
}

/** What `bundles.install` takes: a manifest (DESIGN §3.1) and the esbuild output of its code. */
export interface BundleSource {
  manifest: ManifestInput;
  code: string;
}

/** Options of `bundles.install`. */
export interface InstallOptions {
  principal?: Principal;
  /** Allow installing a lower version than the installed one (a deliberate rollback). Default false. */
  allowDowngrade?: boolean;
}
