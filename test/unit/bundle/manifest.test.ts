import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { loadManifestFile, parseManifestYaml, renderManifestJsonSchema, type ManifestProblem } from "../../../src/bundle/manifest.js";
import { VcpError } from "../../../src/errors.js";

const VALID = `bundle: strip-pii
version: 1.2.0
trust: deployment
hooks:
  - name: strip_pii_before_inject
    type: pre_inject
    action: stripPii
    priority: 90
    timeout_ms: 5000
  - name: audit
    type: post_select
    action: audit
    priority: 10
    timeout_ms: 100
    condition: { field: context.dimensions.data_sensitivity, operator: gte, value: 7 }
`;

function fail(text: string, file = "policies/x/policy.yaml"): VcpError {
  try {
    parseManifestYaml(text, file);
  } catch (err) {
    expect(err).toBeInstanceOf(VcpError);
    return err as VcpError;
  }
  throw new Error("expected the manifest to be refused");
}

/** `VALID` with one line replaced. */
const edit = (from: string, to: string) => {
  expect(VALID).toContain(from);
  return VALID.replace(from, to);
};

describe("manifest: every rule names file, path and rule", () => {
  const cases: Array<[string, string, string, string, number]> = [
    // label, yaml, field, rule fragment, line
    ["bundle name pattern", edit("bundle: strip-pii", "bundle: Strip PII"), "bundle", "[a-z0-9_-]{1,64}", 1],
    ["version is semver", edit("version: 1.2.0", "version: latest"), "version", "semantic version", 2],
    ["version must be a string (YAML number)", edit("version: 1.2.0", "version: 1.2"), "version", "must be a string", 2],
    ["trust level", edit("trust: deployment", "trust: root"), "trust", "", 3],
    ["hook name pattern", edit("name: audit", "name: Audit Hook"), "hooks[1].name", "spec §6.2.2", 10],
    ["hook type", edit("type: post_select", "type: post_inject"), "hooks[1].type", "six hook types", 11],
    ["priority range", edit("priority: 90", "priority: 101"), "hooks[0].priority", "[0, 100]", 8],
    ["priority integer", edit("priority: 90", "priority: 9.5"), "hooks[0].priority", "integer", 8],
    ["timeout range", edit("timeout_ms: 100", "timeout_ms: 30001"), "hooks[1].timeout_ms", "[1, 30000]", 14],
    ["timeout positive", edit("timeout_ms: 5000", "timeout_ms: 0"), "hooks[0].timeout_ms", "[1, 30000]", 9],
    ["action identifier", edit("action: stripPii", "action: strip-pii"), "hooks[0].action", "JavaScript identifier", 7],
    ["unknown hook field", edit("    timeout_ms: 5000", "    timeout_ms: 5000\n    timeout: 5"), "hooks[0]", "unknown field(s): timeout", 10],
    ["unknown top-level field", edit("trust: deployment", "trust: deployment\nowner: me"), "(root)", "unknown field(s): owner", 4],
    ["fail_closed boolean", edit("    timeout_ms: 5000", "    timeout_ms: 5000\n    fail_closed: yes"), "hooks[0].fail_closed", "boolean", 10],
    ["predicate shape", edit("operator: gte", "operator: greater"), "hooks[1].condition", "", 15],
    ["at least one hook", "bundle: x\nversion: 1.0.0\nhooks: []\n", "hooks", "at least one hook", 3],
    ["missing version", "bundle: x\nhooks:\n  - { name: a, type: periodic, action: a, priority: 1, timeout_ms: 1 }\n", "version", "", 1],
  ];

  test.each(cases)("%s", (_label, yaml, field, rule, line) => {
    const err = fail(yaml);
    expect(err.code).toBe("INVALID_BUNDLE");
    expect(err.message).toContain("policies/x/policy.yaml");
    expect(err.message).toContain(field);
    const problems = err.details?.["problems"] as ManifestProblem[];
    const problem = problems.find((p) => p.field === field || p.field.startsWith(`${field}.`));
    expect(problem, JSON.stringify(problems)).toBeDefined();
    expect(problem!.rule).toContain(rule);
    expect(err.message).toContain(problem!.rule);
    expect(problem!.line).toBe(line);
    expect(err.details?.["file"]).toBe("policies/x/policy.yaml");
  });

  test("every broken field is reported at once", () => {
    const err = fail(edit("priority: 90", "priority: 101").replace("timeout_ms: 100", "timeout_ms: -1"));
    const fields = (err.details?.["problems"] as ManifestProblem[]).map((p) => p.field);
    expect(fields).toEqual(expect.arrayContaining(["hooks[0].priority", "hooks[1].timeout_ms"]));
  });

  test("a hook name declared twice names the second one", () => {
    const err = fail(edit("name: audit", "name: strip_pii_before_inject"));
    expect(err.message).toMatch(/hooks\[1\]\.name \(line 10, column 11\): 'strip_pii_before_inject' is declared twice/);
  });

  test("a YAML syntax error names line and column", () => {
    const err = fail("bundle: x\nversion: 1.0.0\nhooks:\n  - name: a\n    priority: [1, 2\n  bad\n");
    const [problem] = err.details?.["problems"] as ManifestProblem[];
    expect(problem!.field).toBe("(yaml)");
    expect(problem!.rule).toMatch(/^YAML syntax error: /);
    expect(problem!.line).toBeGreaterThanOrEqual(5);
    expect(problem!.column).toBeGreaterThanOrEqual(1);
    expect(err.message).toMatch(/policies\/x\/policy\.yaml: line \d+, column \d+: YAML syntax error/);
  });

  test("a duplicate YAML key is a syntax error, not a silent override", () => {
    const err = fail(`${VALID}bundle: other\n`);
    expect(err.message).toMatch(/line 16, column 1: YAML syntax error: Map keys must be unique/);
  });

  test("a valid manifest is normalized (defaults applied)", () => {
    const m = parseManifestYaml(VALID.replace("trust: deployment\n", ""));
    expect(m.trust).toBe("session");
    expect(m.isolation).toBe("shared");
    expect(m.hooks[1]!.condition).toEqual({ field: "context.dimensions.data_sensitivity", operator: "gte", value: 7 });
  });
});

