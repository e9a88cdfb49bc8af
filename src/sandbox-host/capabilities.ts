import { redactHead } from "../audit/redact.js";
import { createHash } from "node:crypto";
import { DEFAULT_JSON_DEPTH, jsonTextExceeds } from "../model/json-bounds.js";
import type { FetchPolicy, GuestLogLine } from "./types.js";

/** Longest text `vcp.sha256` hashes (characters); larger inputs are refused in the guest and here. */
export const SHA256_MAX_CHARS = 1 << 20;
/** `vcp.fetch` calls one hook call may start. */
export const FETCHES_PER_CALL = 8;

const LOG_LEVELS: ReadonlySet<string> = new Set(["debug", "info", "warn", "error"]);
/** Field names whose values never leave the sandbox in a log line. */
const SECRET_KEY = /pass(word|wd)?|secret|token|api[-_]?key|authori[sz]ation|cookie|credential|private[-_]?key/i;

/**
 * Cut `text` to at most `maxBytes` UTF-8 bytes without splitting a character.
 *
 * @example
 * ```ts
 * truncateUtf8("héllo", 2) // "h"
 * ```
 */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text, "utf8") <= maxBytes) return text;
  let out = Buffer.from(text, "utf8").subarray(0, maxBytes).toString("utf8");
  // A multi-byte character cut in half decodes as U+FFFD at the end.
  while (out.endsWith("\uFFFD") && !text.startsWith(out)) out = out.slice(0, -1);
  return out;
}

function redactReviver(key: string, value: unknown): unknown {
  // SECURITY: drop prototype-bearing keys so a later merge of these fields cannot pollute prototypes.
  if (key === "__proto__" || key === "constructor" || key === "prototype") return undefined;
  if (key !== "" && SECRET_KEY.test(key)) return "[REDACTED]";
  return value;
}

/**
 * Turn one guest `vcp.log` call (strings only, as the guest wrapper sent them) into a
 * {@link GuestLogLine}, or `undefined` when the arguments are malformed.
 *
 * @example
 * ```ts
 * buildLogLine("strip-pii", "strip_pii", "info", "done", '{"n":1}', 4096)
 * // { bundle: "strip-pii", hook: "strip_pii", level: "info", message: "done", fields: { n: 1 } }
 * ```
 */
export function buildLogLine(
  bundle: string,
  hook: string,
  level: unknown,
  message: unknown,
  fieldsJson: unknown,
  maxBytes: number,
  maxDepth: number = DEFAULT_JSON_DEPTH,
): GuestLogLine | undefined {
  // SECURITY: re-validate on the host; the guest wrapper is a convenience, not the enforcement.
  if (typeof level !== "string" || !LOG_LEVELS.has(level) || typeof message !== "string") return undefined;
  const line: GuestLogLine = {
    bundle,
    hook,
    level: level as GuestLogLine["level"],
    // SECURITY: secret shapes (bearer tokens, API keys, PEM keys, JWTs) are redacted BEFORE truncation,
    // so a secret cut at the size limit cannot slip through half-recognised; only the head that can be
    // kept is read (maxBytes bytes are at most maxBytes characters), whatever the guest sent.
    message: truncateUtf8(redactHead(message, maxBytes), maxBytes),
  };
  if (typeof fieldsJson === "string" && fieldsJson.length > 0) {
    if (Buffer.byteLength(fieldsJson, "utf8") > maxBytes) {
      line.fields = { _truncated: true };
    } else if (jsonTextExceeds(fieldsJson, maxDepth)) {
      // SECURITY: log lines are serialized in the worker and parsed by the runtime (src/pool/frames.ts),
      // both recursive: a field nested beyond the depth bound is replaced before it is ever parsed.
      line.fields = { _too_deep: true };
    } else {
      try {
        const parsed: unknown = JSON.parse(fieldsJson, redactReviver);
        if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) {
          line.fields = parsed as Record<string, unknown>;
        } else {
          line.fields = { value: parsed };
        }
      } catch {
        line.fields = { _unserializable: true };
      }
    }
  }
  return line;
}

/** SHA-256 hex of a guest string, or `""` when the input is refused. */
export function sha256Hex(text: unknown): string {
  // SECURITY: host-side size cap; the guest wrapper checks too, but the host does not rely on it.
  if (typeof text !== "string" || text.length > SHA256_MAX_CHARS) return "";
  return createHash("sha256").update(text, "utf8").digest("hex");
}

