/**
 * The package's entries as a user resolves them: `vcp-hooks`, `vcp-hooks/tooling`, `vcp-hooks/testing`
 * and `vcp-hooks/profiles` through package.json `exports` (Node's self-reference by package name, from the
 * built dist/: run `npm run build` first). The lighter sibling of pack.test.ts, which installs the
 * tarball.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, test } from "vitest";

const run = promisify(execFile);
const REPO = resolve(".");
const NODE = join(REPO, "node_modules", ".bin", "node");

async function exportsOf(specifier: string): Promise<string[]> {
  const script = `const m = await import(${JSON.stringify(specifier)}); console.log(JSON.stringify(Object.keys(m).sort()));`;
  const { stdout } = await run(NODE, ["--input-type=module", "-e", script], { cwd: REPO });
  return JSON.parse(stdout.trim()) as string[];
}

describe("package exports", { timeout: 60_000 }, () => {
  test("the root entry is the runtime API: createRuntime, no build or sign tooling", async () => {
    const root = await exportsOf("vcp-hooks");
    expect(root).toEqual(expect.arrayContaining(["createRuntime", "VcpError", "ERROR_CODES", "DEFAULTS", "readArtifactFile", "createOperationalLogger"]));
    for (const tooling of ["buildBundle", "signArtifact", "generateKeyPair", "loadKeyring", "verifyAuditLog", "formatRecords", "signConstitution", "parseArtifact"]) expect(root).not.toContain(tooling);
    // The profile catalogue and model are vcp-hooks/profiles (issue 25 item 5); internal helpers are nowhere.
    for (const moved of ["getProfile", "listProfiles", "registerProfile", "chargeScan", "MAX_MATCHER_COST", "assertInputBounds", "isGranting", "DEFAULT_APPROVAL_LIMITS"]) expect(root).not.toContain(moved);
  });

  test("vcp-hooks/profiles is the profile catalogue and the model a profile is written against", async () => {
    const profiles = await exportsOf("vcp-hooks/profiles");
    expect(profiles).toEqual(["MAX_MATCHER_COST", "ScanBudgetExceeded", "chargeScan", "getProfile", "isProfileEvent", "listProfiles", "parseProfileRef", "registerProfile"]);
  });

  test("vcp-hooks/tooling builds, signs and verifies bundles and reads audit logs", async () => {
    const tooling = await exportsOf("vcp-hooks/tooling");
    expect(tooling).toEqual(expect.arrayContaining(["buildBundle", "createArtifact", "signArtifact", "verifyArtifact", "parseArtifact", "generateKeyPair", "loadKeyring", "verifyAuditLog", "readAuditRecords", "formatRecords", "signConstitution", "verifySignatureChain"]));
    expect(tooling).not.toContain("createRuntime");
  });

  test("vcp-hooks/testing resolves (types only: the ChainBackend contract)", async () => {
    expect(await exportsOf("vcp-hooks/testing")).toEqual([]);
  });

  test("every entry has its type declarations where package.json says", () => {
    const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { exports: Record<string, { types: string; import: string }> };
    expect(Object.keys(pkg.exports).sort()).toEqual([".", "./profiles", "./profiles/claude-code", "./profiles/codex", "./profiles/cursor", "./profiles/gemini-cli", "./profiles/goose", "./profiles/llxprt", "./profiles/openhands", "./profiles/vscode", "./testing", "./tooling"]);
    for (const entry of Object.values(pkg.exports)) {
      expect(existsSync(join(REPO, entry.types)), entry.types).toBe(true);
      expect(existsSync(join(REPO, entry.import)), entry.import).toBe(true);
    }
  });
});