describe("loadManifestFile", () => {
  const dir = mkdtempSync(join(tmpdir(), "vcp-manifest-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("reads <dir>/policy.yaml", async () => {
    writeFileSync(join(dir, "policy.yaml"), VALID);
    const m = await loadManifestFile(dir);
    expect(m.bundle).toBe("strip-pii");
    expect(m.hooks.map((h) => h.name)).toEqual(["strip_pii_before_inject", "audit"]);
  });

  test("errors name the file inside the directory", async () => {
    writeFileSync(join(dir, "policy.yaml"), edit("priority: 90", "priority: -3"));
    await expect(loadManifestFile(dir)).rejects.toMatchObject({
      code: "INVALID_BUNDLE",
      message: expect.stringContaining(`${join(dir, "policy.yaml")}: hooks[0].priority (line 8, column 15): must be an integer in [0, 100]`),
    });
  });

  test("a directory without policy.yaml", async () => {
    const empty = mkdtempSync(join(tmpdir(), "vcp-manifest-empty-"));
    try {
      await expect(loadManifestFile(empty)).rejects.toMatchObject({ code: "INVALID_BUNDLE", message: expect.stringContaining("file not found") });
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe("schemas/policy.schema.json", () => {
  const file = new URL("../../../schemas/policy.schema.json", import.meta.url);

  // Regenerate with: UPDATE_SCHEMAS=1 npx vitest run test/unit/bundle/manifest.test.ts
  test("the committed JSON Schema equals the one generated from the zod schema", () => {
    const generated = renderManifestJsonSchema();
    if (process.env["UPDATE_SCHEMAS"] === "1") writeFileSync(file, generated);
    expect(readFileSync(file, "utf8"), "schemas/policy.schema.json is stale: run UPDATE_SCHEMAS=1 npx vitest run test/unit/bundle/manifest.test.ts").toBe(generated);
  });

  test("the schema describes the manifest's rules", () => {
    const schema = JSON.parse(renderManifestJsonSchema()) as any;
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(schema.required).toEqual(expect.arrayContaining(["bundle", "version", "hooks"]));
    expect(schema.additionalProperties).toBe(false);
    const hook = schema.properties.hooks.items;
    expect(hook.properties.timeout_ms).toMatchObject({ type: "integer", minimum: 1, maximum: 30000 });
    expect(hook.properties.priority).toMatchObject({ type: "integer", minimum: 0, maximum: 100 });
    expect(hook.required).toEqual(expect.arrayContaining(["name"]));
    // Exactly one of action and exec (an exec hook of the command lane, PROFILES §6).
    expect(hook.oneOf).toEqual([{ required: ["action"] }, { required: ["exec"] }]);
    // vcp@1 bundles (no profile, or profile vcp…) need a type, a priority and a timeout (spec §6.2.4,
    // §6.2.5); other event profiles an event, and default priority 50 (PROFILES §8.5) and the profile's timeout.
    expect(hook.required).not.toContain("priority");
    expect(hook.required).not.toContain("timeout_ms");
    expect(schema.then.properties.hooks.items.required).toEqual(["type", "priority", "timeout_ms"]);
    expect(schema.else.properties.hooks.items.required).toEqual(["event"]);
  });
});
