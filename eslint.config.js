// Lint: correctness rules plus the module map of STYLE.md, enforced by rule rather than review.
import tseslint from "typescript-eslint";

/**
 * Which library a folder of src/ may import, as one table: every library listed here is refused
 * everywhere in src/ except the folders named for it. (One `no-restricted-imports` entry per folder
 * below is built from this table: in a flat config the last matching entry wins, so each must carry
 * the whole list.)
 */
const ONLY_IN = [
  { names: ["isolated-vm"], folders: ["sandbox-host"], why: "Only src/sandbox-host/ may import isolated-vm (STYLE.md)." },
  { names: ["piscina", "node:child_process", "child_process"], folders: ["pool"], why: "Only src/pool/ starts workers and processes for the sandbox (STYLE.md)." },
  // The operational logger (observe/logger.ts): pino stays out of the sandbox workers and the core.
  { names: ["pino"], folders: ["observe"], why: "Only src/observe/ may import pino: log through the Logger interface (STYLE.md)." },
  { names: ["fastify", "@fastify/swagger"], folders: ["server"], why: "Only src/server/ may import fastify (STYLE.md)." },
  // The shared store (issue 18): one place owns connections, timeouts, backoff and the error mapping.
  { names: ["ioredis"], folders: ["store"], why: "Only src/store/ may import ioredis: use the SharedStore the runtime hands out (src/store/index.ts)." },
];
/** Core modules take a Logger and a Clock as arguments: no I/O library, so they run the same anywhere. */
const CORE = ["chain", "registry", "integrity", "model", "profiles"];
const IO = ["node:fs", "fs", "node:fs/promises", "fs/promises", "node:net", "net", "node:http", "http", "node:https", "https", "node:dgram", "node:dns", "node:worker_threads", "prom-client", "undici"];
const CORE_WHY = "Core modules (chain, registry, integrity, model, profiles) do no I/O: take a Logger/Clock instead (STYLE.md).";

const EVENT_BUS_WHY = "src/observe/event-bus.ts does no I/O and takes its redactor and clock as arguments (issue 11).";

/** server/ and cli/ are adapters over the public entries; a need for more means the API lacks something. */
const PUBLIC_ENTRIES = ["!../index.js", "!../tooling.js", "!../testing.js", "!../profile-kit.js"];
const ADAPTER_WHY = "server/ and cli/ import only the public entries src/index.ts, src/tooling.ts, src/testing.ts and src/profile-kit.ts (cli/serve also the HTTP adapter, src/server/index.ts) (STYLE.md).";

function restrictedFor(folder) {
  const paths = ONLY_IN.filter((rule) => !rule.folders.includes(folder)).flatMap((rule) => rule.names.map((name) => ({ name, message: rule.why })));
  if (CORE.includes(folder)) paths.push(...IO.map((name) => ({ name, message: CORE_WHY })));
  const patterns = [];
  if (folder === "server") patterns.push({ group: ["../*", ...PUBLIC_ENTRIES], message: ADAPTER_WHY });
  // Two cli/ exceptions: the `hook` adapter's light entry may use the dependency-free scrubber (importing
  // src/index.ts would load the whole runtime per agent event), and `import` uses the pure converters of
  // src/tooling/ (authoring tools, not the runtime).
  if (folder === "cli") {
    patterns.push({
      group: ["../*", ...PUBLIC_ENTRIES, "!../server", "../server/*", "!../server/index.js", "!../audit", "../audit/*", "!../audit/redact-string.js", "!../tooling", "!../tooling/**"],
      message: ADAPTER_WHY,
    });
  }
  return ["error", { paths, patterns }];
}

const FOLDERS = ["audit", "bundle", "chain", "cli", "config", "integrity", "model", "observe", "pipeline", "pool", "profiles", "registry", "runtime", "sandbox-host", "server", "store"];

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "bench/reports/**", "coverage/**", "sandbox/corpus/**", "test/cli/import/golden/**"] },
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-this-alias": "off",
    },
  },
  // Files directly under src/ (the entries, errors.ts) and any folder not listed: the library rules only.
  { files: ["src/**/*.ts"], rules: { "no-restricted-imports": restrictedFor("") } },
  ...FOLDERS.map((folder) => ({ files: [`src/${folder}/**/*.ts`], rules: { "no-restricted-imports": restrictedFor(folder) } })),
  // The runtime's event bus (issue 11) is core-like though it lives in observe/: no I/O, and its
  // redactor and clock come in as arguments, so it imports neither the audit trail nor the runtime.
  {
    files: ["src/observe/event-bus.ts"],
    rules: {
      "no-restricted-imports": (([level, { paths, patterns }]) => [level, {
        paths: [...paths, ...IO.map((name) => ({ name, message: EVENT_BUS_WHY }))],
        patterns: [...patterns, { group: ["../audit/*", "../runtime/*", "../pool/*", "../pipeline/*"], message: EVENT_BUS_WHY }],
      }])(restrictedFor("observe")),
    },
  },
  {
    // One module graph (issue 11): tests import src/ and bench/ sources, never dist/ (a second copy of
    // every class: `instanceof VcpError` fails across them). The runtime started from the sources forks
    // the compiled sandbox host itself (src/pool/host-entry.ts); plain-Node child processes a test
    // starts still load dist/, by path.
    files: ["test/**/*.ts"],
    rules: {
      "no-restricted-imports": restrict([], [
        { group: ["**/dist/**"], message: "Tests import src/ (one module graph); the sandbox host is started from dist/ by src/pool/host-entry.ts." },
      ]),
    },
  },
);

function restrict(paths, patterns = []) {
  return ["error", { paths, patterns }];
}
