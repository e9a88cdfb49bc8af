// Profile matcher globs compile to RE2 (src/profiles/common/glob.ts): the same answers picomatch
// gave for the globs users write, and no backtracking blow-up for globs written to be slow.
import picomatch from "picomatch";
import { describe, expect, it } from "vitest";
import { compileGlob, GlobError, MAX_GLOB_LENGTH } from "../../../../src/profiles/common/glob.js";
import { compileRepoYamlFilter } from "../../../../src/profiles/repo-yaml/filter.js";

const CASES: Array<[string, string[]]> = [
  ["fs.*", ["fs.write", "fs.", "fs", "fsXwrite", "fs.a/b", "net.get"]],
  ["billing_*", ["billing_charge", "billing", "billing_/x"]],
  ["services/**", ["services/a.ts", "services/a/b/c.ts", "services", "servicesx/a", "apps/a"]],
  ["**/*.md", ["README.md", "docs/a.md", "docs/x/y.md", "docs/a.mdx", "a.txt"]],
  ["src/**/test/*.ts", ["src/test/a.ts", "src/x/y/test/a.ts", "src/x/test/a/b.ts"]],
  ["*.{ts,js}", ["a.ts", "a.js", "a.tsx", "d/a.ts"]],
  ["file?.txt", ["file1.txt", "file12.txt", "file/.txt"]],
  ["[a-c]x", ["ax", "cx", "dx", "/x"]],
  ["team/*", ["team/a", "team/a/b", "team", "teams/a"]],
  ["*", ["anything", "a/b", ""]],
  ["a\\*b", ["a*b", "axb"]],
  ["!fs.*", ["fs.write", "net.get"]],
];

describe("compileGlob", () => {
  for (const [glob, texts] of CASES) {
    it(`${glob} answers as picomatch (dot: true) did`, () => {
      const mine = compileGlob(glob);
      const theirs = picomatch(glob, { dot: true });
      for (const text of texts) expect(mine(text), `${glob} vs ${JSON.stringify(text)}`).toBe(theirs(text));
    });
  }

  it("[!…] is a negated class (never '/')", () => {
    const t = compileGlob("[!a-c]x");
    expect([t("ax"), t("dx"), t("/x")]).toEqual([false, true, false]);
  });

  it("a glob built to backtrack matches a long ability id at once (picomatch takes minutes)", () => {
    // picomatch: *a*a…*b against 30 'a's took 1.3 s here, and grows as C(n, 10).
    const slow = `${"*a".repeat(40)}*b`;
    const test = compileGlob(slow);
    expect(test("a".repeat(5000))).toBe(false);
    expect(test(`${"a".repeat(5000)}b`)).toBe(true);
    const filter = compileRepoYamlFilter({ ability_scope: slow, only_if_changed_paths: [`**/${slow}`] }, "PreAbilityCall");
    expect(filter({ ability_id: "a".repeat(10_000), changed_files: ["a".repeat(10_000)] })).toBe(false);
  });

  it("refuses a glob over the length cap and malformed ones, naming why", () => {
    expect(() => compileGlob("a".repeat(MAX_GLOB_LENGTH + 1))).toThrow(GlobError);
    expect(() => compileGlob("a".repeat(MAX_GLOB_LENGTH + 1))).toThrow(/limit is 1024/);
    expect(() => compileGlob("{a,b")).toThrow(/unclosed/);
    expect(() => compileGlob("a\\")).toThrow(/backslash/);
    expect(() => compileRepoYamlFilter({ ability_scope: "{fs" }, "PreAbilityCall")).toThrow(/match\.ability_scope: .* is not a valid glob: has an unclosed/);
  });
});
