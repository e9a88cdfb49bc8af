import { test, expect } from "vitest";
test("runs on node 24 with isolated-vm", async () => {
  expect(Number(process.versions.node.split(".")[0])).toBeGreaterThanOrEqual(24);
  const ivm = (await import("isolated-vm")).default;
  const iso = new ivm.Isolate({ memoryLimit: 16 });
  expect(iso.compileScriptSync("6*7").runSync(iso.createContextSync())).toBe(42);
});
