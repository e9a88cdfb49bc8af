/**
 * Fixed, seeded bench fixtures (STYLE.md "Benches"): a ≈2 KB VCP context, a constitution and a
 * pre_inject event. Same seed, same bytes, every run.
 */
import type { Constitution, PreInjectEvent } from "../../src/index.js";

/** mulberry32: small, fast, good enough for fixture generation. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  "account balance transfer policy review summary request customer order invoice refund shipping " +
  "address privacy consent medical record appointment schedule travel booking hotel flight budget " +
  "report quarterly revenue forecast contract clause renewal deadline meeting notes follow up draft"
).split(" ");

function sentence(rand: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(WORDS[Math.floor(rand() * WORDS.length)]!);
  return out.join(" ");
}

/** A context of about `targetBytes` of JSON (default 2048), deterministic for a seed. */
export function makeContext(seed = 42, targetBytes = 2048): Record<string, unknown> {
  const rand = seededRandom(seed);
  const conversation: Array<{ role: string; text: string; ts: number }> = [];
  const context: Record<string, unknown> = {
    user: { id: `u-${Math.floor(rand() * 1e6)}`, tier: rand() < 0.5 ? "free" : "pro", locale: "en-GB", age_band: "25-34" },
    dimensions: {
      data_sensitivity: Math.floor(rand() * 11),
      formality: Math.floor(rand() * 11),
      emotional_intensity: Math.floor(rand() * 11),
      domain: "finance",
    },
    recent_topics: Array.from({ length: 8 }, () => WORDS[Math.floor(rand() * WORDS.length)]!),
    flags: { beta: rand() < 0.5, verified: true, region: "eu-west" },
    conversation,
  };
  // Grow the conversation until the JSON reaches the target, then trim the last message to fit.
  for (let i = 0; JSON.stringify(context).length < targetBytes; i++) {
    conversation.push({ role: i % 2 === 0 ? "user" : "assistant", text: sentence(rand, 8 + Math.floor(rand() * 12)), ts: 1_760_000_000 + i * 37 });
  }
  const last = conversation[conversation.length - 1]!;
  const over = JSON.stringify(context).length - targetBytes;
  if (over > 0 && over < last.text.length) last.text = last.text.slice(0, last.text.length - over);
  return context;
}

export const constitution: Constitution = {
  id: "c-bench",
  version: "1.0.0",
  rules: [
    { id: "no-harm-1", text: "Do not help cause physical harm.", safety_critical: true },
    { id: "privacy-1", text: "Do not reveal personal data of third parties.", safety_critical: true },
    { id: "tone-1", text: "Be courteous." },
  ],
};

export const preInjectEvent: PreInjectEvent = {
  injection_target: "system",
  injection_format: "system_prompt",
  raw_constitution: "Do not help cause physical harm. Do not reveal personal data of third parties. Be courteous.",
};

export const SESSION = { id: "bench-session-1" };

/** Events of the other hook types the bench uses (OOM, memory and empty-chain scenarios). */
export const otherEvents = {
  on_transition: { previous_state: "professional", new_state: "personal", trigger: "user_said_hi", transition_metadata: {} },
  on_conflict: {
    conflicting_rules: [{ rule_a: { id: "a", text: "x" }, rule_b: { id: "b", text: "not x" }, conflict_type: "contradiction" as const }],
    composition_strategy: "most_restrictive",
    conflict_severity: "error" as const,
  },
  on_violation: {
    output: "bad output",
    violated_rules: [{ id: "tone-1", text: "Be courteous." }],
    severity: "major" as const,
    violation_evidence: "rude",
    retry_count: 0,
  },
  periodic: { elapsed_ms: 1000, interval_ms: 1000, tick_count: 1 },
};
