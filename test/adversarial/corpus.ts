/**
 * The corpus loader lives in bench/sandbox/corpus.ts: the adversarial suite and the sandbox bench
 * (`vcp-hooks bench sandbox`) must read the corpus the same way.
 */
export * from "../../bench/sandbox/corpus.js";
