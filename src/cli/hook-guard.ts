/**
 * What the drop-in adapter (hook.ts) knows of a server's `fail_closed` guards, so that `--on-error auto`
 * can block where the policy would have blocked when the server cannot answer (issue 24):
 *
 *   successful envelope ─ guard: { revisions, fail_closed_events } ─► writeGuard ─► guard-<hash>.json
 *   server down / timeout / 4xx / 5xx / garbage ─► readGuard ─► event listed?  block : warn
 *                                                      └─ no file (or unreadable) ─► tool event? block : warn
 *                                                         (src/tooling/guard-events.ts)
 *
 * The file lives under the user's cache directory ($XDG_CACHE_HOME, else ~/.cache), one per (server URL,
 * profile): `vcp-hooks/guard-<16 hex>.json`. It is a hint written by the server's own answers, signed by
 * nothing: whoever can write the user's cache directory can also edit the agent's settings, so it is
 * trusted as much as they are; a file that does not parse or names another server is ignored (missing).
 *
 * Node builtins only, and no node:crypto (about 10 ms of the adapter's cold start): the file name's
 * hash is FNV-1a, and the file repeats the server and profile it is for, checked on every read.
 */
import { closeSync, constants, fstatSync, mkdirSync, openSync, readSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { isToolEvent } from "../tooling/guard-events.js";

export { isToolEvent };

/** The `guard` member of the route's envelope (server contract of issue 24). */
export interface GuardFacts {
  /** SHA-256 (hex) of the bundle revisions the plan was built from. */
  revisions: string;
  /** Events of the profile guarded by an enabled `fail_closed` hook. */
  failClosedEvents: readonly string[];
}

/** What `--on-error auto` resolves to for one event, and why (the stderr line says it). */
export interface FailDecision {
  mode: "block" | "warn";
  why: string;
}

const FORMAT = 1;
/** A guard file is a few hundred bytes; anything near this is not ours. */
const MAX_FILE_BYTES = 256 * 1024;
const MAX_EVENTS = 4096;
const MAX_NAME = 256;

/** The guard facts an envelope carries, or undefined (an older server, or a malformed member: never stored). */
export function guardOf(answer: unknown): GuardFacts | undefined {
  const guard = (answer as { guard?: unknown } | null)?.guard;
  if (typeof guard !== "object" || guard === null) return undefined;
  const { revisions, fail_closed_events: events } = guard as { revisions?: unknown; fail_closed_events?: unknown };
  if (typeof revisions !== "string" || revisions.length === 0 || revisions.length > MAX_NAME) return undefined;
  if (!Array.isArray(events) || events.length > MAX_EVENTS) return undefined;
  if (!events.every((e): e is string => typeof e === "string" && e.length > 0 && e.length <= MAX_NAME)) return undefined;
  return { revisions, failClosedEvents: [...new Set(events)].sort() };
}

/** `$XDG_CACHE_HOME/vcp-hooks` (an absolute XDG_CACHE_HOME only, as the XDG spec says), else `~/.cache/vcp-hooks`. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env["XDG_CACHE_HOME"];
  return join(xdg !== undefined && xdg !== "" && isAbsolute(xdg) ? xdg : join(env["HOME"] || homedir(), ".cache"), "vcp-hooks");
}

/** The guard file of one (server, profile): `guard-<FNV-1a 64 of "<server href>\n<profile>">.json`. */
export function guardPath(server: string, profile: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheDir(env), `guard-${fnv1a64(`${server}\n${profile}`)}.json`);
}

function fnv1a64(text: string): string {
  let hash = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(text, "utf8")) hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return hash.toString(16).padStart(16, "0");
}

/** The stored facts for (server, profile); undefined when there is no file or it cannot be trusted to be ours. */
export function readGuard(server: string, profile: string, env: NodeJS.ProcessEnv = process.env): GuardFacts | undefined {
  let fd: number;
  try {
    // SECURITY: no symlink is followed and nothing but a regular file is read (a FIFO would block).
    fd = openSync(guardPath(server, profile, env), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAX_FILE_BYTES) return undefined;
    const bytes = Buffer.alloc(st.size);
    let off = 0;
    while (off < st.size) {
      const n = readSync(fd, bytes, off, st.size - off, off);
      if (n === 0) break;
      off += n;
    }
    const doc = JSON.parse(bytes.subarray(0, off).toString("utf8")) as { format?: unknown; server?: unknown; profile?: unknown; guard?: unknown };
    if (doc.format !== FORMAT || doc.server !== server || doc.profile !== profile) return undefined;
    return guardOf(doc);
  } catch {
    // Corrupt or half-read: as if there were none.
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * Store the facts of a successful answer, atomically (a temporary file renamed over the old one), and
 * only when they changed. Never throws: the agent's answer does not depend on the cache.
 */
export function writeGuard(server: string, profile: string, facts: GuardFacts, env: NodeJS.ProcessEnv = process.env): void {
  try {
    const known = readGuard(server, profile, env);
    if (known !== undefined && known.revisions === facts.revisions && sameList(known.failClosedEvents, facts.failClosedEvents)) return;
    const dir = cacheDir(env);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = guardPath(server, profile, env);
    const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
    const doc = { format: FORMAT, server, profile, written_at: new Date().toISOString(), guard: { revisions: facts.revisions, fail_closed_events: facts.failClosedEvents } };
    // SECURITY: 'wx' never follows or reuses an entry planted under the temporary name.
    writeFileSync(tmp, `${JSON.stringify(doc)}\n`, { mode: 0o600, flag: "wx" });
    renameSync(tmp, file);
  } catch {
    // A read-only or full disk: the next answer tries again.
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Where the guard facts came from, in the words the stderr line uses. */
export interface GuardSource {
  /** e.g. "the last plan seen from this server" */
  plan: string;
  /** e.g. "no plan of this server is known yet" */
  none: string;
}

const SERVER_SOURCE: GuardSource = { plan: "the last plan seen from this server", none: "no plan of this server is known yet" };

/**
 * `--on-error auto` for one event: block when the last plan seen from this server guards the event with
 * a `fail_closed` hook, warn when it does not; with no plan seen (no file), block the tool events
 * ({@link isToolEvent}) and warn for the rest. `known` is what the caller knows (the server's guard file,
 * or the embedded runtime's bundles); `source` says where it came from.
 *
 * @example
 * decideFailure("gemini-cli", "BeforeTool", readGuard(url, "gemini-cli")); // { mode: "block", why: "…" }
 */
export function decideFailure(profile: string, event: string | undefined, known: GuardFacts | undefined, source: GuardSource = SERVER_SOURCE): FailDecision {
  if (event === undefined) return { mode: "warn", why: "the event is unknown" };
  if (known !== undefined) {
    return known.failClosedEvents.includes(event)
      ? { mode: "block", why: `${event} is guarded by a fail_closed hook in ${source.plan}` }
      : { mode: "warn", why: `no fail_closed hook guards ${event} in ${source.plan}` };
  }
  return isToolEvent(profile, event)
    ? { mode: "block", why: `${event} runs before a tool and ${source.none}` }
    : { mode: "warn", why: `${event} is not a tool event and ${source.none}` };
}
