/**
 * What the sandbox workers load: the static import graph of the worker entry (src/pool/worker.ts) and
 * of the host process (src/pool/host-main.ts). The operational logger (pino), the HTTP server and the
 * audit writer stay out of them: a worker runs guest code next to nothing it does not need.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { expect, test } from "vitest";

/** Every module reached by value imports (type-only imports are erased), and every package they name. */
function importGraph(entry: string): { modules: string[]; packages: string[] } {
  const modules = new Set<string>();
  const packages = new Set<string>();
  const walk = (file: string): void => {
    if (modules.has(file)) return;
    modules.add(file);
    const source = readFileSync(file, "utf8");
    for (const m of source.matchAll(/^(import|export)\s+(type\s+)?[^;]*?from\s+"([^"]+)";/gms)) {
      if (m[2] !== undefined) continue;
      const spec = m[3]!;
      if (!spec.startsWith(".")) {
        packages.add(spec);
        continue;
      }
      const target = resolve(dirname(file), spec.replace(/\.js$/, ".ts"));
      if (existsSync(target)) walk(target);
    }
  };
  walk(resolve(entry));
  return { modules: [...modules].map((f) => relative(resolve("src"), f)).sort(), packages: [...packages].sort() };
}

test.each(["src/pool/worker.ts", "src/pool/host-main.ts"])("%s loads no pino, fastify, logger, server or audit writer", (entry) => {
  const { modules, packages } = importGraph(entry);
  expect(modules).toContain(entry.replace("src/", ""));
  for (const forbidden of ["pino", "fastify", "@fastify/swagger", "prom-client"]) expect(packages).not.toContain(forbidden);
  for (const module of modules) expect(module).not.toMatch(/^(server|cli|observe\/logger|audit\/writer|runtime)\b/);
});

test("the worker does reach the sandbox host and the chain executor (the walk follows imports)", () => {
  const { modules, packages } = importGraph("src/pool/worker.ts");
  expect(modules).toEqual(expect.arrayContaining(["chain/execute.ts", "sandbox-host/isolate-host.ts", "chain/guest-text.ts"]));
  expect(packages).toContain("isolated-vm");
});
