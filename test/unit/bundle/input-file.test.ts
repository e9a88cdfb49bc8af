// The one rule for reading a user's file (src/bundle/input-file.ts): a regular file within its bound,
// checked on the opened descriptor before a byte is read; anything else INPUT_FILE_REFUSED naming it.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { assertInside, checkInputFile, readInputFile, readInputFileSync } from "../../../src/bundle/input-file.js";
import { VcpError } from "../../../src/errors.js";

const dir = realpathSync(mkdtempSync(join(tmpdir(), "vcp-input-file-")));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function refusal(fn: () => unknown): VcpError {
  try {
    fn();
  } catch (err) {
    if (err instanceof VcpError) return err;
    throw err;
  }
  throw new Error("not refused");
}

describe("readInputFile", () => {
  test("a regular file (or a link to one) is read whole", async () => {
    writeFileSync(join(dir, "a.yaml"), "bundle: a\n");
    symlinkSync(join(dir, "a.yaml"), join(dir, "link.yaml"));
    expect((await readInputFile(join(dir, "link.yaml"), 1024, "the manifest")).toString()).toBe("bundle: a\n");
    expect(readInputFileSync(join(dir, "a.yaml"), 1024, "the manifest").toString()).toBe("bundle: a\n");
  });

  // Each would block forever (FIFO) or never end (/dev/zero) if read.
  test.each([
    ["a FIFO", () => { execFileSync("mkfifo", [join(dir, "pipe")]); return join(dir, "pipe"); }, /is a FIFO \(named pipe\), not a regular file/],
    ["a character device", () => "/dev/zero", /is a character device, not a regular file/],
    ["a directory", () => { mkdirSync(join(dir, "d")); return join(dir, "d"); }, /is a directory, not a regular file/],
    ["a 600 MB sparse file", () => { execFileSync("truncate", ["-s", "600M", join(dir, "sparse")]); return join(dir, "sparse"); }, /is 629145600 bytes; at most 1048576 bytes are read/],
  ])("%s is refused, naming the path, before it is read", async (_what, make, rule) => {
    const path = make();
    const err = await readInputFile(path, 1024 * 1024, "the keyring").then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(VcpError);
    expect((err as VcpError).code).toBe("INPUT_FILE_REFUSED");
    expect((err as VcpError).message).toMatch(new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}: the keyring `));
    expect((err as VcpError).message).toMatch(rule);
    expect((err as VcpError).details).toMatchObject({ file: path, limit: 1024 * 1024 });
    expect(refusal(() => readInputFileSync(path, 1024 * 1024, "the keyring")).code).toBe("INPUT_FILE_REFUSED");
    await expect(checkInputFile(path, 1024 * 1024, "the keyring")).rejects.toMatchObject({ code: "INPUT_FILE_REFUSED" });
  }, 20_000);

  test("a missing file is the system's error, for the caller's own message", async () => {
    await expect(readInputFile(join(dir, "nope"), 10, "x")).rejects.toMatchObject({ code: "ENOENT" });
  });
});

describe("assertInside", () => {
  test("a link inside the directory resolves; one leading out of it is refused naming where it leads", () => {
    const root = join(dir, "hooks");
    mkdirSync(root);
    writeFileSync(join(root, "a.yaml"), "x");
    writeFileSync(join(dir, "outside.yaml"), "x");
    symlinkSync(join(root, "a.yaml"), join(root, "in.yaml"));
    symlinkSync(join(dir, "outside.yaml"), join(root, "out.yaml"));
    expect(assertInside(join(root, "in.yaml"), root, "hook file")).toBe(join(root, "a.yaml"));
    const err = refusal(() => assertInside(join(root, "out.yaml"), root, "hook file"));
    expect(err.code).toBe("INPUT_FILE_REFUSED");
    expect(err.message).toBe(`${join(root, "out.yaml")}: hook file resolves to ${join(dir, "outside.yaml")}, outside ${root}; nothing was read`);
  });
});
