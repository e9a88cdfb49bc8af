// The sandbox's global `vcp` object (DESIGN §4.3), for type-checking the policies. Types only:
// nothing here is bundled. `vcp-hooks init` writes the same declarations as src/vcp-env.d.ts.
declare const vcp: {
  /** A log line (rate- and size-limited, redacted, tagged with bundle and hook). */
  log(level: "debug" | "info" | "warn" | "error", message: string, fields?: Record<string, unknown>): void;
  /** SHA-256 of the UTF-8 text, lowercase hex. */
  sha256(text: string): string;
  /** Wall-clock milliseconds since the epoch. */
  now(): number;
  /** system trust only (absent otherwise): fetch from the deployment's host allowlist; never an LLM endpoint. */
  fetch?: (url: string, init?: { method?: string; headers?: Record<string, string>; body?: string }) => Promise<{ status: number; headers: Record<string, string>; body: string }>;
};