function normalizeHost(host: string): string {
  const h = host.trim().toLowerCase();
  return h.endsWith(".") ? h.slice(0, -1) : h;
}

/** A fetch policy prepared once per host: lower-cased, trailing dots removed. */
export interface CompiledFetchPolicy {
  readonly allow: ReadonlySet<string>;
  readonly denyLlm: readonly string[];
}

export function compileFetchPolicy(policy: FetchPolicy): CompiledFetchPolicy {
  return {
    allow: new Set(policy.allowHosts.map(normalizeHost)),
    denyLlm: policy.denyLlmHosts.map(normalizeHost),
  };
}

/**
 * Decide whether a `system`-trust bundle may fetch `url`. Runs before any I/O. The LLM denylist
 * (spec §5.5) wins over the allowlist and also covers subdomains; the allowlist is exact.
 *
 * @example
 * ```ts
 * checkFetchUrl(compileFetchPolicy({ allowHosts: ["api.example.com"], denyLlmHosts: ["api.openai.com"] }),
 *               "https://api.openai.com/v1/chat") // { ok: false, reason: "…LLM endpoint…" }
 * ```
 */
export function checkFetchUrl(
  policy: CompiledFetchPolicy,
  url: string,
): { ok: true; url: URL } | { ok: false; reason: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: "vcp.fetch: invalid URL" };
  }
  // SECURITY: only plain HTTP(S); no file:, data:, blob: or other schemes.
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    return { ok: false, reason: `vcp.fetch: scheme ${parsed.protocol} is not allowed` };
  }
  // SECURITY: credentials in the URL would leave the sandbox as data the operator did not configure.
  if (parsed.username !== "" || parsed.password !== "") {
    return { ok: false, reason: "vcp.fetch: credentials in the URL are not allowed" };
  }
  const host = normalizeHost(parsed.hostname);
  for (const llm of policy.denyLlm) {
    // SECURITY: spec §5.5 — LLM endpoints are refused even when allowlisted, subdomains included.
    if (host === llm || host.endsWith("." + llm)) {
      return { ok: false, reason: `vcp.fetch: ${host} is an LLM endpoint and is always refused (spec §5.5)` };
    }
  }
  // SECURITY: exact host match against the operator allowlist.
  if (!policy.allow.has(host)) {
    return { ok: false, reason: `vcp.fetch: host ${host} is not on the allowlist` };
  }
  return { ok: true, url: parsed };
}

const FETCH_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]);

/**
 * Perform one allowed fetch and encode the reply for the guest: a JSON object
 * `{"status","headers","body"}` on success, `"!" + message` on failure. Never throws.
 */
export async function performFetch(
  url: URL,
  initJson: string,
  timeoutMs: number,
  maxBodyBytes: number,
): Promise<string> {
  try {
    const init = JSON.parse(initJson) as { method?: unknown; headers?: unknown; body?: unknown };
    const method = typeof init.method === "string" ? init.method.toUpperCase() : "GET";
    if (!FETCH_METHODS.has(method)) return `!vcp.fetch: method ${method} is not allowed`;
    const headers: Record<string, string> = {};
    if (init.headers !== null && typeof init.headers === "object") {
      for (const [k, v] of Object.entries(init.headers as Record<string, unknown>)) {
        if (typeof v === "string") headers[k] = v;
      }
    }
    const res = await fetch(url, {
      method,
      headers,
      body: typeof init.body === "string" && method !== "GET" && method !== "HEAD" ? init.body : null,
      // SECURITY: never follow redirects; a redirect could lead to a host outside the allowlist.
      redirect: "manual",
      signal: AbortSignal.timeout(Math.max(1, timeoutMs)),
    });
    const chunks: Buffer[] = [];
    let size = 0;
    if (res.body !== null) {
      for await (const chunk of res.body) {
        size += (chunk as Uint8Array).byteLength;
        // SECURITY: cap the body copied into the isolate.
        if (size > maxBodyBytes) return `!vcp.fetch: response body exceeds ${maxBodyBytes} bytes`;
        chunks.push(Buffer.from(chunk as Uint8Array));
      }
    }
    const outHeaders: Record<string, string> = {};
    res.headers.forEach((v, k) => {
      if (k !== "set-cookie") outHeaders[k] = v;
    });
    return JSON.stringify({ status: res.status, headers: outHeaders, body: Buffer.concat(chunks).toString("utf8") });
  } catch (err) {
    const name = err instanceof Error ? err.name : "Error";
    return `!vcp.fetch failed: ${name === "TimeoutError" ? "timed out" : name}`;
  }
}
