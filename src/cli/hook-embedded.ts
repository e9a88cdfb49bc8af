/**
 * `vcp-hooks hook <Event> --dialect … --embedded --bundle a.vcpb [--bundle …] (--keyring k.yaml |
 * --allow-unsigned)` (PROFILES §5): the adapter with no server, for CI and for machines that run no
 * daemon. The event goes through an in-process runtime (`createRuntime` + `fireProfile`, the sandbox
 * host forked as usual), the answer is the route's `{ native, exit_code, stderr? }`, and hook.ts renders
 * it exactly as it renders the server's.
 *
 * Signatures: with `--keyring` the runtime is created as `serve` creates it (that keyring,
 * `requireSignatures` on) and each `.vcpb` is installed with its signatures, so the one verification
 * of install/bundles.ts decides (digest, manifest, signatures, trust ≤ the key's max_trust). An unsigned
 * bundle — and a policy directory, built here and so unsigned — is refused (UNSIGNED_BUNDLE, naming it)
 * unless `--allow-unsigned`; without a keyring, `--allow-unsigned` sets signatures aside as `vcp-hooks
 * fire` does (digest and manifest still verified).
 *
 * Why the sandbox stays a separate process here too (it is most of the cold start: a second Node
 * without its startup snapshot, plus a worker thread): isolates in this process would keep their
 * memory limit and their lack of fs/net, but not the containment of a process that dies — a guest
 * that brings down isolated-vm's process (sandbox/corpus process-killers) would take the adapter with
 * it, and an agent reads a crashed hook as a non-blocking error: the tool would run. With the host
 * process, the supervisor turns that death into the chain's failure, and a fail_closed guard blocks.
 * What is cut instead: the host starts while the bundles are read, built and verified.
 *
 * Heavy on purpose (the runtime, zod, piscina through the runtime): hook.ts imports this module only
 * on the `--embedded` path, so the default server path keeps its light entry.
 */
import { createRuntime, readArtifactFile, VcpError, type Runtime, type VcpArtifact } from "../index.js";
import { buildBundle, loadKeyring, loadManifestFile, verifyArtifact, type Keyring } from "../tooling.js";
import { CheckFailed } from "./common.js";
import type { GuardFacts } from "./hook-guard.js";
import { stat } from "node:fs/promises";

/** What the profile route answers, without `result` (the adapter renders only these). */
export interface EmbeddedAnswer {
  native: Record<string, unknown>;
  exit_code: number;
  stderr?: string;
}

export interface EmbeddedRequest {
  /** `.vcpb` files or policy directories (absolute paths). */
  bundles: readonly string[];
  profile: string;
  event: string;
  /** The agent's native input. */
  input: Record<string, unknown>;
  /** The agent's hook environment (the profile's documented variables that are set), for exec hooks. */
  env?: Record<string, string>;
  /** A keyring file (YAML or JSON, the shape of vcp.yaml's `keyring:`): signatures verified as `serve` does. */
  keyring?: string;
  /** Run unsigned bundles (and policy directories); without a keyring, signatures are set aside. */
  allowUnsigned: boolean;
  /** Called once the bundles are read: the events their enabled fail_closed hooks guard (the deadline's answer uses them). */
  onGuard?: (facts: GuardFacts) => void;
}

/** The longest the runtime may take to stop after answering; the agent already has its answer then. */
const CLOSE_GRACE_MS = 5_000;

/**
 * Load the bundles, fire `event` of `profile` with the agent's native `input`, close the runtime and
 * return the native answer. Throws an Error whose message names the bundle or the problem, with its
 * code (the adapter turns it into its `--on-error` answer).
 *
 * @example
 * const answer = await fireEmbedded({ bundles: ["/ci/guard.vcpb"], keyring: "/ci/keyring.yaml", allowUnsigned: false,
 *   profile: "gemini-cli", event: "BeforeTool", input });
 * // { native: { decision: "block", reason: "…" }, exit_code: 0 }
 */
