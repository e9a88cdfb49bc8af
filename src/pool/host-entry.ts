import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { VcpError } from "../errors.js";

/*
 * Which file the supervisor forks as the sandbox host.
 *
 *   compiled (dist/src/pool/host-entry.js)   → dist/src/pool/host-main.js, its sibling
 *   sources  (src/pool/host-entry.ts, e.g.   → <root>/dist/src/pool/host-main.js, checked to be
 *            vitest or a type-stripping run)    built from the sources beside it
 *
 * The host and its piscina workers are separate processes and threads that plain Node starts, so
 * they always load compiled JavaScript; host-main then finds `./worker.js` next to itself. Only the
 * caller's module graph (createRuntime, VcpError, …) comes from the sources. Nothing crosses between
 * the two graphs but JSON (IPC messages and frames), so `instanceof VcpError` holds in the caller either way.
 */

/**
 * The sandbox host entry to fork for the module at `moduleUrl` (default: this module).
 * Throws a VcpError `SANDBOX_START_FAILED` naming `npm run build` when running from sources and the
 * build is missing or older than a source file: a stale host would run other code than the caller's,
 * a confusing failure far from its cause.
 *
 * @example
 * ```ts
 * const entry = resolveHostEntry(); // ".../dist/src/pool/host-main.js"
 * fork(entry, [], { execArgv: ["--no-node-snapshot"] });
 * ```
 */
export function resolveHostEntry(moduleUrl: string = import.meta.url): string {
  const here = fileURLToPath(moduleUrl);
  if (!here.endsWith(".ts")) return fileURLToPath(new URL("./host-main.js", moduleUrl));
  const root = fileURLToPath(new URL("../../", moduleUrl));
  const srcDir = join(root, "src");
  const distDir = join(root, "dist", "src");
  const entry = join(distDir, "pool", "host-main.js");
  if (mtimeMs(entry) === undefined) {
    throw new VcpError("SANDBOX_START_FAILED", `running from sources, the sandbox host loads the build, and ${relative(root, entry)} is missing: run \`npm run build\``, { entry });
  }
  const stale: string[] = [];
  for (const source of typeScriptSources(srcDir)) {
    const rel = relative(srcDir, source);
    const built = join(distDir, rel.replace(/\.ts$/, ".js"));
    const builtAt = mtimeMs(built);
    if (builtAt === undefined) stale.push(`src/${rel} (not built)`);
    else if (builtAt < (mtimeMs(source) ?? 0)) stale.push(`src/${rel}`);
  }
  if (stale.length > 0) {
    const named = stale.slice(0, 3).join(", ") + (stale.length > 3 ? ` and ${stale.length - 3} more` : "");
    throw new VcpError(
      "SANDBOX_START_FAILED",
      `running from sources, the sandbox host loads dist/, which is older than the sources (${named} changed since the build): run \`npm run build\``,
      { entry, stale },
    );
  }
  return entry;
}

function* typeScriptSources(dir: string): Generator<string> {
  // Sorted, so the error names the same files on every file system.
  const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* typeScriptSources(path);
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) yield path;
  }
}

function mtimeMs(path: string): number | undefined {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}
