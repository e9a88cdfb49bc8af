// The same conformance suite against the real isolated-vm sandbox process. The sandbox host and its
// piscina workers load compiled files, so this imports the build (`npm test` builds first).
import { createRuntime } from "../../dist/src/index.js";
import type { Runtime, RuntimeOptions } from "../../src/index.js";
import { defineChainConformance } from "./chain-suite.js";

defineChainConformance("isolated-vm sandbox", (options) =>
  (createRuntime as (o?: Partial<RuntimeOptions>) => Promise<Runtime>)({ ...options, sandbox: { threads: 2 } }),
);
