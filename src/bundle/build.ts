/**
 * `vcp-hooks build`: a policy directory → a `.vcpb` artifact (DESIGN §3.2).
 *
 * ```
 *  policy.yaml ── loadManifestFile ──▶ manifest ─────────────────────────────┐
 *  entry (src/index.ts) ── esbuild (iife, neutral, es2024) ──▶ code ──┬──────┴─▶ createArtifact
 *        └─ import guard: Node built-ins, LLM SDKs, absolute paths    │
 *                                                                     └─▶ real isolate: every hook's
 *                                                                         action exported and callable
 * ```
 * Deterministic: paths in the output are relative to the policy directory, no source map, no
 * tsconfig.json is read (its settings would make the bytes depend on the directory's ancestors).
 *
 * SECURITY: policy code is only bundled by esbuild on the host, never imported or evaluated here;
 * the export check runs it inside an isolated-vm isolate (in process when the process was started
 * with --no-node-snapshot, else in a short-lived sandbox process).
 */
import { build, type BuildFailure, type BuildOptions as EsbuildOptions, type Message, type Plugin } from "esbuild";
import { stat } from "node:fs/promises";
import { isBuiltin } from "node:module";
import { isAbsolute, normalize, resolve } from "node:path";
import { VcpError } from "../errors.js";
import type { BundleCode } from "../sandbox-host/types.js";
import { createArtifact, DEFAULT_MAX_CODE_BYTES, type VcpArtifact } from "./artifact.js";
import { loadManifestFile, MANIFEST_FILE, type Manifest } from "./manifest.js";

/** Entry module when the manifest names none (DESIGN §3.1). */
export const DEFAULT_ENTRY = "src/index.ts";

/**
 * Packages that talk to LLM providers: importing one fails the build (the static half of spec §5.5:
 * hooks do not call LLMs). Entries ending in `/*` match a whole npm scope.
 */
export const LLM_SDK_PACKAGES: readonly string[] = Object.freeze([
  "openai",
  "@anthropic-ai/*",
  "@google/genai",
  "@google/generative-ai",
  "@google-cloud/vertexai",
  "@google-cloud/aiplatform",
  "cohere-ai",
  "@mistralai/*",
  "groq-sdk",
  "ollama",
  "langchain",
  "@langchain/*",
  "ai",
  "@ai-sdk/*",
  "replicate",
  "together-ai",
  "@huggingface/inference",
  "@aws-sdk/client-bedrock-runtime",
  "@aws-sdk/client-bedrock-agent-runtime",
  "@azure/openai",
  "@azure-rest/ai-inference",
  "llamaindex",
  "portkey-ai",
  "@fireworks-ai/*",
  "@xai-org/*",
  "@openrouter/*",
]);

/** Loads code in a real isolate and returns its exported function names (see {@link BuildOptions.probeExports}). */
export type ExportProbe = (bundle: BundleCode) => Promise<{ exports: string[] }>;

export interface BuildOptions {
  /** Cap on the bundled code, bytes. Default 5 MiB (DESIGN §3.2). */
  maxCodeBytes?: number;
  /**
   * How the export check loads the code. Default: an isolated-vm isolate in this process when it
   * runs with `--no-node-snapshot`, otherwise a short-lived sandbox process (which has the flag).
   */
  probeExports?: ExportProbe;
}

export interface BuildResult {
  /** Unsigned; sign with `signArtifact`, write with `serializeArtifact`. */
  artifact: VcpArtifact;
  /** esbuild warnings and build notes, each `file:line:column: text`. */
  warnings: string[];
}

/** One reason a build failed; `import` is set when an import was refused or not found. */
export interface BuildProblem {
  file: string;
  line?: number;
  column?: number;
  import?: string;
  rule: string;
}

/**
 * Build a policy directory into an unsigned `.vcpb` artifact. The manifest is validated by the
 * function install uses (`parseManifest`), so build refuses what install would: `INVALID_BUNDLE`
 * (manifest shape), `INVALID_HOOK` (e.g. `hooks[0].fail_closed` on a session-trust bundle),
 * `INVALID_PREDICATE` (a hook condition, e.g. `hooks[2].condition.value`), `BUILD_FAILED` (forbidden, absolute or unresolvable imports, compile errors; each
 * problem names the file, line and import), `BUNDLE_TOO_LARGE`, or `ACTION_NOT_CALLABLE` (a hook's
 * action is not an exported function; names hook and action). Same input ⇒ byte-identical output.
 *
 * @example
 * ```ts
 * const { artifact, warnings } = await buildBundle("policies/strip-pii");
 * await writeFile("strip-pii.vcpb", serializeArtifact(signArtifact(artifact, keyPem, "ops-2026")));
 * ```
 */
