import { readFileSync } from "node:fs";
import { expect, test } from "vitest";
import { ERROR_CODES } from "../../../src/errors.js";
import { SERVER_ERROR_CODES } from "../../../src/server/errors.js";

// STYLE.md: every error code is documented in the README's error table, and the table names no
// code that does not exist. The HTTP server's own codes (auth, body parsing) are in the table too.
test("the README error table lists exactly the runtime and server error codes", () => {
  const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8");
  const section = readme.split("## Error codes")[1]?.split("\n## ")[0] ?? "";
  const documented = [...section.matchAll(/^\|\s*`([A-Z_]+)`\s*\|/gm)].map((m) => m[1]).sort();
  expect(documented).toEqual([...Object.keys(ERROR_CODES), ...Object.keys(SERVER_ERROR_CODES)].sort());
});
