// Lint: correctness rules plus the module map of STYLE.md (which library a folder may import, and
// which way imports go between folders), enforced by rule rather than review.
import path from "node:path";
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

/**
 * Which way imports go between the parts of src/ (issue 25), top to bottom: a module may import its
 * own part and the parts on the rows below its own — never a part on its own row or above, so no two
 * parts import each other, directly or round a cycle. A part is a folder, a file directly in src/, or a
 * file named on a row of its own (it then leaves its folder's part). Derived from the imports in the
 * code; a new folder must be placed here before it may be imported (the rule names what is missing).
 *
 *   row  parts                          why there
 *    1   cli                            the command line: starts the HTTP adapter (cli/serve)
 *    2   server                         the HTTP adapter over the public entries
 *    3   tooling.ts                     entry: authoring tools
 *    4   tooling                        converters, doctor, replay (read index.ts)
 *    5   index.ts, testing.ts,          entries: the public API, test doubles, profile authors'
 *        profile-kit.ts                 kit (vcp-hooks/profiles)
 *    6   runtime                        wiring: builds every part below
 *    7   observe                        metrics, logger, event bus: read the parts' stats (audit, store)
 *    8   store                          the Redis adapters of the state ports (pipeline/, registry/)
 *    9   bundle                         build (loads a bundle in the sandbox), manifest, artifact, keys
 *   10   pool                           the sandbox process: piscina, supervisor, exec hooks
 *   11   sandbox-host, pipeline         isolates; sessions and approvals (rules and local stores)
 *   12   audit, config/config.ts        the hash chain; the vcp.yaml schema (checks profile settings)
 *   13   integrity, registry            constitution checks; the hook registry
 *   14   chain                          plans and chain results
 *   15   profiles, observe/events.ts,   event profiles; Logger, Clock, lifecycle event types;
 *        tooling/hook-env.ts            the agents' hook-environment table (no imports)
 *   16   model                          shared record types
 *   17   config                         defaults (one table), deepFreeze
 *   18   errors.ts                      VcpError and the code table
 *
 * Three files sit apart from their folder (the moves that would end that are big): observe/events.ts
 * (Logger, Clock and event types, imported by 40 modules of every row) below the observe/ modules that
 * read the runtime's parts; config/config.ts (the vcp.yaml schema, which checks each profile's
 * settings) above config/'s defaults, which every layer reads; and tooling/hook-env.ts (issue 26: a
 * table with no imports, kept beside the agent adapter's tools for its cold start) below the runtime
 * that checks it.
 */
const FOLDER_ORDER = [
  ["cli"],
  ["server"],
  ["tooling.ts"],
  ["tooling"],
  ["index.ts", "testing.ts", "profile-kit.ts"],
  ["runtime"],
  ["fire"],
  ["install"],
  ["observe"],
  ["store"],
  ["bundle"],
  ["pool"],
  ["sandbox-host", "pipeline"],
  ["audit", "config/config.ts"],
  ["integrity", "registry"],
  ["chain"],
  ["profiles", "observe/events.ts", "tooling/hook-env.ts"],
  ["model"],
  ["config"],
  ["errors.ts"],
];

/**
 * The rule behind FOLDER_ORDER. `no-restricted-imports` matches an import's text, not the file it
 * names ("../index.js" is src/index.ts from src/chain/ but src/profiles/index.ts from
 * src/profiles/amplifier/), so this rule resolves each relative import (static, `export … from`,
 * `import type`, `import()`) to its part first.
 */
const folderOrder = {
  meta: { type: "problem", schema: [], messages: { up: "{{from}} may not import {{to}}: {{to}} is on row {{toRow}} of FOLDER_ORDER (eslint.config.js), {{from}} on row {{fromRow}}; imports go down the table only.", unplaced: "{{part}} is not on a row of FOLDER_ORDER (eslint.config.js): place it before importing across parts." } },
  create(context) {
    const src = path.resolve(import.meta.dirname, "src");
    const rowOf = new Map(FOLDER_ORDER.flatMap((row, i) => row.map((part) => [part, i + 1])));
    const partOf = (file) => {
      const rel = path.relative(src, file).split(path.sep).join("/");
      if (rel.startsWith("../")) return undefined;
      if (rowOf.has(rel)) return rel;
      return rel.split("/")[0];
    };
    const from = partOf(context.filename);
    if (from === undefined) return {};
    function check(node, specifier) {
      if (typeof specifier !== "string" || !specifier.startsWith(".")) return;
      const to = partOf(path.resolve(path.dirname(context.filename), specifier).replace(/\.js$/, ".ts"));
      if (to === undefined || to === from) return;
      for (const part of [from, to]) if (!rowOf.has(part)) return context.report({ node, messageId: "unplaced", data: { part } });
      if (rowOf.get(to) <= rowOf.get(from)) context.report({ node, messageId: "up", data: { from, to, fromRow: rowOf.get(from), toRow: rowOf.get(to) } });
    }
    const fromSource = (node) => check(node, node.source?.value);
    return {
      ImportDeclaration: fromSource,
      ExportNamedDeclaration: fromSource,
      ExportAllDeclaration: fromSource,
      ImportExpression: fromSource,
      // typescript-eslint 8 names the string `source` (earlier: `argument.literal`).
      TSImportType: (node) => check(node, node.source?.value ?? node.argument?.literal?.value),
    };
  },
};

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
  // The folder order (FOLDER_ORDER above): every file of src/.
  { files: ["src/**/*.ts"], plugins: { vcp: { rules: { "folder-order": folderOrder } } }, rules: { "vcp/folder-order": "error" } },
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
