import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { ERROR_CODES } from "../../../src/errors.js";

// STYLE.md: every error code is documented in the error table (docs/errors.md, moved there from the
// README), and the table names no code that does not exist. The HTTP server's own codes (auth, body
// parsing) are in the one table too.
describe("the error table in docs/errors.md", () => {
  const page = readFileSync(new URL("../../../docs/errors.md", import.meta.url), "utf8");
  const documented = new Set([...page.matchAll(/^\|\s*`([A-Z_]+)`\s*\|/gm)].map((m) => m[1]!));

  test("documents every code of ERROR_CODES", () => {
    expect(Object.keys(ERROR_CODES).filter((code) => !documented.has(code))).toEqual([]);
  });
  test("names no code that ERROR_CODES does not have", () => {
    expect([...documented].filter((code) => !Object.hasOwn(ERROR_CODES, code))).toEqual([]);
  });
});
