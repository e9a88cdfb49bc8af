/**
 * Build test bundles from ordinary functions. Each action must be self-contained (no closures over
 * test variables): its source text is what runs in the sandbox.
 */
import type { BundleSource } from "../../src/index.js";
import type { ManifestInput } from "../../src/bundle/manifest.js";

type Action = (input: any) => unknown;
type HookSpec = ManifestInput["hooks"][number];

export function bundleCode(actions: Record<string, Action | string>): string {
  const entries = Object.entries(actions).map(([name, fn]) => `${JSON.stringify(name)}: (${typeof fn === "string" ? fn : fn.toString()})`);
  return `var __vcp_bundle = {\n${entries.join(",\n")}\n};`;
}

/** A bundle with the given hooks; each hook's `action` defaults to its name. */
export function testBundle(
  name: string,
  hooks: Array<Partial<HookSpec> & { name: string; type: HookSpec["type"] }>,
  actions: Record<string, Action | string>,
  extra: Partial<ManifestInput> = {},
): BundleSource {
  return {
    manifest: {
      bundle: name,
      version: "1.0.0",
      trust: "deployment",
      ...extra,
      hooks: hooks.map((h) => ({ action: h.name, priority: 50, timeout_ms: 1000, ...h })),
    },
    code: bundleCode(actions),
  };
}
