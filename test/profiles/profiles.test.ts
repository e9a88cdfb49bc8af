// Profile conformance cases (PROFILES §4): every test/profiles/<dir>/*.yaml case, through the library
// and through the HTTP route (test/profiles/runner.ts). The toy `echo` profile (test/support/
// echo-profile.ts) is registered here, from test code only, in this process and — through
// profileModules — in the sandbox workers; every other case's profile must be in the catalogue.
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, test } from "vitest";
import { registerProfile } from "../../src/profile-kit.js";
import echoProfile from "../support/echo-profile.js";
import { createCaseRunner, loadProfileCases, ranHooks, type ProfileCase } from "./runner.js";

registerProfile(echoProfile);
const ECHO_MODULE = pathToFileURL(fileURLToPath(new URL("../support/echo-profile.ts", import.meta.url))).href;
const cases = loadProfileCases(fileURLToPath(new URL(".", import.meta.url)));
const runner = createCaseRunner({ profileModules: [ECHO_MODULE] });
afterAll(() => runner.close(), 60_000);

function check(c: ProfileCase, answer: { native: unknown; exit_code: number; stderr?: string; result: Parameters<typeof ranHooks>[0] }, via: string): void {
  const e = c.expect;
  if (e.native !== undefined) expect(answer.native, `${via}: native`).toEqual(e.native);
  if (e.native_subset !== undefined) expect(answer.native, `${via}: native (subset)`).toMatchObject(e.native_subset as object);
  if (e.exit_code !== undefined) expect(answer.exit_code, `${via}: exit_code`).toBe(e.exit_code);
  if (e.stderr !== undefined) expect(answer.stderr, `${via}: stderr`).toBe(e.stderr);
  if (e.ran !== undefined) expect(ranHooks(answer.result), `${via}: ran`).toEqual(e.ran);
  if (e.outcomes !== undefined) {
    const outcomes = Object.fromEntries(answer.result.hook_results.map((h) => [h.hook, h.outcome]));
    for (const [hook, outcome] of Object.entries(e.outcomes)) expect(outcomes[hook], `${via}: outcome of ${hook}`).toBe(outcome);
  }
}

describe("profile conformance cases", () => {
  test("there are cases to run", () => {
    expect(cases.length).toBeGreaterThan(0);
  });
  for (const c of cases) {
    test(`${c.file} › ${c.name}${c.upstream ? ` (${c.upstream})` : ""}`, async () => {
      const { library, http } = await runner.run(c);
      check(c, library, "library");
      expect(http.status, `http: status ${JSON.stringify(http.body)}`).toBe(200);
      check(c, http.body, "http");
      // ?answer=native (PROFILES §8.1): the native JSON alone, the exit code in a header. Compared with
      // the expectation (three runs of a case may differ in timing text, e.g. "timed out after N ms").
      if (c.expect.native !== undefined) expect(http.nativeBody, "http ?answer=native: body").toEqual(c.expect.native);
      else if (c.expect.native_subset !== undefined) expect(http.nativeBody, "http ?answer=native: body").toMatchObject(c.expect.native_subset as object);
      else expect(typeof http.nativeBody, "http ?answer=native: body").toBe("object");
      expect(http.exitHeader, "http ?answer=native: X-VCP-Exit-Code").toBe(String(c.expect.exit_code ?? library.exit_code));
    }, 60_000);
  }
});
