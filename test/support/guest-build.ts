/**
 * Builds guest (hook action) code the way `vcp-hooks build` does for a policy bundle: one esbuild
 * IIFE script that leaves the module's exports on `globalThis.__vcp_bundle` (DESIGN §3.2, and the
 * `BundleCode` contract of src/sandbox-host/types.ts).
 *
 * SECURITY: the host only *bundles* guest files here; it never imports or evaluates them. The
 * adversarial corpus is hostile code and must only ever run inside the sandbox.
 */
import { build, type BuildOptions } from "esbuild";
import { dirname } from "node:path";

const GUEST_BUILD_OPTIONS = {
  bundle: true,
  format: "iife",
  globalName: "__vcp_bundle",
  platform: "neutral",
  target: "es2024",
  write: false,
  logLevel: "silent",
  legalComments: "none",
} as const satisfies BuildOptions;

/** Bundle one guest module file to a classic script. */
export async function buildGuest(filePath: string): Promise<string> {
  const result = await build({ ...GUEST_BUILD_OPTIONS, entryPoints: [filePath] });
  return outputText(result.outputFiles);
}

/** Bundle guest module source text (ESM) to a classic script. */
export async function buildGuestSource(source: string, resolveDir: string = process.cwd()): Promise<string> {
  const result = await build({
    ...GUEST_BUILD_OPTIONS,
    stdin: { contents: source, loader: "js", resolveDir, sourcefile: "guest.js" },
  });
  return outputText(result.outputFiles);
}

/** Directory a relative import in a guest file resolves against. */
export function guestResolveDir(filePath: string): string {
  return dirname(filePath);
}

function outputText(files: { text: string }[] | undefined): string {
  const file = files?.[0];
  if (!file) throw new Error("esbuild produced no output for the guest");
  return file.text;
}
