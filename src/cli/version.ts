/**
 * `vcp-hooks version [--json]`: what exactly is running — the package, the commit it was built from,
 * Node, V8 and isolated-vm — for bug reports and for checking a deployment.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { EXIT_OK, parseCommand, printJson, type Command } from "./common.js";

export interface VersionInfo {
  package: string;
  version: string;
  /** The commit `npm run build` ran on (null when built outside a git checkout). */
  commit: string | null;
  /** The build had uncommitted changes to tracked files. */
  dirty: boolean;
  node: string;
  v8: string;
  "isolated-vm": string;
}

function readJson(url: URL): Record<string, unknown> | null {
  try {
    return JSON.parse(readFileSync(url, "utf8")) as Record<string, unknown>;
  } catch {
    return null;
  }
}

function dependencyVersion(name: string): string {
  try {
    // Read the package's manifest without loading it (the CLI never loads isolated-vm itself).
    const require = createRequire(import.meta.url);
    const pkg = JSON.parse(readFileSync(require.resolve(`${name}/package.json`), "utf8")) as { version?: string };
    return pkg.version ?? "unknown";
  } catch {
    return "unknown";
  }
}

export function versionInfo(): VersionInfo {
  // dist/src/cli/version.js → package.json and dist/build-info.json
  const pkg = readJson(new URL("../../../package.json", import.meta.url));
  const build = readJson(new URL("../../build-info.json", import.meta.url));
  return {
    package: typeof pkg?.["name"] === "string" ? pkg["name"] : "vcp-hooks",
    version: typeof pkg?.["version"] === "string" ? pkg["version"] : "unknown",
    commit: typeof build?.["commit"] === "string" ? build["commit"] : null,
    dirty: build?.["dirty"] === true,
    node: process.versions.node,
    v8: process.versions.v8,
    "isolated-vm": dependencyVersion("isolated-vm"),
  };
}

export const versionCommand: Command = {
  name: "version",
  summary: "print the package, commit, Node, V8 and isolated-vm versions",
  usage: "vcp-hooks version [--json]",
  async run(args, io) {
    const { help } = parseCommand("version", args, {}, { min: 0, max: 0, names: "" });
    if (help) {
      io.out(versionCommand.usage);
      return EXIT_OK;
    }
    const v = versionInfo();
    if (io.json) {
      printJson(io, v);
      return EXIT_OK;
    }
    const commit = v.commit === null ? "unknown commit" : `commit ${v.commit.slice(0, 12)}${v.dirty ? " (with uncommitted changes)" : ""}`;
    io.out(`${v.package} ${v.version} (${commit})\nnode ${v.node}, v8 ${v.v8}, isolated-vm ${v["isolated-vm"]}`);
    return EXIT_OK;
  },
};
