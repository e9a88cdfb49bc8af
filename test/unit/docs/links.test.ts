// Issue 25 item 5, "a map a newcomer can read": the README stays short (what it is, quick start, one
// example per audience, links) and everything else lives in docs/. These tests keep it that way: the
// README's length, every relative link of the README, CONTRIBUTING.md and docs/*.md landing on a file
// (and on a heading, for `#anchor` links), and the docs index naming every page.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, test } from "vitest";

const ROOT = resolve(import.meta.dirname, "../../..");
const README_MAX_LINES = 300;
const PAGES = ["README.md", "CONTRIBUTING.md", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

/** Markdown without its fenced code blocks: a `# comment` in a shell block is not a heading. */
function withoutFences(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
}

/** Markdown without any code, fenced or inline: a `[x](y)` inside code is not a link. */
function prose(markdown: string): string {
  return withoutFences(markdown).replace(/`[^`\n]*`/g, "");
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to `-`, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const m of withoutFences(markdown).matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = m[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

/** Relative link targets of a page: `[text](target)` and `![alt](target)`, no URLs. */
function relativeLinks(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!).filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

describe("README.md and docs/", () => {
  test(`README.md is at most ${README_MAX_LINES} lines`, () => {
    const lines = readFileSync(join(ROOT, "README.md"), "utf8").split("\n").length - 1;
    expect(lines, "README.md grew: move the detail to a page under docs/ and link it").toBeLessThanOrEqual(README_MAX_LINES);
  });

  test.each(PAGES)("every relative link of %s lands on a file, and on a heading when it names one", (page) => {
    const from = join(ROOT, page);
    const broken: string[] = [];
    for (const link of relativeLinks(readFileSync(from, "utf8"))) {
      const [path, anchor] = link.split("#") as [string, string | undefined];
      const target = path === "" ? from : resolve(dirname(from), decodeURI(path));
      // The contracts (DESIGN.md, PROFILES.md, STYLE.md, the spec) live beside the repository, in
      // ../shared/, which a clone does not have: such links are not this repository's to check.
      if (relative(ROOT, target).startsWith("..")) continue;
      if (!existsSync(target)) {
        broken.push(`${link}: no file ${relative(ROOT, target)}`);
        continue;
      }
      if (anchor !== undefined && anchor !== "" && target.endsWith(".md") && statSync(target).isFile() && !anchorsOf(readFileSync(target, "utf8")).has(anchor)) {
        broken.push(`${link}: no heading #${anchor} in ${relative(ROOT, target)}`);
      }
    }
    expect(broken).toEqual([]);
  });

  test("docs/README.md, the index, links every page of docs/", () => {
    const index = readFileSync(join(ROOT, "docs/README.md"), "utf8");
    const linked = new Set(relativeLinks(index).map((link) => link.split("#")[0]!));
    const pages = readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md") && f !== "README.md");
    expect(pages.filter((page) => !linked.has(page)), "add the page to docs/README.md").toEqual([]);
  });

  test("the link checker finds a broken link and a missing heading", () => {
    // The checks above must be able to fail: a made-up page's links, resolved as they resolve.
    expect(relativeLinks("see [a](docs/nope.md) and [b](https://example.org) `[c](d)`\n```\n[e](f)\n```\n")).toEqual(["docs/nope.md"]);
    expect(anchorsOf("# Install: package, container\n## Several replicas (`store: redis`)\n## Several replicas (`store: redis`)\n")).toEqual(
      new Set(["install-package-container", "several-replicas-store-redis", "several-replicas-store-redis-1"]),
    );
  });
});

describe("the README's quick start is what CI and the scripts run", () => {
  // CI (.ci/run) runs "the README's test command"; the quick start promises one command that sets up
  // and serves the embedded default, and one that runs every test.
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const quickStart = /^## Quick start\n([\s\S]*?)^## /m.exec(readme)?.[1] ?? "";
  const commands = [...quickStart.matchAll(/^```sh\n([\s\S]*?)^```/gm)].flatMap((m) => m[1]!.split("\n")).map((line) => line.replace(/\s+#.*$/, "").trim());
  const scripts = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;

  test("npm ci && npm start serves the embedded default; npm test runs every test, and CI runs it", () => {
    expect(commands).toContain("npm ci && npm start");
    expect(commands).toContain("npm test");
    expect(scripts["start"]).toMatch(/npm run build && node dist\/src\/cli\/serve\.js$/);
    expect(scripts["test"]).toBe("npm run build && vitest run");
    expect(readFileSync(join(ROOT, ".ci/run"), "utf8")).toMatch(/^npm test\b/m);
  });
});
