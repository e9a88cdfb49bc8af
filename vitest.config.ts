import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Test files that load isolated-vm in-process need --no-node-snapshot; forks let us pass it.
    pool: "forks",
    execArgv: ["--no-node-snapshot"],
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
