import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { chainRequestText } from "../../../src/chain/request-text.js";
import type { ChainRequest } from "../../../src/model/chain.js";
import { assertInputBounds, CHAIN_INPUT_ENVELOPES } from "../../../src/model/json-bounds.js";

const bounds = { maxDepth: 64, maxBytes: 1 << 20 };

/** What fire/vcp.ts does: bound the input fields, then splice their texts into the frame payload. */
function spliced(request: ChainRequest): string {
  const { context, constitution, event, session } = request;
  return chainRequestText(request, assertInputBounds({ context, constitution, event, session }, bounds, CHAIN_INPUT_ENVELOPES));
}

describe("chainRequestText (the sandbox frame's payload)", () => {
  it("is exactly JSON.stringify of the request, optional fields included or left out", () => {
    const base: ChainRequest = {
      chainId: "c-1",
      context: { text: "line\u2028sep \"quoted\" \\ é 🙂 \ud800", n: [1, 2.5, -0, 1e21], nested: { a: null, b: true } },
      constitution: { id: "k", rules: [] },
      event: { type: "pre_inject" },
      session: { id: "s" },
    } as unknown as ChainRequest;
    expect(spliced(base)).toBe(JSON.stringify(base));
    const keyed = { ...base, sessionKey: "owner\u0000s", deadlineMs: 250 };
    expect(spliced(keyed)).toBe(JSON.stringify(keyed));
    const withUndefined = { ...base, sessionKey: undefined } as unknown as ChainRequest;
    expect(spliced(withUndefined)).toBe(JSON.stringify(withUndefined));
  });

  it("equals JSON.stringify for arbitrary JSON input (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.jsonValue({ maxDepth: 4 }), fc.string(), fc.option(fc.string(), { nil: undefined }), (context, event, sessionId, sessionKey) => {
        const request = {
          chainId: "c",
          context,
          constitution: { id: "k", rules: [] },
          event,
          session: { id: sessionId },
          ...(sessionKey !== undefined ? { sessionKey } : {}),
        } as unknown as ChainRequest;
        expect(JSON.parse(spliced(request))).toEqual(JSON.parse(JSON.stringify(request)));
        expect(spliced(request)).toBe(JSON.stringify(request));
      }),
      { numRuns: 500 },
    );
  });

  it("sends the text that was bounded, not what the caller changed afterwards", () => {
    const context: Record<string, unknown> = { text: "checked" };
    const request = { chainId: "c", context, constitution: { id: "k", rules: [] }, event: {}, session: { id: "s" } } as unknown as ChainRequest;
    const texts = assertInputBounds({ context, constitution: request.constitution, event: request.event, session: request.session }, bounds);
    context.text = "x".repeat(10_000); // after the check, before the frame is written
    expect(JSON.parse(chainRequestText(request, texts)).context).toEqual({ text: "checked" });
  });
});
