import { afterAll, describe, expect, test } from "vitest";
import { parse as parseYaml } from "yaml";
import { buildBundle, refuseImport } from "../../../src/bundle/build.js";
import { createRuntime } from "../../../src/index.js";
import { bundleCode } from "../../support/bundles.js";
import { createVmBackend } from "../../support/vm-backend.js";
import { serializeArtifact, verifyArtifact } from "../../../src/bundle/artifact.js";
import { digestOf } from "../../../src/integrity/digest.js";
import { VcpError } from "../../../src/errors.js";
import { copyDir, policyDir, policyYaml, removeDir, TS_POLICY } from "./helpers.js";

const made: string[] = [];
function dir(files: Record<string, string>): string {
  const d = policyDir(files);
  made.push(d);
  return d;
}
afterAll(() => made.forEach(removeDir));

async function buildError(d: string): Promise<VcpError> {
  const err = await buildBundle(d).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(VcpError);
  return err as VcpError;
}

const PII_YAML = policyYaml("strip-pii", [{ name: "strip_pii_before_inject", action: "stripPii" }]);

describe("buildBundle", () => {
  test("bundles a TypeScript policy with a local helper into a .vcpb whose exports are verified in an isolate", async () => {
    const d = dir({ "policy.yaml": PII_YAML, ...TS_POLICY });
    const { artifact, warnings } = await buildBundle(d);
    expect(warnings).toEqual([]);
    expect(artifact.format).toBe("vcp-bundle/1");
    expect(artifact.signatures).toEqual([]);
    expect(artifact.manifest).toMatchObject({ bundle: "strip-pii", version: "1.0.0", trust: "deployment", isolation: "shared" });
    expect(artifact.digest).toBe(digestOf({ manifest: artifact.manifest, code: artifact.code }));
    // One classic script: the helper is inlined, no import/require survives, the type import is erased.
    expect(artifact.code).toMatch(/^var __vcp_bundle = \(\(\) => \{/);
    expect(artifact.code).toContain("[email]");
    expect(artifact.code).not.toMatch(/\bimport\b|\brequire\(|vcp-hooks/);
    // Paths in esbuild's comments are relative to the policy directory.
    expect(artifact.code).toContain("// src/redact.ts");
    expect(artifact.code).not.toContain(d);
    // The artifact verifies as an unsigned bundle.
    expect(verifyArtifact(artifact, { requireSignatures: false })).toMatchObject({ key_id: null, trust: "deployment" });
  });

  test("the same input builds byte-identical artifacts, also from a copy at another path", async () => {
    const d = dir({ "policy.yaml": PII_YAML, ...TS_POLICY });
    const first = serializeArtifact((await buildBundle(d)).artifact);
    const second = serializeArtifact((await buildBundle(d)).artifact);
    const copy = copyDir(d);
    made.push(copy);
    const third = serializeArtifact((await buildBundle(copy)).artifact);
    expect(second).toBe(first);
    expect(third).toBe(first);
  });

  test("YAML key order does not change the artifact", async () => {
    const a = dir({ "policy.yaml": PII_YAML, ...TS_POLICY });
    const reordered = PII_YAML.replace("bundle: strip-pii\nversion: 1.0.0\n", "version: 1.0.0\nbundle: strip-pii\n");
    expect(reordered).not.toBe(PII_YAML);
    const b = dir({ "policy.yaml": reordered, ...TS_POLICY });
    expect(serializeArtifact((await buildBundle(b)).artifact)).toBe(serializeArtifact((await buildBundle(a)).artifact));
  });

  test("a policy tsconfig.json does not change the output", async () => {
    const a = dir({ "policy.yaml": PII_YAML, ...TS_POLICY });
    const b = dir({ "policy.yaml": PII_YAML, ...TS_POLICY, "tsconfig.json": '{ "compilerOptions": { "verbatimModuleSyntax": true, "target": "es5" } }' });
    expect((await buildBundle(b)).artifact.code).toBe((await buildBundle(a)).artifact.code);
  });

  test.each([
    ["fs", 'import { readFileSync } from "fs";\nexport const act = () => readFileSync;\n'],
    ["node:fs", 'import { readFileSync } from "node:fs";\nexport const act = () => readFileSync;\n'],
    ["fs/promises", 'export async function act() { const fs = await import("fs/promises"); return fs; }\n'],
    ["child_process", 'const cp = require("child_process");\nexport const act = () => cp;\n'],
  ])("a Node built-in import (%s) fails the build, naming it and the importing file", async (spec, source) => {
    const d = dir({ "policy.yaml": policyYaml("nodey", [{ name: "h", action: "act" }]), "src/index.ts": 'export { act } from "./inner";\n', "src/inner.ts": source });
    const err = await buildError(d);
    expect(err.code).toBe("BUILD_FAILED");
    expect(err.message).toContain(`src/inner.ts:`);
    expect(err.message).toContain(`Node built-in "${spec}"`);
    expect(err.details?.["problems"]).toEqual([expect.objectContaining({ file: "src/inner.ts", import: spec, line: expect.any(Number) })]);
  });

  test("an unresolvable import fails the build naming it", async () => {
    const d = dir({ "policy.yaml": policyYaml("missing", [{ name: "h", action: "act" }]), "src/index.ts": 'import { x } from "./nope";\nimport left from "left-pad-that-does-not-exist";\nexport const act = () => [x, left];\n' });
    const err = await buildError(d);
    expect(err.code).toBe("BUILD_FAILED");
    const problems = err.details?.["problems"] as Array<{ file: string; import: string; line: number }>;
    expect(problems.map((p) => [p.file, p.import, p.line])).toEqual([
      ["src/index.ts", "./nope", 1],
      ["src/index.ts", "left-pad-that-does-not-exist", 2],
    ]);
    expect(err.message).toContain('src/index.ts:1:19: imports "./nope", which cannot be resolved or inlined');
  });

  test("an LLM SDK import fails the build even when the package is installed", async () => {
    const d = dir({
      "policy.yaml": policyYaml("llm", [{ name: "h", action: "act" }]),
      "src/index.ts": 'import OpenAI from "openai";\nexport const act = () => new OpenAI();\n',
      // A resolvable package of that name: the refusal is the guard's, not a resolution failure.
      "node_modules/openai/package.json": '{ "name": "openai", "main": "index.js" }',
      "node_modules/openai/index.js": "module.exports = function OpenAI() {};\n",
    });
    const err = await buildError(d);
    expect(err.code).toBe("BUILD_FAILED");
    expect(err.message).toContain('src/index.ts:1:20: imports the LLM SDK "openai"');
    expect(err.details?.["problems"]).toEqual([expect.objectContaining({ import: "openai", file: "src/index.ts" })]);
  });

  test("an LLM SDK imported by a dependency fails the build naming the dependency's file", async () => {
    const d = dir({
      "policy.yaml": policyYaml("llm-deep", [{ name: "h", action: "act" }]),
      "src/index.ts": 'import { helper } from "innocent";\nexport const act = () => helper;\n',
      "node_modules/innocent/package.json": '{ "name": "innocent", "module": "index.mjs" }',
      "node_modules/innocent/index.mjs": 'import { ChatAnthropic } from "@langchain/anthropic";\nexport const helper = ChatAnthropic;\n',
    });
    const err = await buildError(d);
    expect(err.message).toContain('node_modules/innocent/index.mjs:1:31: imports the LLM SDK "@langchain/anthropic"');
  });

  test("a package from node_modules is inlined (module field preferred)", async () => {
    const d = dir({
      "policy.yaml": policyYaml("deps", [{ name: "h", action: "act" }]),
      "src/index.ts": 'import { tag } from "tagger";\nexport const act = () => ({ status: "continue", annotations: { t: tag } });\n',
      "node_modules/tagger/package.json": '{ "name": "tagger", "main": "cjs.js", "module": "esm.js" }',
      "node_modules/tagger/cjs.js": 'exports.tag = "from-main";\n',
      "node_modules/tagger/esm.js": 'export const tag = "from-module";\n',
    });
    const { artifact } = await buildBundle(d);
    expect(artifact.code).toContain("from-module");
    expect(artifact.code).not.toContain("from-main");
  });

  test("a hook whose action is not exported is ACTION_NOT_CALLABLE, naming hook and action", async () => {
    const d = dir({
      "policy.yaml": policyYaml("ghost", [{ name: "real_hook", action: "act" }, { name: "ghost_hook", action: "missingFn" }]),
      "src/index.ts": 'export const act = () => ({ status: "continue" });\n',
    });
    const err = await buildError(d);
    expect(err.code).toBe("ACTION_NOT_CALLABLE");
    expect(err.message).toContain("hook 'ghost_hook': action 'missingFn' is not exported by the entry module");
    expect(err.details).toMatchObject({ bundle: "ghost", problems: [{ hook: "ghost_hook", action: "missingFn" }], exports: ["act"] });
  });

  test("a hook whose action is exported but not a function is ACTION_NOT_CALLABLE", async () => {
    const d = dir({
      "policy.yaml": policyYaml("notfn", [{ name: "value_hook", action: "config" }]),
      "src/index.ts": 'export const config = { status: "continue" };\nexport function other() { return { status: "continue" }; }\n',
    });
    const err = await buildError(d);
    expect(err.code).toBe("ACTION_NOT_CALLABLE");
    expect(err.message).toContain("hook 'value_hook': action 'config' is exported but is not a function");
  });

  test("code that throws at load fails in the isolate with the guest's message", async () => {
    const d = dir({ "policy.yaml": policyYaml("boom", [{ name: "h", action: "act" }]), "src/index.ts": 'throw new Error("top-level boom");\nexport const act = () => 1;\n' });
    const err = await buildError(d);
    expect(err.code).toBe("INVALID_BUNDLE");
    expect(err.message).toContain("top-level boom");
  });

  test("the code size cap", async () => {
    const d = dir({ "policy.yaml": PII_YAML, ...TS_POLICY });
    await expect(buildBundle(d, { maxCodeBytes: 200 })).rejects.toMatchObject({ code: "BUNDLE_TOO_LARGE", details: { limit: 200 } });
  });

  test("entry: the manifest's entry is used; a path outside the directory is refused; a missing file is named", async () => {
    const custom = dir({ "policy.yaml": policyYaml("custom", [{ name: "h", action: "act" }], "entry: lib/main.js"), "lib/main.js": 'export const act = () => ({ status: "continue" });\n' });
    expect((await buildBundle(custom)).artifact.manifest.entry).toBe("lib/main.js");
    const outside = dir({ "policy.yaml": policyYaml("outside", [{ name: "h", action: "act" }], "entry: ../x.ts") });
    await expect(buildBundle(outside)).rejects.toMatchObject({ code: "INVALID_BUNDLE", details: { problems: [{ field: "entry" }] } });
    const missing = dir({ "policy.yaml": PII_YAML });
    await expect(buildBundle(missing)).rejects.toMatchObject({ code: "BUILD_FAILED", message: expect.stringContaining("entry file src/index.ts does not exist") });
  });

  test("a manifest error stops the build before esbuild runs", async () => {
    const d = dir({ "policy.yaml": PII_YAML.replace("timeout_ms: 1000", "timeout_ms: 0"), ...TS_POLICY });
    await expect(buildBundle(d)).rejects.toMatchObject({ code: "INVALID_BUNDLE", message: expect.stringContaining("hooks[0].timeout_ms") });
  });

  test("a condition over its cost (five 64 KiB matches scans) is refused at build as at install, naming the limit", async () => {
    const leaves = [0, 1, 2, 3, 4].map((i) => `{ field: context.note, operator: matches, value: "secret-${i}$" }`).join(", ");
    const yaml = PII_YAML.replace("    timeout_ms: 1000", `    timeout_ms: 1000\n    condition: { combine: or, children: [${leaves}] }`);
    const err = await buildError(dir({ "policy.yaml": yaml, ...TS_POLICY }));
    expect(err.code).toBe("INVALID_PREDICATE");
    expect(err.details).toMatchObject({ path: "hooks[0].condition.children[4]", rule: expect.stringContaining("limit maxCost") });
  });

  test("generated: a tool's manifest and entry (build --from repo-yaml) go through parseManifest, esbuild and the import guard", async () => {
    const d = dir({ "h/guard.ts": "export function guard() { return {}; }\n", "h/bad.ts": 'import "node:fs";\nexport function bad() { return {}; }\n' });
    const manifest = { bundle: "gen", version: "1.0.0", profile: "repo-yaml@1", trust: "deployment", hooks: [{ name: "g", event: "PreAbilityCall", action: "guard", blocking: true }] };
    const generated = { manifest, manifestFile: ".system/hooks", entry: 'export { guard } from "./h/guard.ts";\n', entryName: "(gen).ts" };
    const { artifact } = await buildBundle(d, { generated });
    expect(artifact.manifest).toMatchObject({ bundle: "gen", profile: "repo-yaml@1", hooks: [{ name: "g", action: "guard", blocking: true }] });
    // The same validation as policy.yaml, naming the given origin.
    await expect(buildBundle(d, { generated: { ...generated, manifest: { ...manifest, version: "one" } } })).rejects.toMatchObject({ code: "INVALID_BUNDLE", message: expect.stringContaining(".system/hooks: version:") });
    // A module the entry re-exports is checked like any other.
    const err = await buildBundle(d, { generated: { ...generated, entry: 'export { bad as guard } from "./h/bad.ts";\n' } }).then(() => undefined, (e: unknown) => e);
    expect(err).toMatchObject({ code: "BUILD_FAILED", details: { problems: [expect.objectContaining({ file: "h/bad.ts", import: "node:fs" })] } });
  });

  test("generated + confined (build --from repo-yaml): a module may read only files inside the directory, whatever import or symlink leads out", async () => {
    const d = dir({
      "hooks/guard.ts": 'import secret from "../secret.json";\nexport function guard() { return { messages_to_user: [JSON.stringify(secret)] }; }\n',
      "hooks/ok.ts": 'import { helper } from "./lib/helper.ts";\nexport function guard() { return { messages_to_user: [helper()] }; }\n',
      "hooks/lib/helper.ts": 'export const helper = () => "inside";\n',
      "secret.json": '{"token":"builder-secret"}',
    });
    const manifest = { bundle: "gen", version: "1.0.0", profile: "repo-yaml@1", trust: "deployment", hooks: [{ name: "g", event: "PreAbilityCall", action: "guard" }] };
    const hooks = `${d}/hooks`;
    const generated = { manifest, manifestFile: hooks, entry: 'export { guard } from "./guard.ts";\n', entryName: "(gen).ts", confined: true };
    const err = await buildBundle(hooks, { generated }).then(() => undefined, (e: unknown) => e);
    expect(err).toMatchObject({ code: "BUILD_FAILED", message: expect.stringMatching(/secret\.json, outside .*may only import files inside it/) });
    expect(String((err as Error).message)).not.toContain("builder-secret");
    // Files inside build as before; unconfined (a policy directory of one's own) is unchanged.
    const { artifact } = await buildBundle(hooks, { generated: { ...generated, entry: 'export { guard } from "./ok.ts";\n' } });
    expect(artifact.code).toContain("inside");
    const open = await buildBundle(hooks, { generated: { ...generated, confined: false } });
    expect(open.artifact.code).toContain("builder-secret");
  });

  test("a value import of vcp-hooks is refused with a hint to use import type", async () => {
    const d = dir({ "policy.yaml": policyYaml("valueimport", [{ name: "h", action: "act" }]), "src/index.ts": 'import { HOOK_TYPES } from "vcp-hooks";\nexport const act = () => HOOK_TYPES;\n' });
    const err = await buildError(d);
    expect(err.message).toContain("import type");
  });
});

// Issue 11 defect 1: build validated a copy of the manifest rules, and let through hooks the
// registry refuses at install. Both now run parseManifest, which runs the registry's compileHook.
describe("build and install refuse the same manifests, with the same code and hooks[i] path", () => {
  const withHook = (lines: string) => PII_YAML.replace("    timeout_ms: 1000", `    timeout_ms: 1000\n${lines}`);
  const cases: Array<[string, string, string, string, string]> = [
    // label, policy.yaml, code, field, rule fragment
    ["a condition `in` with a number", withHook("    condition: { field: context.note, operator: in, value: 3 }"), "INVALID_PREDICATE", "hooks[0].condition.value", "in needs an array of JSON values (received 3)"],
    ["fail_closed on a session-trust bundle", withHook("    fail_closed: true").replace("trust: deployment", "trust: session"), "INVALID_HOOK", "hooks[0].fail_closed", "may not abort (spec §8.3)"],
    [
      "fail_closed on a session-scope hook (runs with session trust)",
      `${withHook("")}  - { name: watch, type: pre_inject, action: stripPii, priority: 1, timeout_ms: 10, scope: session, fail_closed: true }\n`,
      "INVALID_HOOK",
      "hooks[1].fail_closed",
      "a session-scope hook runs with session trust",
    ],
    ["metadata that is not JSON data (.inf)", withHook("    metadata: { limit: .inf }"), "INVALID_HOOK", "hooks[0].metadata.limit", "must be a finite number"],
  ];

  test.each(cases)("%s", async (_label, yaml, code, field, rule) => {
    const built = await buildError(dir({ "policy.yaml": yaml, ...TS_POLICY }));
    const rt = await createRuntime({ backend: createVmBackend() });
    try {
      const source = { manifest: parseYaml(yaml) as unknown, code: bundleCode({ stripPii: "function () { return { status: 'continue' }; }" }) };
      const installed = (await rt.bundles.install(source as never).then(
        () => undefined,
        (e: unknown) => e,
      )) as VcpError;
      expect(installed).toBeInstanceOf(VcpError);
      expect(rt.bundles.list()).toEqual([]);
      for (const err of [built, installed]) {
        expect(err.code).toBe(code);
        const problems = err.details?.["problems"] as Array<{ field: string; rule: string }>;
        expect(problems).toEqual([expect.objectContaining({ field, rule: expect.stringContaining(rule) })]);
        expect(err.message).toContain(`${field}`);
        expect(err.message).toContain(rule);
      }
      // policy.yaml errors also say where: the line of the offending field.
      expect(built.message).toMatch(new RegExp(`${field.replace(/[.[\]]/g, "\\$&")} \\(line \\d+, column \\d+\\)`));
    } finally {
      await rt.close();
    }
  });
});

describe("refuseImport", () => {
  test.each([
    ["fs", /Node built-in/],
    ["node:sqlite", /Node built-in/],
    ["worker_threads", /Node built-in/],
    ["openai", /LLM SDK/],
    ["openai/resources", /LLM SDK/],
    ["@anthropic-ai/sdk", /LLM SDK/],
    ["@google/genai", /LLM SDK/],
    ["@google/generative-ai", /LLM SDK/],
    ["cohere-ai", /LLM SDK/],
    ["@mistralai/mistralai", /LLM SDK/],
    ["groq-sdk", /LLM SDK/],
    ["ollama", /LLM SDK/],
    ["langchain", /LLM SDK/],
    ["@langchain/openai", /LLM SDK/],
    ["ai", /LLM SDK/],
    ["replicate", /LLM SDK/],
    ["/etc/passwd", /absolute path/],
  ])("%s is refused", (spec, why) => {
    expect(refuseImport(spec)).toMatch(why);
  });

  test.each(["./helper", "../shared/x", "lodash-es", "aim", "openai-compatible-schema-types", "@google/maps", "langchainish"])("%s is allowed", (spec) => {
    expect(refuseImport(spec)).toBeUndefined();
  });
});
