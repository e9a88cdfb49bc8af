import { redactSecrets } from "../../safe-shell-rules.js";

/**
 * ai-memory guard (alphaonedev/ai-memory-mcp `src/hooks/`): a memory whose content holds a secret is
 * refused with code 451 before it is stored; every stored memory gets the `guarded` tag (a `modify`
 * delta, which only `pre_` events accept); recall from the `credentials` namespace is refused.
 */

/** ai-memory's hook envelope. */
export interface MemoryEnvelope {
  event: string;
  payload: { title?: string; content?: string; namespace?: string; tags?: string[]; query?: string; [key: string]: unknown };
}

/** ai-memory's decision (`undefined`/`{}` allow too). */
export type MemoryDecision =
  | { action: "allow" }
  | { action: "modify"; delta: Record<string, unknown> }
  | { action: "deny"; reason: string; code?: number }
  | { action: "ask_user"; prompt: string; options: string[]; default?: string };

/** 451: unavailable for legal reasons, ai-memory's code for content a policy refuses to keep. */
export const SECRET_DENY_CODE = 451;

/** pre_store: a title or content with a key, token or private key is refused. */
export function refuseSecrets(input: MemoryEnvelope): MemoryDecision {
  for (const field of ["title", "content"] as const) {
    const text = input.payload[field];
    if (typeof text !== "string") continue;
    const kinds = Object.keys(redactSecrets(text).found).sort();
    if (kinds.length > 0) return { action: "deny", reason: `the memory's ${field} contains a secret (${kinds.join(", ")}); store a reference instead`, code: SECRET_DENY_CODE };
  }
  return { action: "allow" };
}

/** pre_store: add the `guarded` tag (once) to what is stored. */
export function tagGuarded(input: MemoryEnvelope): MemoryDecision {
  const tags = Array.isArray(input.payload.tags) ? input.payload.tags.filter((t) => typeof t === "string") : [];
  if (tags.includes("guarded")) return { action: "allow" };
  return { action: "modify", delta: { tags: [...tags, "guarded"] } };
}

/** pre_recall: nothing comes back from the credentials namespace; everything else is allowed. */
export function guardRecall(input: MemoryEnvelope): MemoryDecision {
  const ns = input.payload.namespace;
  if (typeof ns === "string" && (ns === "credentials" || ns.startsWith("credentials/"))) return { action: "deny", reason: "recall from the credentials namespace is not allowed", code: 403 };
  return { action: "allow" };
}
