/**
 * The public API names what it uses (issue 11, Deliver 5): every type that an export of the public
 * entries (src/index.ts, src/tooling.ts, src/testing.ts, src/profile-kit.ts) mentions in its
 * signature — a parameter, a return type, an interface member, a type alias — is itself exported from
 * one of the entries, so a user can write `const options: SandboxOptions = …` instead of
 * `Parameters<…>[0]["sandbox"]`.
 */
import { resolve } from "node:path";
import ts from "typescript";
import { expect, test } from "vitest";

const ENTRIES = ["src/index.ts", "src/tooling.ts", "src/testing.ts", "src/profile-kit.ts"].map((f) => resolve(f));

function unexportedTypes(): string[] {
  const program = ts.createProgram(ENTRIES, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const resolveAlias = (symbol: ts.Symbol) => (symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol);
  const exported = new Set<ts.Symbol>();
  for (const entry of ENTRIES) {
    const module = checker.getSymbolAtLocation(program.getSourceFile(entry)!)!;
    for (const symbol of checker.getExportsOfModule(module)) exported.add(resolveAlias(symbol));
  }
  const missing = new Map<string, string>();
  const visited = new Set<ts.Symbol>();

  function visitNode(node: ts.Node, usedBy: string): void {
    const name = ts.isTypeReferenceNode(node) ? node.typeName : ts.isExpressionWithTypeArguments(node) ? node.expression : undefined;
    const symbol = name === undefined ? undefined : checker.getSymbolAtLocation(name);
    if (symbol !== undefined) visitSymbol(resolveAlias(symbol), usedBy);
    ts.forEachChild(node, (child) => visitNode(child, usedBy));
  }

  function visitSymbol(symbol: ts.Symbol, usedBy: string): void {
    const declaration = symbol.declarations?.[0];
    const file = declaration?.getSourceFile().fileName ?? "";
    // Only our own types: node's, zod's and fastify's are not ours to export.
    if (!file.includes("/src/") || file.includes("node_modules") || symbol.flags & ts.SymbolFlags.TypeParameter) return;
    if (!exported.has(symbol)) missing.set(`${symbol.name} (${file.split("/src/")[1]})`, usedBy);
    if (visited.has(symbol)) return;
    visited.add(symbol);
    for (const d of symbol.declarations ?? []) {
      if (ts.isVariableDeclaration(d)) {
        if (d.type) visitNode(d.type, symbol.name);
      } else if (ts.isFunctionDeclaration(d)) {
        for (const p of d.parameters) if (p.type) visitNode(p.type, symbol.name);
        if (d.type) visitNode(d.type, symbol.name);
      } else if (ts.isClassDeclaration(d)) {
        for (const m of d.members) if (!(ts.getCombinedModifierFlags(m) & ts.ModifierFlags.Private)) visitNode(m, symbol.name);
      } else if (ts.isInterfaceDeclaration(d) || ts.isTypeAliasDeclaration(d)) {
        visitNode(d, symbol.name);
      }
    }
  }

  for (const symbol of exported) visitSymbol(symbol, "an entry");
  return [...missing].map(([type, usedBy]) => `${type}, used by ${usedBy}`).sort();
}

test("every type a public signature uses is exported from a public entry", { timeout: 60_000 }, () => {
  expect(unexportedTypes()).toEqual([]);
});
