// Sessionless profile events and `isolation: per_session` guest state (PROFILES §8.3), through the real
// sandbox: without a session id a chain's per-session state is its own — per (principal, chain) — and
// it ends with the chain, so sessionless traffic never pushes a real session's context out of the
// sandbox's LRU (64 contexts per bundle). The HTTP form with two client tokens is the adversarial
// scenario bench/sandbox/scenarios/profile-sessionless-cross-tenant.ts.
import { afterAll, beforeAll, expect, test } from "vitest";
import { createRuntime, type Runtime } from "../../../src/index.js";
import { profileBundle } from "../../support/bundles.js";

let runtime: Runtime;
beforeAll(async () => {
  // One worker: every chain meets the same per-session contexts, so sharing (or eviction) would show.
  runtime = await createRuntime({ sandbox: { threads: 1 } });
  await runtime.bundles.install(
    profileBundle("memo-amp", "amplifier", [{ name: "memo", event: "tool:pre" }], {
      // Module state of a per_session bundle: the previous secret this context saw.
      memo: "(input) => { const previous = globalThis.last ?? 'none'; globalThis.last = input.data.secret; return { action: 'continue', user_message: 'previous: ' + previous }; }",
    }, { isolation: "per_session" }),
  );
}, 60_000);
afterAll(async () => {
  await runtime?.close();
});

const A = { id: "client-a", role: "client" } as const;
const B = { id: "client-b", role: "client" } as const;

async function said(secret: string, options: { session?: string; principal?: typeof A | typeof B } = {}): Promise<string> {
  const data = { secret, ...(options.session !== undefined ? { session_id: options.session } : {}) };
  const out = await runtime.fireProfile("amplifier", "tool:pre", { input: { event: "tool:pre", data }, ...(options.principal !== undefined ? { principal: options.principal } : {}) });
  const messages = out.native["user_messages"] as Array<{ message: string }>;
  return messages[0]!.message;
}

test("sessionless chains never share per_session state: not between principals, not between two chains of one caller", async () => {
  expect(await said("a-1", { principal: A })).toBe("previous: none");
  expect(await said("b-1", { principal: B })).toBe("previous: none");
  expect(await said("a-2", { principal: A })).toBe("previous: none");
  // The embedding application (no principal) and an empty session id are sessionless too.
  expect(await said("lib-1")).toBe("previous: none");
  expect(await said("lib-2", { session: "" })).toBe("previous: none");
}, 60_000);

test("sessionless traffic does not evict a session's per_session context: it keeps its state across 80 sessionless chains", async () => {
  expect(await said("kept-1", { session: "s-kept", principal: A })).toBe("previous: none");
  for (let i = 0; i < 80; i++) await said(`noise-${i}`, { principal: B });
  expect(await said("kept-2", { session: "s-kept", principal: A })).toBe("previous: kept-1");
}, 120_000);
