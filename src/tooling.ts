/**
 * `vcp-hooks/tooling`: what builds, signs and checks things outside a running deployment — policy
 * bundles (DESIGN §3: manifest, build, artifact, keys) and audit logs read back offline (DESIGN §5:
 * verify, tail, export). The API of `vcp-hooks build|keygen|sign|verify|audit`. The runtime itself
 * is the root entry, `vcp-hooks`.
 *
 * @example
 * ```ts
 * import { buildBundle, signArtifact } from "vcp-hooks/tooling";
 * const { artifact } = await buildBundle("policies/strip-pii");
 * ```
 */
export { loadManifestFile, parseManifestYaml, manifestJsonSchema, renderManifestJsonSchema, MANIFEST_FILE } from "./bundle/manifest.js";
export type { ManifestProblem } from "./bundle/manifest.js";
export { buildBundle, refuseImport, DEFAULT_ENTRY, LLM_SDK_PACKAGES } from "./bundle/build.js";
export type { BuildOptions, BuildResult, BuildProblem, ExportProbe } from "./bundle/build.js";
export { createArtifact, serializeArtifact, signArtifact, verifyArtifact, parseArtifact, ARTIFACT_FORMAT, ARTIFACT_MEDIA_TYPE, DEFAULT_MAX_CODE_BYTES } from "./bundle/artifact.js";
export type { VerifiedArtifact, VerifyOptions } from "./bundle/artifact.js";
export { generateKeyPair, loadKeyring } from "./bundle/keys.js";
// Reading a user's file for build/sign/import: a regular file within its bound, else INPUT_FILE_REFUSED.
export { readInputFile, readInputFileSync, checkInputFile, assertInside, INPUT_FILE_BYTES } from "./bundle/input-file.js";
export type { Keyring, KeyringKey, KeyPairPem } from "./bundle/keys.js";
export { verifyAuditLog } from "./audit/verify.js";
export type { AuditVerdict, ReplicaSetEntry, RetainedFrom, VerifyAuditOptions } from "./audit/verify.js";
export { verifyAuditLogSet } from "./audit/verify-set.js";
export type { AuditSetVerdict, MissingReplica, ReplicaLogVerdict } from "./audit/verify-set.js";
export { readAuditRecords, followAuditRecords, type ReadOptions as AuditReadOptions } from "./audit/reader.js";
export { formatRecords, EXPORT_FORMATS, type ExportFormat } from "./audit/export.js";
export type { GeneratedSource } from "./bundle/build.js";
// `vcp-hooks build --from repo-yaml` and `hooks list --format repo-yaml` (PROFILES §3.6, §8.8).
export { buildFromRepoYaml, REPO_YAML_EVENTS_LIST } from "./profiles/repo-yaml/build.js";
export type { RepoYamlBuild, RepoYamlFile, RepoYamlHookDefinition, RepoYamlScriptHook } from "./profiles/repo-yaml/build.js";
export type { RepoYamlMatch } from "./profiles/repo-yaml/filter.js";
// Constitution integrity (DESIGN §4.5): sign a constitution and check its chain of custody offline.
export { signConstitution, verifySignatureChain } from "./integrity/signatures.js";
export type { ChainVerdict, KeySet, VerifyChainOptions } from "./integrity/signatures.js";
