// Which sandbox host file the supervisor forks (issue 11 defect 10): tests import the runtime from the
// sources, and it must start the compiled host from dist/, or say clearly why it cannot.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, test } from "vitest";
import { VcpError } from "../../../src/errors.js";
import { resolveHostEntry } from "../../../src/pool/host-entry.js";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A checkout: `files` relative to its root, each written with the given mtime (seconds). */
function checkout(files: Record<string, number>): string {
  const root = mkdtempSync(join(tmpdir(), "vcp-host-entry-"));
  roots.push(root);
  for (const [path, mtime] of Object.entries(files)) {
    const full = join(root, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, "");
    utimesSync(full, mtime, mtime);
  }
  return root;
}

const sourcesUrl = (root: string) => pathToFileURL(join(root, "src", "pool", "host-entry.ts")).href;

function refusal(root: string): VcpError {
  try {
    resolveHostEntry(sourcesUrl(root));
  } catch (err) {
    expect(err).toBeInstanceOf(VcpError);
    return err as VcpError;
  }
  throw new Error("expected resolveHostEntry to refuse");
}

describe("resolveHostEntry", () => {
  test("compiled: the host-main.js beside the module", () => {
    expect(resolveHostEntry("file:///app/node_modules/vcp-hooks/dist/src/pool/host-entry.js")).toBe("/app/node_modules/vcp-hooks/dist/src/pool/host-main.js");
  });

  test("from sources with a fresh build: dist/src/pool/host-main.js of the same checkout", () => {
    const root = checkout({
      "src/pool/host-entry.ts": 1000, "src/pool/host-main.ts": 1000, "src/chain/execute.ts": 1000, "src/index.d.ts": 5000,
      "dist/src/pool/host-entry.js": 2000, "dist/src/pool/host-main.js": 2000, "dist/src/chain/execute.js": 2000,
    });
    expect(resolveHostEntry(sourcesUrl(root))).toBe(join(root, "dist", "src", "pool", "host-main.js"));
  });

  test("from sources without a build: SANDBOX_START_FAILED naming the missing file and `npm run build`", () => {
    const err = refusal(checkout({ "src/pool/host-entry.ts": 1000, "src/pool/host-main.ts": 1000 }));
    expect(err.code).toBe("SANDBOX_START_FAILED");
    expect(err.message).toContain("dist/src/pool/host-main.js is missing");
    expect(err.message).toContain("npm run build");
  });

  test("from sources with a build older than a source: SANDBOX_START_FAILED naming the source and `npm run build`", () => {
    const root = checkout({
      "src/pool/host-entry.ts": 1000, "src/pool/host-main.ts": 1000, "src/chain/execute.ts": 3000, "src/model/new-thing.ts": 1000,
      "dist/src/pool/host-entry.js": 2000, "dist/src/pool/host-main.js": 2000, "dist/src/chain/execute.js": 2000,
    });
    const err = refusal(root);
    expect(err.code).toBe("SANDBOX_START_FAILED");
    expect(err.message).toMatch(/older than the sources \(src\/chain\/execute\.ts, src\/model\/new-thing\.ts \(not built\) changed since the build\): run `npm run build`/);
    expect(err.details).toMatchObject({ stale: ["src/chain/execute.ts", "src/model/new-thing.ts (not built)"] });
  });
});