export async function buildBundle(dir: string, options: BuildOptions = {}): Promise<BuildResult> {
  const maxCodeBytes = options.maxCodeBytes ?? DEFAULT_MAX_CODE_BYTES;
  const root = resolve(dir);
  const manifest = await loadManifestFile(dir);
  const entry = await checkEntry(dir, root, manifest);
  const { code, warnings } = await bundleCode(dir, root, entry);

  const size = Buffer.byteLength(code, "utf8");
  if (size > maxCodeBytes) {
    throw new VcpError("BUNDLE_TOO_LARGE", `${dir}: bundled code is ${size} bytes, above the cap of ${maxCodeBytes}`, { bundle: manifest.bundle, bytes: size, limit: maxCodeBytes });
  }
  // The exact bytes are checked, not a guess: a build that leaked the machine's paths is flagged.
  if (root.length > 1 && code.includes(root)) warnings.push(`${entry}: the bundled code contains the absolute path ${root}; the artifact depends on where it was built`);

  const artifact = createArtifact(manifest, code);
  const probe = options.probeExports ?? defaultProbe(maxCodeBytes);
  const { exports } = await probe({
    name: manifest.bundle,
    digest: artifact.digest,
    code,
    trust: manifest.trust,
    isolation: manifest.isolation,
    ...(manifest.limits?.memory_mb !== undefined ? { memoryMb: manifest.limits.memory_mb } : {}),
  });
  const callable = new Set(exports);
  const broken = manifest.hooks.filter((h) => !callable.has(h.action));
  if (broken.length > 0) {
    const all = await exportNames(root, entry).catch(() => [] as string[]);
    const problems = broken.map((h) => ({
      hook: h.name,
      action: h.action,
      rule: all.includes(h.action) ? "is exported but is not a function" : "is not exported by the entry module",
    }));
    throw new VcpError(
      "ACTION_NOT_CALLABLE",
      `${dir}: ${problems.map((p) => `hook '${p.hook}': action '${p.action}' ${p.rule}`).join("; ")} (spec §6.2.6; exported functions: ${exports.join(", ") || "none"})`,
      { bundle: manifest.bundle, problems, exports },
    );
  }
  return { artifact, warnings };
}

async function checkEntry(dir: string, root: string, manifest: Manifest): Promise<string> {
  const entry = manifest.entry ?? DEFAULT_ENTRY;
  const normalized = normalize(entry);
  if (isAbsolute(entry) || normalized === ".." || normalized.startsWith("../")) {
    const rule = "must be a relative path inside the policy directory";
    throw new VcpError("INVALID_BUNDLE", `${dir}/${MANIFEST_FILE}: entry: ${rule}`, { file: `${dir}/${MANIFEST_FILE}`, problems: [{ field: "entry", rule }] });
  }
  const found = await stat(resolve(root, normalized)).catch(() => undefined);
  if (found === undefined || !found.isFile()) {
    const rule = `entry file ${normalized} does not exist`;
    throw new VcpError("BUILD_FAILED", `${dir}: ${rule}`, { dir, problems: [{ file: normalized, rule }] });
  }
  return normalized;
}

async function bundleCode(dir: string, root: string, entry: string): Promise<{ code: string; warnings: string[] }> {
  let result;
  try {
    result = await build({
      ...ESBUILD_OPTIONS,
      absWorkingDir: root,
      entryPoints: [entry],
      plugins: [importGuard()],
    });
  } catch (err) {
    const failure = err as Partial<BuildFailure>;
    if (!Array.isArray(failure.errors)) throw err;
    const problems = failure.errors.map(toProblem);
    throw new VcpError("BUILD_FAILED", `${dir}: build failed: ${problems.map(formatProblem).join("; ")}`, { dir, problems });
  }
  const code = result.outputFiles?.[0]?.text;
  if (code === undefined) throw new VcpError("BUILD_FAILED", `${dir}: esbuild produced no output`, { dir, problems: [] });
  return { code, warnings: result.warnings.map((w) => formatProblem(toProblem(w))) };
}

// Fixed options: anything that varies by machine (paths, tsconfig lookup, source maps) is pinned.
const ESBUILD_OPTIONS = {
  bundle: true,
  write: false,
  format: "iife",
  globalName: "__vcp_bundle",
  platform: "neutral",
  target: "es2024", // V8 of Node 24
  mainFields: ["module", "main"],
  minify: false,
  sourcemap: false,
  legalComments: "eof",
  charset: "ascii",
  logLevel: "silent",
  // An empty tsconfigRaw stops esbuild from reading tsconfig.json files in the directory and its
  // ancestors: the policy's tsconfig is for the type checker; the build must not depend on it.
  tsconfigRaw: {},
  // Libraries often test process.env.NODE_ENV; the isolate has no `process`.
  define: { "process.env.NODE_ENV": '"production"' },
} satisfies EsbuildOptions;

