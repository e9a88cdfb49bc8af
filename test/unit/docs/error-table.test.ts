import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { ERROR_CODES } from "../../../src/errors.js";

// STYLE.md: every error code is documented in the README's error table, and the table names no
// code that does not exist. The HTTP server's own codes (auth, body parsing) are in the one table too.
describe("the README error table", () => {
  const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8");
  const section = readme.split("## Error codes")[1]?.split("\n## ")[0] ?? "";
  const documented = new Set([...section.matchAll(/^\|\s*`([A-Z_]+)`\s*\|/gm)].map((m) => m[1]!));

  test("documents every code of ERROR_CODES", () => {
    expect(Object.keys(ERROR_CODES).filter((code) => !documented.has(code))).toEqual([]);
  });
  test("names no code that ERROR_CODES does not have", () => {
    expect([...documented].filter((code) => !Object.hasOwn(ERROR_CODES, code))).toEqual([]);
  });
});
