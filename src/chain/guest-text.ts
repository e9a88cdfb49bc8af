/**
 * The one scrubber for text that came out of guest code (exception messages, stacks, invalid-result
 * reasons): DESIGN §4.4 "raw guest text goes in details, truncated, with host paths removed". The
 * sandbox host applies it as text leaves an isolate; the executor applies it again to whatever an
 * invoker reports (any backend, any process), so the rule holds whichever path the text took. It is
 * idempotent: scrubbing scrubbed text changes nothing.
 */

/** Longest stack text handed out (DESIGN §4.4). */
export const STACK_MAX_CHARS = 4096;
/** Longest exception message handed out. */
export const MESSAGE_MAX_CHARS = 1024;

const BOUNDARY = "<isolated-vm boundary>";
// file:///…, /abs/path/…, C:\… and node:internal/… locations.
const HOST_PATH = /\b(?:file:\/\/\/?|node:)[^\s)]*|(?<![\w:/])\/(?:[\w.@+-]+\/)+[\w.@+-]*(?::\d+){0,2}|\b[A-Za-z]:\\[^\s)]*/g;
/** Room kept for the "… (N more chars)" marker inside the cap, so a scrubbed text never grows past it. */
const MARKER_ROOM = 24;

/**
 * Remove everything about the host from guest text: frames after isolated-vm's boundary marker are
 * host frames, prelude frames are ours, and any absolute path is replaced by `<host>`; then cut to
 * `maxChars` (marker included).
 *
 * @example
 * ```ts
 * sanitizeGuestText("Error: x\n    at f (vcp-bundle:///p.js:1:2)\n    at (<isolated-vm boundary>)\n    at /srv/app.js:3:4")
 * // "Error: x\n    at f (vcp-bundle:///p.js:1:2)"
 * ```
 */
export function sanitizeGuestText(text: string, maxChars: number = MESSAGE_MAX_CHARS): string {
  let out = text;
  const cut = out.indexOf(BOUNDARY);
  if (cut !== -1) {
    const lineStart = out.lastIndexOf("\n", cut);
    out = lineStart === -1 ? "" : out.slice(0, lineStart);
  }
  if (out.includes("vcp-prelude:")) {
    out = out
      .split("\n")
      .filter((l) => !l.includes("vcp-prelude:"))
      .join("\n");
  }
  // SECURITY: no host filesystem path leaves in a message or stack.
  out = out.replace(HOST_PATH, "<host>");
  if (out.length <= maxChars) return out;
  const kept = Math.max(0, maxChars - MARKER_ROOM);
  return `${out.slice(0, kept)}… (${out.length - kept} more chars)`;
}
