import type { ChainRequest } from "../model/chain.js";

/**
 * The JSON text of a chain request, spliced from the texts the input bounds check made of its fields
 * (`assertInputBounds` returns them): the text `JSON.stringify(request)` would make, without
 * serializing the 2–3 KB of input a second time. The fields the check did not see (chain id, session
 * key, deadline) are serialized here, in the request's own key order.
 *
 * It also closes a window: the sandbox receives exactly the text that was bounded, even if the
 * caller changes its objects while the chain waits for a thread.
 *
 * @example
 * ```ts
 * const texts = assertInputBounds({ context, constitution, event, session }, bounds);
 * chainRequestText({ chainId, context, constitution, event, session }, texts) === JSON.stringify(request); // true
 * ```
 */
export function chainRequestText(request: ChainRequest, fieldTexts: Readonly<Record<string, string>>): string {
  let text = "{";
  for (const key of Object.keys(request) as (keyof ChainRequest)[]) {
    const value = request[key];
    if (value === undefined) continue;
    // SECURITY: a field the bounds check saw travels as the text it checked.
    const valueText = Object.hasOwn(fieldTexts, key) ? fieldTexts[key]! : JSON.stringify(value);
    text += `${text.length > 1 ? "," : ""}${JSON.stringify(key)}:${valueText}`;
  }
  return `${text}}`;
}
