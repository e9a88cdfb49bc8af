/**
 * Shared plumbing of the `vcp-hooks` commands: argument parsing (node:util parseArgs, strict),
 * output (human text on stdout, `--json` for machines, progress on stderr), exit codes and the
 * error report. Every command is `(args, io) => Promise<exit code>`; nothing here calls process.exit,
 * so commands run the same inside tests.
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { messageWithCauses, VcpError } from "../index.js";

/** Exit codes of DESIGN §6.1. */
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** A command line that cannot be run as given: exit 2, the message, and a pointer to --help. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** Where a command writes. `json` is the global `--json` flag. */
export interface Io {
  readonly json: boolean;
  /** Human output, or the one JSON document with --json. */
  out(text: string): void;
  /** Diagnostics and progress; never parsed by machines. */
  err(text: string): void;
}

export function processIo(json: boolean): Io {
  // SECURITY: the last line of defence for every command: whatever a command forgot to escape, no
  // control character but a line break or a tab reaches the terminal (guest logs, reasons and errors
  // print here). JSON documents pass unchanged: printJson leaves no raw control characters in them.
  const write = (stream: NodeJS.WriteStream, text: string): void => {
    const safe = escapeControlKeepLines(text);
    stream.write(safe.endsWith("\n") ? safe : `${safe}\n`);
  };
  return {
    json,
    out: (text) => write(process.stdout, text),
    err: (text) => write(process.stderr, text),
  };
}

// ── terminal escaping ────────────────────────────────────────────────────────────────────────────
// A terminal acts on C0 controls (ESC starts a sequence: cursor moves, colours, window titles, OSC 52
// clipboard writes), DEL, and C1 controls (U+009B is a one-character CSI). Text a guest or an input
// file controls is shown with each such character spelled out, so it can neither drive the terminal
// nor forge lines of the report.
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/g;
const CONTROL_CHARS_BUT_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
const C1_AND_DEL = /[\u007f-\u009f]/g;

function spellOut(c: string): string {
  if (c === "\n") return "\\n";
  if (c === "\r") return "\\r";
  if (c === "\t") return "\\t";
  return `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`;
}

/**
 * One line of guest- or input-controlled text for human output: every control character (C0
 * including line breaks, DEL, C1) becomes a visible escape (`\x1b`, `\n`).
 *
 * @example
 * ```ts
 * io.out(`reason: ${escapeControl(hook.reason)}`); // "\u001b[2J" prints as "\x1b[2J"
 * ```
 */
export function escapeControl(text: string): string {
  return text.replace(CONTROL_CHARS, spellOut);
}

/** As {@link escapeControl}, but line breaks and tabs stay: for whole multi-line reports. */
export function escapeControlKeepLines(text: string): string {
  return text.replace(CONTROL_CHARS_BUT_LINES, spellOut);
}

/** Progress line on stderr (long work: building, starting the sandbox). */
export function progress(io: Io, text: string): void {
  io.err(`… ${text}`);
}

/** Print a JSON document (with --json) on stdout. */
export function printJson(io: Io, value: unknown): void {
  // JSON.stringify escapes C0 but leaves DEL and C1 raw; \u escapes keep the document valid JSON.
  io.out(JSON.stringify(value, null, 2).replace(C1_AND_DEL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`));
}

export interface Command {
  readonly name: string;
  /** One line for the overall help. */
  readonly summary: string;
  /** Full `--help` text. */
  readonly usage: string;
  run(args: string[], io: Io): Promise<number>;
}

type Options = NonNullable<ParseArgsConfig["options"]>;

/** Options every command accepts. */
const COMMON_OPTIONS = {
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const satisfies Options;

/**
 * Strict parseArgs for one command: an unknown flag, a missing value or an extra positional is a
 * {@link UsageError} naming it. `help` and `json` are always accepted.
 */
export function parseCommand<O extends Options>(
  command: string,
  args: string[],
  options: O,
  positionals: { min: number; max: number; names: string },
): { values: Record<string, string | boolean | string[] | undefined>; positionals: string[]; help: boolean } {
  let parsed;
  try {
    parsed = parseArgs({ args, options: { ...COMMON_OPTIONS, ...options }, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(`${command}: ${describeParseError(err)}`);
  }
  const values = parsed.values as Record<string, string | boolean | string[] | undefined>;
  const help = values["help"] === true;
  if (!help) {
    const n = parsed.positionals.length;
    if (n < positionals.min) throw new UsageError(`${command}: missing ${positionals.names}`);
    if (n > positionals.max) throw new UsageError(`${command}: unexpected argument '${parsed.positionals[positionals.max]}'`);
  }
  return { values, positionals: parsed.positionals, help };
}

function describeParseError(err: unknown): string {
  const e = err as { code?: string; message?: string };
  const message = e.message ?? String(err);
  // "Unknown option '--foo'…", "Option '-o, --out <value>' argument missing": name the long form.
  const quoted = /'([^']*)'/.exec(message)?.[1] ?? "";
  const flag = /--[^\s,<]+/.exec(quoted)?.[0] ?? /-[^\s,<]+/.exec(quoted)?.[0];
  switch (e.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return `unknown option '${flag ?? message}'`;
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      return /argument missing/.test(message) ? `option '${flag ?? "?"}' needs a value` : `option '${flag ?? "?"}' does not take a value`;
    default:
      return message;
  }
}

/** The value of a string option, or undefined; an option given twice is a usage error. */
export function stringOption(command: string, values: Record<string, unknown>, name: string): string | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw new UsageError(`${command}: option '--${name}' needs a value`);
  return value;
}

export function requireOption(command: string, values: Record<string, unknown>, name: string): string {
  const value = stringOption(command, values, name);
  if (value === undefined || value === "") throw new UsageError(`${command}: option '--${name}' is required`);
  return value;
}

/** `CODE: message` for a VcpError, the message and its causes for anything else ("fetch failed: getaddrinfo ENOTFOUND …"). */
export function describeError(err: unknown): string {
  if (err instanceof VcpError) return `${err.code}: ${err.message}`;
  return messageWithCauses(err);
}

/** The JSON form of an error (DESIGN §6.2's error shape). */
export function errorJson(err: unknown): { error: { code: string; message: string; details?: unknown } } {
  if (err instanceof VcpError) return { error: { code: err.code, message: err.message, ...(err.details !== undefined ? { details: err.details } : {}) } };
  if (err instanceof UsageError) return { error: { code: "USAGE", message: err.message } };
  if (err instanceof CheckFailed) return { error: { code: err.code, message: err.message } };
  return { error: { code: "INTERNAL", message: err instanceof Error ? err.message : String(err) } };
}

/** A failed check that is not a VcpError (file exists, test failed, …): exit 1 with this message. */
export class CheckFailed extends Error {
  override readonly name = "CheckFailed";
  constructor(
    message: string,
    readonly code = "CHECK_FAILED",
  ) {
    super(message);
  }
}
