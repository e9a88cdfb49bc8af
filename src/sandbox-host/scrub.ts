/** Longest stack text handed out of the sandbox host (DESIGN §4.4). */
export const STACK_MAX_CHARS = 4096;
/** Longest exception message handed out of the sandbox host. */
export const MESSAGE_MAX_CHARS = 1024;

const BOUNDARY = "<isolated-vm boundary>";
// file:///…, /abs/path/…, C:\… and node:internal/… locations.
const HOST_PATH = /\b(?:file:\/\/\/?|node:)[^\s)]*|(?<![\w:/])\/(?:[\w.@+-]+\/)+[\w.@+-]*(?::\d+){0,2}|\b[A-Za-z]:\\[^\s)]*/g;

/**
 * Remove everything about the host from text that came out of an isolate: frames after isolated-vm's
 * boundary marker are host frames, prelude frames are ours, and any absolute path is replaced.
 *
 * @example
 * ```ts
 * scrubGuestText("Error: x\n    at f (vcp-bundle:///p.js:1:2)\n    at (<isolated-vm boundary>)\n    at /srv/app.js:3:4")
 * // "Error: x\n    at f (vcp-bundle:///p.js:1:2)"
 * ```
 */
export function scrubGuestText(text: string, max: number = STACK_MAX_CHARS): string {
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
  // SECURITY: no host filesystem path leaves the sandbox host in a message or stack.
  out = out.replace(HOST_PATH, "<host>");
  return out.length > max ? out.slice(0, max) : out;
}
