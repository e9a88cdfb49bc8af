// docs/config.md is generated from the config schema; these tests keep it complete and current.
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { configFields, FIELD_DOCS, reloadClass, renderConfigReference } from "../../../src/server/config-reference.js";

describe("docs/config.md", () => {
  test("every config field has a description and a reload class; no description names a field that does not exist", () => {
    const fields = configFields();
    expect(fields.filter((f) => !f.description).map((f) => f.path), "fields without a description in FIELD_DOCS").toEqual([]);
    const leaves = fields.filter((f) => f.reload !== "per field");
    expect(leaves.filter((f) => reloadClass(f.path) === undefined).map((f) => f.path), "fields in neither LIVE_FIELDS nor RESTART_FIELDS").toEqual([]);
    const paths = new Set(fields.map((f) => f.path));
    expect(Object.keys(FIELD_DOCS).filter((p) => !paths.has(p)), "FIELD_DOCS entries for fields the schema does not have").toEqual([]);
  });

  test("is current: regenerate with `npm run docs:config`", () => {
    expect(readFileSync("docs/config.md", "utf8")).toBe(renderConfigReference());
  });

  test("states the defaults and the reload class a user relies on", () => {
    const text = renderConfigReference();
    expect(text).toMatch(/\| `limits\.body_bytes` \| integer \(1024–67108864\) \| `1048576` \| live \|/);
    expect(text).toMatch(/\| `log_level` \| `debug` \\\| `info` \\\| `warn` \\\| `error` \| – \| live \|/);
    expect(text).toMatch(/\| `data_dir` \| string \| `"\.\/\.vcp"` \| restart \|/);
  });
});
