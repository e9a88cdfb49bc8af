import { expect, test } from "vitest";
import { compareVersions } from "../../../src/bundle/version.js";

// semver.org §11 precedence examples, plus multi-digit components compared numerically.
const ORDERED = ["0.9.9", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.2.0", "1.10.0", "2.0.0", "10.0.0"];

test.each(ORDERED.slice(1).map((v, i) => [ORDERED[i]!, v]))("%s < %s", (lower, higher) => {
  expect(compareVersions(lower, higher)).toBeLessThan(0);
  expect(compareVersions(higher, lower)).toBeGreaterThan(0);
});

test("build metadata does not change precedence", () => {
  expect(compareVersions("1.0.0+build.1", "1.0.0+build.2")).toBe(0);
  expect(compareVersions("1.0.0", "1.0.0")).toBe(0);
});
