/**
 * Guest code for the benches, built the way `vcp-hooks build` builds a policy bundle: one esbuild
 * IIFE script leaving the module's exports on `globalThis.__vcp_bundle` (DESIGN §3.2).
 * test/support/guest-build.ts re-exports these for the test suites.
 *
 * SECURITY: corpus files are hostile. They are only *bundled* here (esbuild parses, never runs);
 * they are never imported or evaluated in a host process.
 */
import { build, type BuildOptions } from "esbuild";

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
export async function buildGuestFile(filePath: string): Promise<string> {
  const result = await build({ ...GUEST_BUILD_OPTIONS, entryPoints: [filePath] });
  return outputText(result.outputFiles);
}

/** Bundle guest module source text (ESM) to a classic script. */
export async function buildGuestText(source: string, resolveDir: string = process.cwd()): Promise<string> {
  const result = await build({ ...GUEST_BUILD_OPTIONS, stdin: { contents: source, loader: "js", resolveDir, sourcefile: "guest.js" } });
  return outputText(result.outputFiles);
}

function outputText(files: { text: string }[] | undefined): string {
  const file = files?.[0];
  if (!file) throw new Error("esbuild produced no output for the guest");
  return file.text;
}
