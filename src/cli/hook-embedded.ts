/**
 * `vcp-hooks hook <Event> --dialect … --embedded --bundle a.vcpb [--bundle …]` (PROFILES §5): the
 * adapter with no server, for CI and for machines that run no daemon. The event goes through an
 * in-process runtime (`createRuntime` + `fireProfile`, the sandbox host forked as usual), the answer is
 * the route's `{ native, exit_code, stderr? }`, and hook.ts renders it exactly as it renders the
 * server's. Bundles are installed unsigned, as `vcp-hooks fire` does (digest and manifest verified,
 * signatures set aside): `--embedded` runs the files it was given, nothing is installed anywhere.
 *
 * Heavy on purpose (the runtime, zod, piscina through the runtime): hook.ts imports this module only
 * on the `--embedded` path, so the default server path keeps its light entry.
 */
import { createRuntime, VcpError, type Runtime } from "../index.js";
import { CheckFailed, type Io } from "./common.js";
import { loadLocalBundle } from "./local.js";

/** What the profile route answers, without `result` (the adapter renders only these). */
export interface EmbeddedAnswer {
  native: Record<string, unknown>;
  exit_code: number;
  stderr?: string;
}

/** The longest the runtime may take to stop after answering; the agent already has its answer then. */
const CLOSE_GRACE_MS = 5_000;

/**
 * Load `bundles` (`.vcpb` files or policy directories), fire `event` of `profile` with the agent's
 * native `input`, close the runtime and return the native answer. Throws an Error whose message names
 * the bundle or the problem (the adapter turns it into its `--on-error` answer).
 *
 * @example
 * const answer = await fireEmbedded(["guard.vcpb"], "gemini-cli", "BeforeTool", input);
 * // { native: { decision: "block", reason: "…" }, exit_code: 0 }
 */
export async function fireEmbedded(bundles: readonly string[], profile: string, event: string, input: Record<string, unknown>): Promise<EmbeddedAnswer> {
  // Quiet: the agent reads the adapter's stderr as the hook's message; progress lines do not belong there.
  const io: Io = { json: true, out: () => undefined, err: () => undefined };
  const loaded = [];
  for (const path of bundles) {
    try {
      loaded.push(await loadLocalBundle(path, io));
    } catch (err) {
      throw new Error(`--bundle ${path}: ${describe(err)}`);
    }
  }
  let runtime: Runtime | undefined;
  try {
    runtime = await createRuntime({ requireSignatures: false, sandbox: { threads: 1 } });
    for (const b of loaded) {
      try {
        await runtime.bundles.install(b.artifact);
      } catch (err) {
        throw new Error(`--bundle ${b.path}: ${describe(err)}`);
      }
    }
    let out;
    try {
      out = await runtime.fireProfile(profile, event, { input });
    } catch (err) {
      throw new Error(describe(err));
    }
    return { native: out.native as Record<string, unknown>, exit_code: out.exit_code, ...(out.stderr !== undefined ? { stderr: out.stderr } : {}) };
  } finally {
    if (runtime !== undefined) {
      const closing = runtime.close();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([closing.catch(() => undefined), new Promise<void>((done) => (timer = setTimeout(done, CLOSE_GRACE_MS)))]);
      clearTimeout(timer);
    }
  }
}

function describe(err: unknown): string {
  if (err instanceof VcpError || err instanceof CheckFailed) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
