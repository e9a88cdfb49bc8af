// A VS Code updatedInput that does not fit the tool's input schema (profiles/vscode/tool-schemas.ts) is
// the hook's invalid output: besides the native answer (test/profiles/vscode/updated-input-*.yaml), the
// hook record says why and the decision record counts it, through the library and the route alike.
import { fileURLToPath } from "node:url";
import { afterAll, expect, test } from "vitest";
import { createCaseRunner, loadProfileCases, type ProfileCase } from "../../profiles/runner.js";

const cases = loadProfileCases(fileURLToPath(new URL("../../profiles/", import.meta.url)));
const runner = createCaseRunner();
afterAll(() => runner.close(), 60_000);

const caseOf = (file: string): ProfileCase => cases.find((c) => c.file === `vscode/${file}`)!;
const WHY = "hookSpecificOutput.updatedInput.content: is required (the input schema of VS Code's create_file tool)";

test("fail-open: the rewrite is dropped, the hook record keeps why, the decision record counts an error", async () => {
  const { library, http } = await runner.run(caseOf("updated-input-misfit-fail-open.yaml"));
  for (const [via, answer] of [["library", library], ["http", http.body]] as const) {
    expect(answer.result.hook_results[0], via).toMatchObject({ hook: "rewriter", outcome: "invalid_result", verdict: "ask", error: WHY });
    expect(answer.decision, via).toMatchObject({ outcome: "ask", errors: 1, hooks: [{ hook: "rewriter", outcome: "invalid_result", verdict: "ask" }] });
  }
}, 60_000);

test("fail_closed: the deny names the hook and the field, and is the decision", async () => {
  const { library } = await runner.run(caseOf("updated-input-wrong-type-fail-closed.yaml"));
  const why = "hookSpecificOutput.updatedInput.isBackground: must be a boolean (the input schema of VS Code's run_in_terminal tool)";
  expect(library.result.hook_results[0]).toMatchObject({ hook: "rewriter", outcome: "invalid_result", verdict: "block", error: why });
  expect(library.decision).toMatchObject({ outcome: "block", errors: 1, reason: `fail-closed: rewriter: ${why}`, decided_by: { hook: "rewriter" } });
}, 60_000);
