// The sandbox's code directory (src/pool/code-store.ts): an owned temporary directory goes with the
// process even when nothing closes the runtime — the one-shot `hook --embedded` adapter exits at its
// deadline while the runtime may still be starting, and must not leave bundle code in /tmp per call.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, expect, test } from "vitest";

const own = mkdtempSync(join(tmpdir(), "vcp-code-store-test-"));
afterAll(() => rmSync(own, { recursive: true, force: true }));

test("a process that exits without remove() leaves no vcp-sandbox-* directory behind; a caller's directory stays", () => {
  // A plain-Node child loads the build, by path (npm run build first).
  const url = pathToFileURL(resolve("dist/src/pool/code-store.js")).href;
  const kept = join(own, "kept");
  const script = `
    const { CodeStore } = await import(${JSON.stringify(url)});
    const temporary = new CodeStore(undefined);
    new CodeStore(${JSON.stringify(kept)});
    console.log(temporary.dir);
    process.exit(0);`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { env: { ...process.env, TMPDIR: own }, encoding: "utf8" });
  expect(r.status, r.stderr).toBe(0);
  const dir = r.stdout.trim();
  expect(dir.startsWith(join(own, "vcp-sandbox-"))).toBe(true);
  expect(existsSync(dir)).toBe(false);
  expect(readdirSync(own)).toEqual(["kept"]);
});
