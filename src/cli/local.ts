/**
 * Local development helpers shared by `vcp-hooks test` and `vcp-hooks fire`: a runtime that does not
 * require signatures, bundles loaded from a policy directory (built on the fly) or a `.vcpb`, and the
 * chain input file format.
 */
import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { createRuntime, readArtifactFile, VcpError, type GuestLogLine, type Runtime, type VcpArtifact } from "../index.js";
import { registerProfile, type EventProfile } from "../profile-kit.js";
import { buildBundle, verifyArtifact, type Keyring } from "../tooling.js";
import { CheckFailed, progress, type Io } from "./common.js";

/** A guest `vcp.log` line as the sandbox reports it (redacted and truncated). */
export type GuestLog = GuestLogLine;

export const LOCAL_TRUST_NOTE = "signatures not required (local development: requireSignatures false)";

/**
 * Start the real sandbox with signatures optional. Guest log lines go to `onGuestLog`.
 * The note on stderr says so, because nothing here is what a production install would accept.
 */
export async function startLocalRuntime(io: Io, onGuestLog: (line: GuestLog) => void, profileModules: readonly string[] = []): Promise<Runtime> {
  progress(io, `starting the sandbox; ${LOCAL_TRUST_NOTE}`);
  return createRuntime({
    requireSignatures: false,
    // One local developer installing each policy directory it was given (`vcp-hooks test policies/*`):
    // the per-principal registry limit guards a served runtime against a flooding client, not this.
    registrationsPerMinute: 100_000,
    sandbox: { threads: 1, onGuestLog },
    ...(profileModules.length > 0 ? { profileModules } : {}),
  });
}

/**
 * `--profile-module <file>`: event profiles of an embedder (a module whose default export is an
 * EventProfile), registered here before any policy directory is built (its manifest names the
 * profile) and handed to the sandbox. Returns their file URLs.
 */
export async function loadProfileModules(paths: readonly string[]): Promise<string[]> {
  const urls = paths.map((p) => pathToFileURL(resolve(p)).href);
  for (const url of urls) {
    const mod = (await import(url)) as { default?: EventProfile };
    if (mod.default === undefined) throw new CheckFailed(`--profile-module ${url}: no default export (an EventProfile)`, "INVALID_CONFIG");
    registerProfile(mod.default);
  }
  return urls;
}

export interface LoadedBundle {
  artifact: VcpArtifact;
  /** Where it came from: a policy directory (built now) or a `.vcpb` file. */
  source: "dir" | "file";
  path: string;
  /** Key id of the verifying signature, when a keyring was given and the artifact is signed. */
  signedBy: string | null;
  warnings: string[];
}

/**
 * A bundle for local use: a directory is built (export check included), a `.vcpb` is read and its
 * digest verified. Signatures are checked only against `keyring` when one is given; without one
 * they are set aside (and the caller says so), because local runs install nothing.
 */
export async function loadLocalBundle(path: string, io: Io, keyring?: Keyring): Promise<LoadedBundle> {
  const info = await stat(path).catch(() => undefined);
  if (info === undefined) throw new CheckFailed(`${path}: no such file or directory`, "NOT_FOUND");
  if (info.isDirectory()) {
    progress(io, `building ${path}`);
    const { artifact, warnings } = await buildBundle(path);
    for (const w of warnings) io.err(`warning: ${w}`);
    return { artifact, source: "dir", path, signedBy: null, warnings };
  }
  const raw = await readArtifactFile(path);
  if (keyring !== undefined) {
    const verified = verifyArtifact(raw, { keyring, requireSignatures: false });
    return { artifact: { ...verified.artifact, signatures: [] }, source: "file", path, signedBy: verified.key_id, warnings: [] };
  }
  // Digest and manifest are still verified: a corrupt artifact is refused even locally.
  const verified = verifyArtifact({ ...raw, signatures: [] }, { requireSignatures: false });
  return { artifact: verified.artifact, source: "file", path, signedBy: null, warnings: [] };
}

/** The input of one chain: what `fire --input` reads and what a test case's `input` holds. */
export interface ChainInputDoc {
  context: Record<string, unknown>;
  constitution: Record<string, unknown>;
  event: Record<string, unknown>;
  session?: Record<string, unknown> | string;
}

/**
 * Check the outer shape of a chain input and resolve `{ "$now_ms": <offset> }` placeholders to the
 * current wall-clock time plus offset (so tests of time-based policies need no fixed clock). The
 * runtime validates the fields themselves (INVALID_INPUT naming the field).
 */
export function prepareChainInput(raw: unknown, where: string, now: number = Date.now()): ChainInputDoc {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new VcpError("INVALID_INPUT", `${where}: must be an object { context, constitution, event, session? }`, { field: "(root)" });
  }
  const doc = raw as Record<string, unknown>;
  const unknown = Object.keys(doc).filter((k) => !["context", "constitution", "event", "session"].includes(k));
  if (unknown.length > 0) throw new VcpError("INVALID_INPUT", `${where}: unknown field(s) ${unknown.join(", ")} (expected context, constitution, event, session)`, { field: unknown[0] });
  for (const field of ["context", "constitution", "event"] as const) {
    const v = doc[field];
    if (typeof v !== "object" || v === null || Array.isArray(v)) {
      throw new VcpError("INVALID_INPUT", `${where}: ${field} ${v === undefined ? "is missing" : "must be an object"}`, { field });
    }
  }
  return resolveNow(doc, now) as unknown as ChainInputDoc;
}

function resolveNow(value: unknown, now: number): unknown {
  if (Array.isArray(value)) return value.map((v) => resolveNow(v, now));
  if (typeof value !== "object" || value === null) return value;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj);
  if (keys.length === 1 && keys[0] === "$now_ms" && typeof obj["$now_ms"] === "number") return now + obj["$now_ms"];
  return Object.fromEntries(keys.map((k) => [k, resolveNow(obj[k], now)]));
}