/** The refusal of one import specifier, or undefined when esbuild may resolve it. */
export function refuseImport(spec: string): string | undefined {
  if (spec.startsWith("node:") || isBuiltin(spec)) return `imports the Node built-in "${spec}": hook actions run in an isolate without Node APIs (use vcp.* capabilities)`;
  if (spec === "vcp-hooks" || spec.startsWith("vcp-hooks/")) return `imports "${spec}" as a value: policies may only use \`import type\` from vcp-hooks`;
  if (isAbsolute(spec)) return `imports the absolute path "${spec}": the build would depend on this machine (use a relative import)`;
  if (spec.startsWith(".")) return undefined;
  const pkg = packageName(spec);
  for (const denied of LLM_SDK_PACKAGES) {
    const hit = denied.endsWith("/*") ? pkg.startsWith(denied.slice(0, -1)) : pkg === denied;
    if (hit) return `imports the LLM SDK "${spec}": hook actions must not call language models (spec §5.5)`;
  }
  return undefined;
}

function packageName(spec: string): string {
  const parts = spec.split("/");
  return spec.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? spec);
}

function importGuard(): Plugin {
  return {
    name: "vcp-import-guard",
    setup(b) {
      // Every import, including those inside node_modules, passes here before esbuild resolves it.
      b.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === "entry-point") return undefined;
        const rule = refuseImport(args.path);
        if (rule === undefined) return undefined;
        return { errors: [{ text: rule, detail: { import: args.path, rule } }] };
      });
    },
  };
}

function toProblem(m: Message): BuildProblem {
  const detail = m.detail as { import?: string; rule?: string } | undefined;
  const unresolved = /^Could not resolve "(.+)"$/.exec(m.text);
  const imported = detail?.import ?? unresolved?.[1];
  let rule = detail?.rule ?? m.text;
  if (unresolved) rule = `imports "${unresolved[1]}", which cannot be resolved or inlined (install it, or fix the path)`;
  return {
    file: m.location?.file ?? "(build)",
    ...(m.location ? { line: m.location.line, column: m.location.column + 1 } : {}),
    ...(imported !== undefined ? { import: imported } : {}),
    rule,
  };
}

function formatProblem(p: BuildProblem): string {
  const at = p.line !== undefined ? `${p.file}:${p.line}:${p.column ?? 1}` : p.file;
  return `${at}: ${p.rule}`;
}

/** All export names of the entry (functions or not), for the ACTION_NOT_CALLABLE message. */
async function exportNames(root: string, entry: string): Promise<string[]> {
  const { globalName: _globalName, ...options } = ESBUILD_OPTIONS;
  const result = await build({ ...options, format: "esm", metafile: true, absWorkingDir: root, entryPoints: [entry], plugins: [importGuard()] });
  return Object.values(result.metafile?.outputs ?? {}).flatMap((o) => o.exports);
}

function hasNoNodeSnapshot(): boolean {
  return process.execArgv.includes("--no-node-snapshot") || /(^|\s)--no-node-snapshot(\s|$)/.test(process.env["NODE_OPTIONS"] ?? "");
}

function defaultProbe(maxCodeBytes: number): ExportProbe {
  return async (bundle) => {
    if (hasNoNodeSnapshot()) {
      const { createIsolateHost, DEFAULT_SANDBOX_LIMITS } = await import("../sandbox-host/index.js");
      const host = createIsolateHost({
        limits: { ...DEFAULT_SANDBOX_LIMITS, codeBytes: Math.max(maxCodeBytes, DEFAULT_SANDBOX_LIMITS.codeBytes) },
        // SECURITY: no host is reachable from the probe, whatever the bundle's trust.
        fetch: { allowHosts: [], denyLlmHosts: [] },
        onLog: () => undefined,
      });
      try {
        return await host.load(bundle);
      } finally {
        host.dispose();
      }
    }
    // isolated-vm needs --no-node-snapshot in the process that loads it; the sandbox process has it.
    const { startSandbox } = await import("../pool/index.js");
    const sandbox = await startSandbox({ threads: 1, limits: { codeBytes: Math.max(maxCodeBytes, DEFAULT_MAX_CODE_BYTES) } });
    try {
      return await sandbox.loadBundle(bundle);
    } finally {
      await sandbox.close();
    }
  };
}
