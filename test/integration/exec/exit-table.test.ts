// Every row of the exit-code tables (PROFILES §3.2 gemini-cli / llxprt, §3.3 claude-code, §3.5
// ai-memory), each produced by a real fixture script through the command lane and read by the
// profile's own `parseCommandResult` (from the catalogue; a profile without one is skipped and says so).
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, test } from "vitest";
import { runExecHook } from "../../../src/pool/exec/invoker.js";
import type { EventProfile } from "../../../src/profiles/types.js";
import type { CommandSpec } from "../../../src/pool/exec/run.js";
import { blocked, ROWS, text } from "./exit-rows.js";

const FIXTURE = join(resolve("test/integration/exec/fixtures"), "exit-code.sh");
const SHA = createHash("sha256").update(readFileSync(FIXTURE)).digest("hex");

/** The profile's own table, from the catalogue (EventProfile.parseCommandResult). */
async function findParser(profile: string): Promise<EventProfile["parseCommandResult"]> {
  const { getProfile } = await import("../../../src/profiles/index.js");
  const table = getProfile(profile).parseCommandResult;
  return table?.bind(getProfile(profile));
}

for (const profile of Object.keys(blocked)) {
  const parser = await findParser(profile);
  const rows = ROWS.filter((r) => r.expect[profile] !== undefined);
  describe.skipIf(parser === undefined)(`${profile} exit-code table${parser === undefined ? " (parseCommandResult not on this branch)" : ""}`, () => {
    test.each(rows.map((r) => [r.row, r] as const))("%s", async (_name, row) => {
      const spec: CommandSpec = {
        ...(row.timeout ? { command: "sleep 30", sha256: createHash("sha256").update("sleep 30").digest("hex"), shell: true } : { command: FIXTURE, sha256: SHA, args: row.args }),
        env_allow: ["PATH"],
        max_output_bytes: 65536,
        timeout_ms: row.timeout ? 200 : 10_000,
        term_grace_ms: 100,
      };
      const event = profile === "ai-memory" ? "pre_store" : profile === "claude-code" ? "PreToolUse" : profile === "repo-yaml" ? "PreAbilityCall" : "BeforeTool";
      const ran = await runExecHook("h", spec, "{}", { shellAllowed: true });
      expect(ran.refused).toBeUndefined();
      const run = parser!(ran.run!, "h", event);
      const want = row.expect[profile]!;
      expect(run.output).toBeDefined();
      expect(blocked[profile]!(run.output!), text(run.output!)).toBe(want.blocked);
      if (want.contains) expect(text(run.output!)).toContain(want.contains);
      if (want.lacks) expect(text(run.output!)).not.toContain(want.lacks);
    });
  });
}
