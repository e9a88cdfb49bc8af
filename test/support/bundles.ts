/**
 * Build test bundles from ordinary functions. Each action must be self-contained (no closures over
 * test variables): its source text is what runs in the sandbox.
 */
import type { BundleSource, Runtime } from "../../src/index.js";
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

/** Install `sources` on `runtime`, run `body`, then remove them again (newest first), even if it throws. */
export async function withBundles<T>(runtime: Pick<Runtime, "bundles">, sources: BundleSource[], body: () => Promise<T>): Promise<T> {
  const installed: string[] = [];
  try {
    for (const source of sources) {
      await runtime.bundles.install(source);
      installed.push(String(source.manifest.bundle));
    }
    return await body();
  } finally {
    for (const name of installed.reverse()) await runtime.bundles.remove(name);
  }
}

/**
 * A bundle of an event profile (PROFILES §2): each hook names an `event` (default `defaultEvent`)
 * instead of a type; `action` defaults to the hook's name, priority to 50, timeout_ms to 1000.
 */
export function profileBundle(
  name: string,
  profile: string,
  hooks: Array<Record<string, unknown> & { name: string }>,
  actions: Record<string, Action | string>,
  extra: Record<string, unknown> = {},
  defaultEvent?: string,
): BundleSource {
  return {
    manifest: {
      bundle: name,
      version: "1.0.0",
      trust: "deployment",
      profile,
      ...extra,
      hooks: hooks.map((h) => ({ action: h.name, ...(defaultEvent !== undefined ? { event: defaultEvent } : {}), priority: 50, timeout_ms: 1000, ...h })),
    } as unknown as ManifestInput,
    code: bundleCode(actions),
  };
}
