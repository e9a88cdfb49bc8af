import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The real-agent suite needs the installed CLIs and a network namespace: `npm run test:agents`.
    exclude: [...configDefaults.exclude, "test/agents/**"],
    // Test files that load isolated-vm in-process need --no-node-snapshot; forks let us pass it.
    pool: "forks",
    execArgv: ["--no-node-snapshot"],
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
