/**
 * PROFILES §1.3: author types per profile are importable as `vcp-hooks/profiles/<id>`. The package
 * exports point at the built declarations (run `npm run build` first), which declare the input and
 * output types an action is written against.
 */
import { existsSync, readFileSync } from "node:fs";
import { expect, test } from "vitest";

const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { exports: Record<string, { types: string; import: string }> };

test.each([
  ["gemini-cli", ["BeforeToolInput", "BeforeToolOutput", "AfterToolInput", "BeforeToolSelectionOutput", "HookOutput"]],
  ["llxprt", ["BeforeToolInput", "BeforeModelInput", "AfterModelOutput", "HookOutput"]],
  ["claude-code", ["PreToolUseInput", "PreToolUseOutput", "PostToolUseInput", "PermissionRequestOutput", "HookOutput"]],
])("vcp-hooks/profiles/%s exports its author types from the build", (id, names) => {
  const entry = pkg.exports[`./profiles/${id}`];
  expect(entry).toEqual({ types: `./dist/src/profiles/${id}/types.d.ts`, import: `./dist/src/profiles/${id}/types.js` });
  expect(existsSync(entry!.import)).toBe(true);
  // The subpath re-exports the family's declarations; follow one `export type *` hop.
  let text = readFileSync(entry!.types, "utf8");
  const hop = /export type \* from "(.+)\.js";/.exec(text);
  if (hop) text += readFileSync(new URL(`${hop[1]}.d.ts`, new URL(entry!.types, `file://${process.cwd()}/`)), "utf8");
  for (const name of names) expect(text).toMatch(new RegExp(`(interface|type) ${name}\\b`));
});
