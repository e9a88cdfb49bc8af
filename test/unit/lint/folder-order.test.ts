// The folder order of eslint.config.js (FOLDER_ORDER, issue 25): an import against the direction of
// the table is a lint error, so a cycle between folders cannot come back unnoticed.
import { join } from "node:path";
import { ESLint } from "eslint";
import { describe, expect, test } from "vitest";

const root = join(import.meta.dirname, "../../..");
const eslint = new ESLint({ cwd: root });

/** The folder-order findings for `code` as if it were the file `file` of the repository. */
async function folderOrder(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, file) });
  return result!.messages.filter((m) => m.ruleId === "vcp/folder-order").map((m) => m.message);
}

describe("folder order (eslint.config.js FOLDER_ORDER)", () => {
  test("a bottom folder importing the runtime is an error naming both rows", async () => {
    const found = await folderOrder("src/model/x.ts", 'import type { Runtime } from "../runtime/runtime.js";\nexport type X = Runtime;\n');
    expect(found).toEqual([expect.stringMatching(/^model may not import runtime: runtime is on row \d+ of FOLDER_ORDER .*model on row \d+/)]);
  });

  test("the store importing the runtime (the cycle issue 25 removed) is an error, type-only and dynamic imports too", async () => {
    const found = await folderOrder("src/store/x.ts", [
      'import type { Runtime } from "../runtime/types.js";',
      'export type T = Runtime | typeof import("../runtime/runtime.js");',
      'export const later = () => import("../runtime/runtime.js");',
      'export { createRuntime } from "../runtime/runtime.js";',
    ].join("\n"));
    expect(found).toHaveLength(4);
    for (const message of found) expect(message).toMatch(/^store may not import runtime/);
  });

  test("the fire path and the installed bundles sit below the runtime wiring: neither may import it", async () => {
    expect(await folderOrder("src/fire/x.ts", 'import type { RuntimeOptions } from "../runtime/types.js";\nexport type X = RuntimeOptions;\n')).toEqual([expect.stringMatching(/^fire may not import runtime/)]);
    expect(await folderOrder("src/install/x.ts", 'export { createChainFirer } from "../fire/vcp.js";\n')).toEqual([expect.stringMatching(/^install may not import fire/)]);
    expect(await folderOrder("src/runtime/x.ts", 'export { createChainFirer } from "../fire/vcp.js";\n')).toEqual([]);
  });

  test("two parts of one row may not import each other (no cycle within a row)", async () => {
    expect(await folderOrder("src/pipeline/x.ts", 'export { x } from "../sandbox-host/x.js";\n')).toHaveLength(1);
  });

  test("a file placed apart from its folder is its own part: observe/events.ts may not import the observe modules above it", async () => {
    expect(await folderOrder("src/observe/events.ts", 'export { createMetrics } from "./metrics.js";\n')).toEqual([expect.stringMatching(/^observe\/events\.ts may not import observe:/)]);
    expect(await folderOrder("src/observe/metrics.ts", 'export type { Logger } from "./events.js";\n')).toEqual([]);
  });

  test("imports down the table, and within a part, are allowed; '../index.js' in a profile is the profiles index", async () => {
    expect(await folderOrder("src/runtime/x.ts", 'export { IDENTIFIER } from "../model/names.js";\nexport { VcpError } from "../errors.js";\n')).toEqual([]);
    expect(await folderOrder("src/profiles/amplifier/x.ts", 'export { getProfile } from "../index.js";\n')).toEqual([]);
    expect(await folderOrder("src/store/x.ts", 'export { createApprovals } from "../pipeline/approvals.js";\n')).toEqual([]);
  });

  test("no profile file reads chain/, the VCP descriptor included: the chain's record types are in model/", async () => {
    for (const file of ["src/profiles/vcp/chain.ts", "src/profiles/types.ts", "src/profiles/common/condition-fields.ts", "src/profiles/amplifier/x.ts"]) {
      const up = file.split("/").length - 2;
      const chain = `${"../".repeat(up)}chain/plan.js`;
      expect(await folderOrder(file, `export type { ChainPlan } from "${chain}";\n`)).toEqual([expect.stringMatching(/^profiles may not import chain/)]);
    }
    expect(await folderOrder("src/profiles/vcp/chain.ts", 'export type { ChainRequest } from "../../model/chain.js";\n')).toEqual([]);
  });

  test("a folder missing from the table must be placed before it is imported", async () => {
    expect(await folderOrder("src/chain/x.ts", 'export { y } from "../brand-new/y.js";\n')).toEqual([expect.stringContaining("brand-new is not on a row of FOLDER_ORDER")]);
  });
});