export async function fireEmbedded(request: EmbeddedRequest): Promise<EmbeddedAnswer> {
  let keyring: Keyring | undefined;
  if (request.keyring !== undefined) {
    try {
      keyring = await loadKeyring(request.keyring);
    } catch (err) {
      throw new Error(`--keyring ${request.keyring}: ${describe(err)}`);
    }
  }
  // The sandbox host starts now and boots while the bundles are read, built and checked below.
  const starting = createRuntime({ requireSignatures: !request.allowUnsigned, ...(keyring !== undefined ? { keyring } : {}), sandbox: { threads: 1 } });
  starting.catch(() => undefined);
  let runtime: Runtime | undefined;
  try {
    const loaded: Array<{ path: string; artifact: VcpArtifact; manifest: VcpArtifact["manifest"] }> = [];
    for (const path of request.bundles) {
      try {
        loaded.push(await readBundle(path, request, keyring));
      } catch (err) {
        throw new Error(`--bundle ${path}: ${describe(err)}${unsignedHint(err)}`);
      }
    }
    request.onGuard?.(guardOfBundles(loaded.map((b) => b.manifest), request.profile));
    runtime = await starting;
    for (const b of loaded) {
      try {
        await runtime.bundles.install(b.artifact);
      } catch (err) {
        throw new Error(`--bundle ${b.path}: ${describe(err)}${unsignedHint(err)}`);
      }
    }
    let out;
    try {
      out = await runtime.fireProfile(request.profile, request.event, { input: request.input, ...(request.env !== undefined ? { env: request.env } : {}) });
    } catch (err) {
      throw new Error(describe(err));
    }
    return { native: out.native as Record<string, unknown>, exit_code: out.exit_code, ...(out.stderr !== undefined ? { stderr: out.stderr } : {}) };
  } finally {
    const closing = (runtime !== undefined ? Promise.resolve(runtime) : starting).then((r) => r.close());
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([closing.catch(() => undefined), new Promise<void>((done) => (timer = setTimeout(done, CLOSE_GRACE_MS)))]);
    clearTimeout(timer);
  }
}

/**
 * One `--bundle`: a `.vcpb` as it is (the runtime verifies it on install), or a policy directory
 * built here (unsigned: refused before the build unless unsigned bundles are allowed). The manifest is
 * read from a checked artifact (digest and manifest verified) for the guard facts.
 */
async function readBundle(path: string, request: EmbeddedRequest, keyring: Keyring | undefined): Promise<{ path: string; artifact: VcpArtifact; manifest: VcpArtifact["manifest"] }> {
  const info = await stat(path).catch(() => undefined);
  if (info === undefined) throw new CheckFailed(`${path}: no such file or directory`, "NOT_FOUND");
  if (info.isDirectory()) {
    if (!request.allowUnsigned) {
      throw new VcpError("UNSIGNED_BUNDLE", "a policy directory is built here and so is unsigned, and signatures are required: build and sign it (vcp-hooks build, vcp-hooks sign) and pass the .vcpb", { bundle: path });
    }
    // The build's export check would start a sandbox process of its own (this process has no
    // --no-node-snapshot); the install below checks the same actions (ACTION_NOT_CALLABLE) in the
    // runtime's sandbox, so the build is told every action is there and the install decides.
    const manifest = await loadManifestFile(path);
    const actions = manifest.hooks.flatMap((h) => (h.action !== undefined ? [h.action] : []));
    const { artifact } = await buildBundle(path, { probeExports: () => Promise.resolve({ exports: actions }) });
    return { path, artifact, manifest: artifact.manifest };
  }
  const raw = await readArtifactFile(path);
  // Without a keyring no signature can verify: set them aside (as `vcp-hooks fire`), the digest and manifest still checked.
  const artifact = keyring === undefined && typeof raw === "object" && raw !== null ? { ...(raw as object), signatures: [] } : raw;
  // Refused here, before the runtime is waited for, exactly as the install would refuse it.
  const verified = verifyArtifact(artifact, { requireSignatures: !request.allowUnsigned, ...(keyring !== undefined ? { keyring } : {}) });
  // The artifact as read (its signatures kept when a keyring verifies them): the install checks it again, as serve does.
  return { path, artifact: verified.artifact, manifest: verified.manifest };
}

/**
 * The events of `profile` that an enabled `fail_closed` hook guards in these manifests. A session-trust
 * hook never fails closed, so it guards nothing.
 */
export function guardOfBundles(manifests: ReadonlyArray<VcpArtifact["manifest"]>, profile: string): GuardFacts {
  const events = new Set<string>();
  for (const m of manifests) {
    const own = typeof m.profile === "string" ? m.profile.split("@")[0] : undefined;
    if (own !== profile || m.trust === "session") continue;
    for (const h of m.hooks as ReadonlyArray<{ event?: unknown; fail_closed?: unknown; enabled?: unknown }>) {
      if (h.fail_closed === true && h.enabled !== false && typeof h.event === "string") events.add(h.event);
    }
  }
  return { revisions: "embedded", failClosedEvents: [...events].sort() };
}

function unsignedHint(err: unknown): string {
  return err instanceof VcpError && err.code === "UNSIGNED_BUNDLE" ? "; pass --allow-unsigned to run unsigned bundles" : "";
}

function describe(err: unknown): string {
  if (err instanceof VcpError || err instanceof CheckFailed) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
