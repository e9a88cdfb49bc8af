import { defineConfig } from "vitest/config";

// `npm run test:agents` (scripts/test-agents.mjs runs this config once per agent, each in its own
// loopback-only network namespace): the real agent CLIs against vcp-hooks serve and a fake model
// server. Not part of `npm test` (vitest.config.ts excludes test/agents/).
export default defineConfig({
  test: {
    include: ["test/agents/**/*.test.ts"],
    pool: "forks",
    execArgv: ["--no-node-snapshot"],
    // One agent run is a few seconds idle; a loaded 2-core CI machine takes many times that.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    fileParallelism: false,
  },
});
