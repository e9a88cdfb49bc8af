// The same conformance suite against the real isolated-vm sandbox process. The runtime comes from the
// sources; it starts the compiled sandbox host from dist/ (src/pool/host-entry.ts; `npm test` builds first).
import { createRuntime } from "../../src/index.js";
import { defineChainConformance } from "./chain-suite.js";

defineChainConformance("isolated-vm sandbox", (options) =>
  createRuntime({ ...options, sandbox: { threads: 2 } }),
);
