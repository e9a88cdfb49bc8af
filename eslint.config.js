// Lint: correctness rules plus the module map of STYLE.md, enforced by rule rather than review.
import tseslint from "typescript-eslint";

const restrict = (paths, patterns = []) => ["error", { paths, patterns }];
const ISOLATED_VM = { name: "isolated-vm", message: "Only src/sandbox-host/ may import isolated-vm (STYLE.md)." };
const PISCINA = { name: "piscina", message: "Only src/pool/ may import piscina (STYLE.md)." };
const CHILD_PROCESS = ["node:child_process", "child_process"].map((name) => ({ name, message: "Only src/pool/ starts processes for the sandbox (STYLE.md)." }));
const IO = ["node:fs", "fs", "node:fs/promises", "node:net", "node:http", "node:https", "pino"].map((name) => ({
  name,
  message: "Core modules (chain, registry, integrity, model, profiles) do no I/O: take a Logger/Clock instead (STYLE.md).",
}));

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
  { files: ["src/**/*.ts"], ignores: ["src/sandbox-host/**", "src/pool/**"], rules: { "no-restricted-imports": restrict([ISOLATED_VM, PISCINA, ...CHILD_PROCESS]) } },
  { files: ["src/pool/**/*.ts"], rules: { "no-restricted-imports": restrict([ISOLATED_VM]) } },
  { files: ["src/sandbox-host/**/*.ts"], rules: { "no-restricted-imports": restrict([PISCINA, ...CHILD_PROCESS]) } },
  {
    files: ["src/chain/**/*.ts", "src/registry/**/*.ts", "src/integrity/**/*.ts", "src/model/**/*.ts", "src/profiles/**/*.ts"],
    rules: { "no-restricted-imports": restrict([ISOLATED_VM, PISCINA, ...CHILD_PROCESS, ...IO]) },
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
  {
    files: ["src/server/**/*.ts", "src/cli/**/*.ts"],
    rules: {
      "no-restricted-imports": restrict([ISOLATED_VM, PISCINA, ...CHILD_PROCESS], [
        // Adapters: the public API, plus the deployment config they load and (for `vcp-hooks serve`) the server.
        // Two exceptions: the `hook` adapter's light entry may use the dependency-free scrubber (importing
        // src/index.ts would load the whole runtime per agent event), and `import` uses the pure
        // converters of src/tooling/ (authoring tools, not the runtime).
        { group: ["../*", "!../index.js", "!../config", "!../config/*", "!../server", "!../server/*", "!../audit", "../audit/*", "!../audit/redact-string.js", "!../tooling", "!../tooling/**"], message: "server/ and cli/ import only from src/index.ts, src/config/, src/tooling/ and (cli) src/server/ (STYLE.md)." },
      ]),
    },
  },
);
