// The sandboxed stubs `vcp-hooks import` writes (golden files, which import.test.ts keeps equal to what
// the importer writes) type-check as generated: their author types resolve through the package's
// `vcp-hooks/profiles/<id>` exports, mapped here to the sources as the package exports map them to dist.
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, test } from "vitest";

const GOLDEN = resolve("test/cli/import/golden");

function stubFiles(): string[] {
  const files: string[] = [];
  for (const format of readdirSync(GOLDEN)) {
    const stubs = join(GOLDEN, format, "stubs");
    let names: string[];
    try {
      names = readdirSync(stubs);
    } catch {
      continue;
    }
    for (const name of names) files.push(join(stubs, name, "src", "index.ts"));
  }
  return files;
}

describe("import stubs", () => {
  test("every generated stub type-checks against the package's profile exports", () => {
    const files = stubFiles();
    expect(files.length).toBeGreaterThan(10);
    const program = ts.createProgram(files, {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: [],
      baseUrl: resolve("."),
      paths: { "vcp-hooks/profiles/*": ["./src/profiles/*/types.ts"] },
    });
    const errors = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file === undefined || files.includes(resolve(d.file.fileName)))
      .map((d) => `${d.file ? d.file.fileName.replace(`${GOLDEN}/`, "") : ""}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
    expect(errors).toEqual([]);
  }, 120_000);

  test("a stub imports only profiles the package exports author types for", () => {
    const exported = Object.keys((JSON.parse(readFileSync("package.json", "utf8")) as { exports: Record<string, unknown> }).exports);
    for (const file of stubFiles()) {
      for (const m of readFileSync(file, "utf8").matchAll(/from "vcp-hooks\/([^"]+)"/g)) expect(exported, file).toContain(`./${m[1]}`);
    }
  });
});
