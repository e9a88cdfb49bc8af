/**
 * What every bench report shares: the environment block and writing report.json + report.md into an
 * output directory (STYLE.md "Benches": each bench prints a table and writes JSON).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, release, totalmem } from "node:os";
import { dirname, join, resolve } from "node:path";

/** The repository root: the nearest ancestor whose package.json is vcp-hooks'. */
export function repoRoot(from: string = import.meta.dirname): string {
  let dir = resolve(from);
  for (;;) {
    const pkg = join(dir, "package.json");
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, "utf8")) as { name?: string }).name === "vcp-hooks") return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no vcp-hooks package.json above ${from}`);
    dir = parent;
  }
}

function packageVersion(root: string, name: string): string {
  try {
    return (JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8")) as { version: string }).version;
  } catch {
    return "unknown";
  }
}

/** Versions and machine: what a reader needs to know whether two reports are comparable. */
export function environment(): Record<string, string | number> {
  const root = repoRoot();
  return {
    node: process.version,
    v8: process.versions.v8,
    "isolated-vm": packageVersion(root, "isolated-vm"),
    piscina: packageVersion(root, "piscina"),
    "vcp-hooks": (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version,
    platform: `${process.platform}-${process.arch} (${release()})`,
    cpus: cpus().length,
    cpu_model: cpus()[0]?.model ?? "unknown",
    total_mem_mb: Math.round(totalmem() / 2 ** 20),
  };
}

/** Write `<dir>/report.json` and `<dir>/report.md`; returns their paths. */
export function writeReport(dir: string, report: unknown, markdown: string, base = "report"): { json: string; md: string } {
  mkdirSync(dir, { recursive: true });
  const json = join(dir, `${base}.json`);
  const md = join(dir, `${base}.md`);
  writeFileSync(json, JSON.stringify(report, null, 2) + "\n");
  writeFileSync(md, markdown.endsWith("\n") ? markdown : markdown + "\n");
  return { json, md };
}
